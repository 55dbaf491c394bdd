"""No support at k: 1 when no relevant document is in the top k, else 0 (1 - Success@k)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocols.metrics._base import JUDGMENTS, Metric
from protocols.metrics.judged_recall import relevant


def no_support(ranking: Sequence[str], judgments: Mapping[str, int], k: int) -> float:
    return 0.0 if relevant(judgments).intersection(ranking[:k]) else 1.0


METRIC = Metric("no_support", no_support, "no support", JUDGMENTS, needs_depth=False, position=50, standard=True)
