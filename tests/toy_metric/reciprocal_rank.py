"""Reciprocal rank at k: 1 / the rank of the first relevant document in the top k, 0 when none is
there (the toy metric that tests/protocols/test_metric_registry.py adds through docs/extend-a-metric.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocols.metrics._base import JUDGMENTS, Metric


def reciprocal_rank(ranking: Sequence[str], judgments: Mapping[str, int], k: int) -> float:
    for rank, doc in enumerate(ranking[:k], start=1):
        if judgments.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


METRIC = Metric("reciprocal_rank", reciprocal_rank, "RR", JUDGMENTS, needs_depth=False, position=80)
