"""All supports at k: 1 when every relevant document is in the top k, else 0 (0 for a query with none)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocols.metrics._base import JUDGMENTS, Metric
from protocols.metrics.judged_recall import relevant


def all_supports(ranking: Sequence[str], judgments: Mapping[str, int], k: int) -> float:
    wanted = relevant(judgments)
    return 1.0 if wanted and wanted.issubset(ranking[:k]) else 0.0


METRIC = Metric("all_supports", all_supports, "all supports", JUDGMENTS, needs_depth=False, position=40,
                standard=True)
