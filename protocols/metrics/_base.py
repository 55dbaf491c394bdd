"""What a metric declaration holds (protocols/metrics/__init__.py collects one per module).

A metric is read per query from the ranking (document ids, best first) and one of the query's two
labels: its judgments (document id -> grade) or its evidence chain (the supporting document of
each step, in order). Its value at a cutoff is a plain float.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

JUDGMENTS = "judgments"
CHAIN = "chain"

# (ranking, the label it reads, cutoff) -> value; the label is judgments (a mapping) or a chain (a
# sequence), as `reads` says, which a type cannot tie to the function, hence Any
PerQuery = Callable[[Sequence[str], Any, int], float]


@dataclass(frozen=True)
class Metric:
    """One metric: its name (the part before `@` in a report's `name@cutoff`), its per-query function,
    the label tables print, and where it is read.

    - `reads`: JUDGMENTS or CHAIN, the label passed to `per_query`.
    - `needs_depth`: False, read at `evaluation.k` only; True, read at every `evaluation.recall_cutoffs`
      entry, which reach `evaluation.depth` on a deeper protocol (so its methods must return that many).
    - `at_k_as`: a depth metric whose value at k another declaration already reports under its own
      name (recall at k is `judged_recall@k` in every frozen report) skips k, so no column is twice.
    - `standard`: computed for every protocol. Every frozen report holds exactly the standard
      metrics, so a metric added later is not standard: a protocol asks for it by name in
      `evaluation.metrics`, and no report frozen before it changes by a byte.
    - `position`: the column order of reports and tables (ascending); a new metric takes a larger one.
    """

    name: str
    per_query: PerQuery
    label: str
    reads: str
    needs_depth: bool
    position: int
    standard: bool = False
    at_k_as: str | None = None

    def value(self, ranking: Sequence[str], judgments: Mapping[str, int], chain: Sequence[str], cutoff: int) -> float:
        return float(self.per_query(ranking, judgments if self.reads == JUDGMENTS else chain, cutoff))

    def cutoffs(self, k: int, recall_cutoffs: Sequence[int]) -> tuple[int, ...]:
        """The cutoffs this metric is reported at, in the protocol's order."""
        if not self.needs_depth:
            return (k,)
        return tuple(c for c in recall_cutoffs if not (self.at_k_as and c == k))
