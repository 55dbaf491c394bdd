"""Full chain hit at k: 1 when every evidence-chain slot's document is in the top k, else 0."""

from __future__ import annotations

from collections.abc import Sequence

from protocols.metrics._base import CHAIN, Metric


def full_chain_hit(ranking: Sequence[str], chain: Sequence[str], k: int) -> float:
    return 1.0 if chain and set(chain).issubset(ranking[:k]) else 0.0


METRIC = Metric("full_chain_hit", full_chain_hit, "full chain", CHAIN, needs_depth=False, position=70, standard=True)
