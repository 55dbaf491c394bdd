"""A difference between a page and its recomputation, named by query, method, rank and field.

`fail(rank, field, message)` is how every check reports one: the rank of the hit it concerns (None
for what concerns the whole page, a section of it or its relations) and the page field, dotted
down to the value that differs (`channels.lexical.rank`, `hipporag2.dense_digest`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Fail = Callable[[int | None, str, str], None]


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
