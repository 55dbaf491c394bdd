"""Recall at each recall cutoff (judged_recall's arithmetic); at k the report already holds it as
`judged_recall@k`, so it is not repeated there."""

from __future__ import annotations

from protocols.metrics._base import JUDGMENTS, Metric
from protocols.metrics.judged_recall import recall

METRIC = Metric("recall", recall, "R", JUDGMENTS, needs_depth=True, position=30, standard=True,
                at_k_as="judged_recall")
