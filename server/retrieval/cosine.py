"""`cosine_exact_v1` (docs/design.md §7): exact cosine over every live binding of one space.

The reported cosine of a record is the float64 dot product of its stored unit row (float32,
normalized in float64) with the float64 unit query, clamped to [-1, 1]; `exact_cosines` computes
it row by row with numpy's per-row summation, so a value never depends on where the row sits in
the matrix or how many rows are computed together.

Everything before that exact rescoring is a prefilter that may only discard rows it has proved
cannot reach the top `limit`:

- large spaces (`QUANTIZED_MIN_ROWS` rows and more): an int8 scan. Each row r is stored as an
  int8 code c_r with a scale s_r, its residual norm e_r = |x_r - s_r c_r| and its code norm
  m_r = |s_r c_r|; the query q is coded the same way (s_q, c_q, residual e_q). The integer
  product c_r . c_q is exact (int32 accumulation in numkong's SIMD kernel), and
  |x_r . q - s_r s_q (c_r . c_q)| <= e_r |q| + m_r e_q (Cauchy-Schwarz twice). That bound, widened
  by a relative 1e-6 and an absolute 1e-12 to cover every float64 rounding (the exact cosine's own
  summation error is below 1e-13 for unit vectors), gives each row a lower and an upper bound.
  Both bounds are clamped to [-1, 1] like the cosine itself (clamping is monotone).
  A row whose upper bound is below the limit-th best lower bound is strictly below the limit-th
  best exact cosine, so it can be neither a hit nor a tie at the cut; every other live row is
  rescored exactly. The scan reads a quarter of the float32 matrix.
- small spaces: a float32 matrix-vector product with the margin 2 (d + 2) 2^-24, as before
  (cheaper than the int8 path's fixed costs below a few thousand rows; measured in
  docs/retrieval.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numkong
import numpy as np

from server.retrieval.indexes import ScopeIndex, SpaceMatrix, quantize_row
from server.retrieval.ranking import top_by_score

_UNIT_ROUNDOFF_32 = 2.0 ** -24
QUANTIZED_MIN_ROWS = 8192  # below this the float32 prefilter is as fast (docs/retrieval.md)
_BOUND_RELATIVE = 1.0 + 1e-6
_BOUND_ABSOLUTE = 1e-12
_FLOAT32_EXACT_DIMENSIONS = 1040  # d * 127^2 < 2^24: integer products exact in float32


@dataclass(frozen=True)
class QueryCode:
    code: np.ndarray  # int8 code of the unit query
    scale: float
    residual: float  # |unit64 - scale * code|
    norm: float  # |unit64| (1 up to rounding)


@dataclass(frozen=True)
class Query:
    space: SpaceMatrix
    unit64: np.ndarray
    unit32: np.ndarray

    @cached_property
    def coded(self) -> QueryCode:
        """The int8 form, computed only when the int8 prefilter runs (small spaces never need it)."""
        code, scale, residual, _ = quantize_row(self.unit64)
        return QueryCode(code, scale, residual, float(np.linalg.norm(self.unit64)))


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


def nearest(space: SpaceMatrix, rows: np.ndarray, vectors: list[np.ndarray],
            tie: Callable[[int], Any] | None = None) -> list[tuple[int, float]]:
    """For each vector, the position in `rows` of its highest exact cosine (cosine_exact_v1), ties by
    position (or by `tie(position)` when given), and that cosine: a float32 product ranks every row,
    and the exact cosine decides among those within twice the float32 bound of the best (the
    small-space prefilter's margin), so the answer is the one exact cosines of every row give."""
    if not vectors:
        return []
    margin = 2.0 * (space.dimensions + 2) * _UNIT_ROUNDOFF_32
    queries = [prepare_query(space, vector) for vector in vectors]
    estimates = space.rows[rows] @ np.stack([q.unit32 for q in queries]).T  # only the candidate rows
    found = []
    for query, estimate in zip(queries, estimates.T):
        close = np.flatnonzero(estimate >= estimate.max() - 2 * margin)
        exact = exact_cosines(query, rows[close])
        first = int(np.lexsort((close, -exact))[0])
        if tie is not None:  # among the rows of exactly the best cosine, the tie's order decides
            level = exact[first]
            first = min((i for i in range(len(close)) if exact[i] == level), key=lambda i: tie(int(close[i])))
        found.append((int(close[first]), float(exact[first])))
    return found


def quantized_bounds(query: Query, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(approximate cosine, error bound) in float64 of the given rows (default: every row)."""
    space, coded = query.space, query.coded
    codes = space.codes[: space.count] if rows is None else space.codes[rows]
    pick = slice(0, space.count) if rows is None else rows
    dots = np.asarray(numkong.cdist(coded.code[None, :], codes, metric="dot"))[0]
    approx = dots * space.scales[pick]
    approx *= coded.scale
    bound = space.residuals[pick] * coded.norm
    bound += space.code_norms[pick] * coded.residual
    bound *= _BOUND_RELATIVE
    bound += _BOUND_ABSOLUTE
    return approx, bound


def _coarse_rows(query: Query, limit: int, live: np.ndarray, all_live: bool) -> np.ndarray | None:
    """First pass over every row, in float32 with one error bound for all rows: the rows that may
    still be in the top `limit`. None means keep every live row (a degenerate clamp case).

    The integer products are exact in float32 (|c . c_q| <= d * 127^2 < 2^24 for d <= 1,040; larger
    spaces skip this pass), and the float32 products with the scales are within a relative
    3 * 2^-24 of their float64 values, covered by the 1e-6 slack. With E = the largest per-row bound
    of the space, the limit-th best approximate score minus E is below the limit-th best cosine, and
    a row more than 2E below it is strictly below that cosine. Clamping could only make two such
    values tie at 1 (or at -1), so rows that may reach 1 are kept, and a limit-th best that may be
    at -1 keeps everything.
    """
    space, coded = query.space, query.coded
    n = space.count
    dots = np.asarray(numkong.cdist(coded.code[None, :], space.codes[:n], metric="dot", out_dtype="float32"))[0]
    approx = dots * space.scales32[:n]
    approx *= np.float32(coded.scale)
    if not all_live:
        approx[~live] = -np.inf
    widest = (space.max_residual * coded.norm + space.max_code_norm * coded.residual) * _BOUND_RELATIVE + 1e-6
    kth = float(approx[np.argpartition(-approx, limit - 1)[limit - 1]])
    if kth - widest <= -1.0:
        return None
    keep = approx >= min(kth - 2.0 * widest, 1.0 - widest)
    if not all_live:
        keep &= live
    return np.flatnonzero(keep)


def _quantized_candidates(query: Query, limit: int, min_score: float, live: np.ndarray, all_live: bool) -> np.ndarray:
    rows = _coarse_rows(query, limit, live, all_live) if query.space.dimensions <= _FLOAT32_EXACT_DIMENSIONS else None
    if rows is None:
        rows = np.flatnonzero(live)
    # Second pass, on the surviving rows only: each row's own float64 bound. The limit-th best lower
    # bound over these rows is the limit-th best over all live rows (a row the first pass dropped
    # has every bound below the limit rows that fix this one).
    approx, bound = quantized_bounds(query, rows)
    # The reported cosine is clamped to [-1, 1]; clamping is monotone, so clamped bounds bound
    # the clamped value (two rows just above 1 tie at 1.0 and must both reach the id order).
    lower = np.clip(approx - bound, -1.0, 1.0)
    kth_lower = lower[np.argpartition(-lower, limit - 1)[limit - 1]]
    upper = approx
    upper += bound
    np.clip(upper, -1.0, 1.0, out=upper)
    return rows[upper >= max(kth_lower, min_score)]


def _float32_candidates(query: Query, limit: int, live_rows: np.ndarray) -> np.ndarray:
    space = query.space
    approx = space.rows[live_rows] @ query.unit32 if len(live_rows) < space.count else (
        space.rows[: space.count] @ query.unit32)
    kth = approx[np.argpartition(-approx, limit - 1)[limit - 1]]
    # |float32 dot - exact| <= (d + 2) u for unit vectors; twice that is a safe margin.
    margin = 2.0 * (space.dimensions + 2) * _UNIT_ROUNDOFF_32
    return live_rows[approx >= kth - margin]


def candidate_rows(query: Query, limit: int, min_score: float) -> tuple[np.ndarray, int]:
    """(rows that may be in the top `limit`, live rows scored): every row not proved out."""
    space = query.space
    live = space.live[: space.count]
    live_count = int(np.count_nonzero(live))
    if live_count <= 2 * limit + 64:
        return np.flatnonzero(live), live_count
    if space.count >= QUANTIZED_MIN_ROWS:
        return _quantized_candidates(query, limit, min_score, live, live_count == space.count), live_count
    return _float32_candidates(query, limit, np.flatnonzero(live)), live_count


def cosine(index: ScopeIndex, query: Query, limit: int, min_score: float) -> SemanticRanking:
    space = query.space
    candidates, scored = candidate_rows(query, limit, min_score)
    exact = exact_cosines(query, candidates)
    keep = exact >= min_score
    candidates, exact = candidates[keep], exact[keep]
    id_rank = index.id_rank()[space.row_slots[candidates]]
    best = top_by_score(exact, id_rank, limit)
    return SemanticRanking(
        ids=[index.slot_ids[s] for s in space.row_slots[candidates[best]].tolist()],
        scores=exact[best].tolist(),
        scored=scored,
    )
