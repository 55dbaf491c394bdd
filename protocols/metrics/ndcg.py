"""nDCG at k with exponential gain: DCG = sum over ranks r <= k of (2^grade - 1) / log2(r + 1); the
ideal DCG sorts the judged grades descending; an unjudged document has grade 0; 0 when the ideal is 0.
(tests/evaluator/numbers/test_metrics.py checks it against ir_measures' nDCG with gains 2^g - 1.)"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from protocols.metrics._base import JUDGMENTS, Metric


def dcg(grades: Iterable[int]) -> float:
    return sum((2.0 ** g - 1.0) / math.log2(rank + 1) for rank, g in enumerate(grades, start=1))


def ndcg(ranking: Sequence[str], judgments: Mapping[str, int], k: int) -> float:
    ideal = dcg(sorted((g for g in judgments.values() if g > 0), reverse=True)[:k])
    if ideal == 0.0:
        return 0.0
    return dcg(judgments.get(doc, 0) for doc in ranking[:k]) / ideal


METRIC = Metric("ndcg", ndcg, "nDCG", JUDGMENTS, needs_depth=False, position=10, standard=True)
