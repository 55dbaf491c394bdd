"""Tables a method derives from a scope's index (BM25 length norms, a graph family's node table, an
ANN lane), held in one kind of cache: each value is kept with the version of the index it was built
from and built again once that version moved, so a derived table is never read stale."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class DerivedTables:
    """`bound`: at most that many values are held; a full cache is cleared (a dropped value is only
    built again), which keeps per-term tables within memory."""

    def __init__(self, bound: int | None = None):
        self._held: dict[Hashable, tuple[int, Any]] = {}
        self._bound = bound

    def get(self, key: Hashable, version: int, build: Callable[[], T]) -> T:
        """The value under `key` built at `version`, building it (again) when absent or older."""
        held = self._held.get(key)
        if held is None or held[0] != version:
            if held is None and self._bound is not None and len(self._held) >= self._bound:
                self._held.clear()
            held = self._held[key] = (version, build())
        return held[1]

    def kept(self, key: Hashable, make: Callable[[], T]) -> T:
        """A value that keeps itself current across writes (an ANN lane catches up on use): made once."""
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = (0, make())
        return held[1]
