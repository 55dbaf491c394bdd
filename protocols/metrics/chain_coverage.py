"""Chain coverage at k: the fraction of evidence-chain slots whose document is in the top k (0 for an
empty chain); a document that fills two slots counts twice."""

from __future__ import annotations

from collections.abc import Sequence

from protocols.metrics._base import CHAIN, Metric


def chain_coverage(ranking: Sequence[str], chain: Sequence[str], k: int) -> float:
    if not chain:
        return 0.0
    top = set(ranking[:k])
    return sum(1 for doc in chain if doc in top) / len(chain)


METRIC = Metric("chain_coverage", chain_coverage, "chain cov", CHAIN, needs_depth=False, position=60, standard=True)
