"""Judged recall at k: relevant documents (grade > 0) in the top k / all relevant documents; 0 when
the query has none. The same number as recall at k, reported under this name at k by every report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocols.metrics._base import JUDGMENTS, Metric


def relevant(judgments: Mapping[str, int]) -> set[str]:
    return {doc for doc, grade in judgments.items() if grade > 0}


def recall(ranking: Sequence[str], judgments: Mapping[str, int], cutoff: int) -> float:
    wanted = relevant(judgments)
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranking[:cutoff])) / len(wanted)


METRIC = Metric("judged_recall", recall, "judged R", JUDGMENTS, needs_depth=False, position=20, standard=True)
