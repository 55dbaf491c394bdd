"""A difference between a page and its recomputation, named by query, method, rank and field.

Every check speaks one idiom: it is a generator of findings, `yield rank, field, message` for each
difference, where `rank` is the rank of the hit it concerns (None for what concerns the whole page, a
section of it or its relations) and `field` the page field, dotted down to the value that differs
(`channels.lexical.rank`, `hipporag2.dense_digest`). A check reports every difference it can name
independently; where a later step reads what an earlier one found wrong (the walk of a page whose
seeds differ), it stops after the earlier one (`return`), so that one cause is named once. A
check that also computes a value for its caller returns it (`value = yield from check(...)`).
The Checker turns each finding into a `Failure` of its query and method.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

Finding = tuple[int | None, str, str]  # (rank of the hit or None, page field, message)
Findings = Iterator[Finding]


@dataclass(frozen=True)
class Failure:
    query: str
    method: str
    rank: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"query {self.query}, method {self.method}" + (f", rank {self.rank}" if self.rank else "")
        return f"{where}, {self.field}: {self.message}"

    def as_dict(self) -> dict:
        return {"query": self.query, "method": self.method, "rank": self.rank, "field": self.field,
                "message": self.message}
