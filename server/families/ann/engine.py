"""One HNSW index per (scope, space), built with faiss (`IndexHNSWFlat`, inner product on unit rows).

The index is derived like every other index: built from the current bindings only (the float32
unit rows the exact cosine reads), added in ascending record-id order with one thread. faiss draws
each node's HNSW level from a generator with a fixed seed and links nodes in insertion order, so a
single-threaded build from the same rows in the same order is the same graph, bit for bit
(tests/server/families/test_ann.py builds two indexes from different arrival orders and compares pages byte for
byte; docs/scale.md has the engine comparison, including Qdrant's embedded engine, whose build
was measured not to be reproducible). The index is built on the first ANN search of a lab
process and rebuilt, from scratch and in the same order, on the first ANN search after any change
of the space (every write marks it stale): a graph patched write by write would depend on the
write history, and nothing is persisted, so a restarted lab rebuilds it from RocksDB.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import faiss
import numpy as np

from server.retrieval.indexes import ScopeIndex, SpaceMatrix


@dataclass(frozen=True)
class Built:
    version: int  # SpaceMatrix.version it was built from
    index: faiss.IndexHNSWFlat
    rows: np.ndarray  # faiss label -> matrix row
    seconds: float


class HnswIndex:
    """The HNSW lane of one space of one scope."""

    def __init__(self, profile: dict) -> None:
        self.profile = profile
        self._built: Built | None = None
        self._lock = threading.Lock()

    def current(self, index: ScopeIndex, space: SpaceMatrix) -> Built:
        """The index of the space as it is now (built, or rebuilt when the space changed)."""
        with self._lock:
            if self._built is None or self._built.version != space.version:
                self._built = None  # drop the old graph before building the new one (memory)
                self._built = build(index, space, self.profile)
            return self._built

    def search(self, built: Built, unit32: np.ndarray, limit: int) -> np.ndarray:
        """Matrix rows of the engine's top `limit` (its own order and scores are not used)."""
        if built.index.ntotal == 0:
            return np.zeros(0, dtype=np.int64)
        # faiss-cpu's bundled stubs omit this SWIG class, which exists at run time (tests/server/families/test_ann.py)
        params = faiss.SearchParametersHNSW(efSearch=max(self.profile["hnsw_ef"], limit))  # type: ignore[attr-defined]
        _, labels = built.index.search(unit32[None, :], min(limit, built.index.ntotal), params=params)
        labels = labels[0]
        return built.rows[labels[labels >= 0]]


def build(index: ScopeIndex, space: SpaceMatrix, profile: dict) -> Built:
    started = time.perf_counter()
    faiss.omp_set_num_threads(profile["indexing_threads"])
    live_rows = np.flatnonzero(space.live[: space.count])
    id_rank = index.id_rank()[space.row_slots[live_rows]]
    rows = live_rows[np.argsort(id_rank, kind="stable")]  # insertion order = record id order
    hnsw = faiss.IndexHNSWFlat(space.dimensions, profile["m"], faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = profile["ef_construct"]
    if len(rows):
        hnsw.add(np.ascontiguousarray(space.rows[rows]))
    return Built(space.version, hnsw, rows, time.perf_counter() - started)


def hnsw_index(index: ScopeIndex, space_id: str, profile_name: str, profile: dict) -> HnswIndex:
    """The scope's HNSW lane of a space (created empty on first use, built by `current`); the caller
    holds the scope's lock (server/routes.py takes it around every search)."""
    return index.derived_tables.kept(("ann", space_id, profile_name), lambda: HnswIndex(profile))
