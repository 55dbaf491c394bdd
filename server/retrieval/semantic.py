"""`cosine_exact_v1` (DESIGN §7): exact cosine over every live binding of one space.

The reported cosine of a record is the float64 dot product of its stored unit row (float32,
normalized in float64) with the float64 unit query, clamped to [-1, 1]; `exact_cosines` computes
it row by row with numpy's per-row summation, so a value never depends on where the row sits in
the matrix or how many rows are computed together. The float32 matrix-vector product is only a
prefilter: every row whose float32 score is within a proven error margin of the limit-th best is
recomputed exactly, so the float32 rounding can neither drop a hit nor order a tie.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from server.retrieval.indexes import ScopeIndex, SpaceMatrix
from server.retrieval.ranking import top_by_score

_UNIT_ROUNDOFF_32 = 2.0 ** -24


@dataclass(frozen=True)
class Query:
    space: SpaceMatrix
    unit64: np.ndarray
    unit32: np.ndarray


@dataclass(frozen=True)
class SemanticRanking:
    ids: list[str]
    scores: list[float]
    scored: int  # live bindings scored


def prepare_query(space: SpaceMatrix, vector: np.ndarray) -> Query:
    v64 = np.asarray(vector, dtype=np.float32).astype(np.float64)
    unit64 = v64 / np.sqrt(np.dot(v64, v64))
    return Query(space, unit64, unit64.astype(np.float32))


def exact_cosines(query: Query, rows: np.ndarray) -> np.ndarray:
    products = query.space.rows[rows].astype(np.float64) * query.unit64
    return np.clip(products.sum(axis=1), -1.0, 1.0)


def cosine(index: ScopeIndex, query: Query, limit: int, min_score: float) -> SemanticRanking:
    space = query.space
    live_rows = np.flatnonzero(space.live[: space.count])
    if len(live_rows) > 2 * limit + 64:
        approx = space.rows[live_rows] @ query.unit32 if len(live_rows) < space.count else (
            space.rows[: space.count] @ query.unit32)
        kth = approx[np.argpartition(-approx, limit - 1)[limit - 1]]
        # |float32 dot - exact| <= (d + 2) u for unit vectors; twice that is a safe margin.
        margin = 2.0 * (space.dimensions + 2) * _UNIT_ROUNDOFF_32
        candidates = live_rows[approx >= kth - margin]
    else:
        candidates = live_rows
    exact = exact_cosines(query, candidates)
    keep = exact >= min_score
    candidates, exact = candidates[keep], exact[keep]
    id_rank = index.id_rank()[space.row_slots[candidates]]
    best = top_by_score(exact, id_rank, limit)
    return SemanticRanking(
        ids=[index.slot_ids[s] for s in space.row_slots[candidates[best]].tolist()],
        scores=exact[best].tolist(),
        scored=len(live_rows),
    )
