"""The int8 prefilter of `cosine_exact_v1` never changes a result (server/retrieval/cosine.py).

Every test compares the served top k (ids, float scores, tie order) with a float64 brute force
over every live row, on corpora built to sit on the prefilter's edge: exact duplicates under
different ids, rows one float32 ulp apart, a crowd of near-equal cosines straddling the cut,
stale rows, and min_score thresholds. The bound itself is checked row by row.
"""

from __future__ import annotations

import numpy as np
import pytest

from server.retrieval import cosine as cosine_module
from server.retrieval.cosine import candidate_rows, cosine, exact_cosines, prepare_query, quantized_bounds
from server.retrieval.indexes import Indexes, ScopeIndex

SPACE = "space-" + "b" * 64


@pytest.fixture(autouse=True)
def always_quantized(monkeypatch):
    # the int8 path normally starts at 8,192 rows; small corpora keep this suite fast
    monkeypatch.setattr(cosine_module, "QUANTIZED_MIN_ROWS", 0)


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def build(vectors: np.ndarray, ids: list[str] | None = None, rng: np.random.Generator | None = None) -> ScopeIndex:
    index = Indexes().scope("s")
    ids = ids or [f"mem-{i:06d}" for i in range(len(vectors))]
    order = np.arange(len(vectors)) if rng is None else rng.permutation(len(vectors))  # arrival order is irrelevant
    for i in order.tolist():
        index.put_memory(ids[i], 1, "x")
        index.put_binding(ids[i], 1, SPACE, vectors[i])
    return index


def brute_force(index: ScopeIndex, q: np.ndarray, limit: int, min_score: float = -1.0) -> list[tuple[str, float]]:
    space = index.spaces[SPACE]
    query = prepare_query(space, q)
    rows = np.flatnonzero(space.live[: space.count])
    exact = exact_cosines(query, rows)
    pairs = [(index.slot_ids[space.row_slots[r]], s) for r, s in zip(rows.tolist(), exact.tolist()) if s >= min_score]
    return sorted(pairs, key=lambda p: (-p[1], p[0]))[:limit]


def served(index: ScopeIndex, q: np.ndarray, limit: int, min_score: float = -1.0) -> list[tuple[str, float]]:
    ranking = cosine(index, prepare_query(index.spaces[SPACE], q), limit, min_score)
    return list(zip(ranking.ids, ranking.scores))


def near_tie_corpus(seed: int, dim: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose cosines with the query crowd around the cut within ~1e-7, plus noise rows."""
    rng = np.random.default_rng(seed)
    q = unit(rng.standard_normal(dim))
    rows = [unit(rng.standard_normal(dim)) for _ in range(n // 2)]
    target = 0.6
    for _ in range(n - len(rows)):
        noise = rng.standard_normal(dim)
        noise -= noise.dot(q.astype(np.float64)) * q
        noise /= np.linalg.norm(noise)
        cos = target + rng.choice([0.0, 1e-8, -1e-8, 1e-7, 3e-7])
        rows.append(unit(cos * q + np.sqrt(1 - cos * cos) * noise))
    vectors = np.stack(rows)
    vectors[-20:] = vectors[-40:-20]  # exact duplicates under other ids
    bumped = vectors[-60:-40].copy()
    bumped[:, 0] = np.nextafter(bumped[:, 0], np.float32(2.0))  # one float32 ulp apart
    vectors[-80:-60] = bumped
    return vectors, q


@pytest.mark.parametrize("seed", range(4))
def test_near_tie_crowd_equals_brute_force(seed):
    vectors, q = near_tie_corpus(seed, dim=48, n=1000)
    index = build(vectors, rng=np.random.default_rng(seed))
    for limit in (1, 10, 100):
        assert served(index, q, limit) == brute_force(index, q, limit)


def test_bound_holds_for_every_row():
    rng = np.random.default_rng(11)
    for dim in (8, 96, 384):
        vectors = np.stack([unit(rng.standard_normal(dim)) for _ in range(400)])
        vectors[:50] = unit(np.ones(dim))  # a flat row: worst case of int8 coding
        vectors[50:100] = unit(np.eye(dim)[0] + 1e-3)  # one dominant coordinate
        index = build(vectors)
        space = index.spaces[SPACE]
        for q in (rng.standard_normal(dim), np.ones(dim), np.eye(dim)[1]):
            query = prepare_query(space, q.astype(np.float32))
            approx, bound = quantized_bounds(query)
            exact = exact_cosines(query, np.arange(space.count))
            # the served cosine is clamped to [-1, 1], and so are the bounds the prefilter uses
            assert np.all(np.clip(approx - bound, -1, 1) <= exact)
            assert np.all(exact <= np.clip(approx + bound, -1, 1))


def test_rows_just_above_one_tie_at_one_and_order_by_id():
    dim = 16
    flat = np.full(dim, 0.25, dtype=np.float32)  # norm exactly 1, coded without residual
    rows = [flat.copy() for _ in range(40)]
    for i in range(40):
        rows[i][i % dim] = np.nextafter(rows[i][i % dim], np.float32(1.0)) if i % 2 else rows[i][i % dim]
    rng = np.random.default_rng(2)
    vectors = np.stack(rows + [unit(rng.standard_normal(dim)) for _ in range(600)])
    ids = [f"mem-{(7919 * i) % 1000:06d}" for i in range(len(vectors))]
    index = build(vectors, ids)
    for limit in (1, 5, 20, 39, 40):
        assert served(index, flat, limit) == brute_force(index, flat, limit)


def test_duplicates_straddling_the_cut_order_by_id():
    rng = np.random.default_rng(3)
    dim = 32
    q = unit(rng.standard_normal(dim))
    same = unit(q + 0.5 * unit(rng.standard_normal(dim)))
    vectors = np.stack([same] * 30 + [unit(rng.standard_normal(dim)) for _ in range(900)])
    ids = [f"mem-{(977 * i) % 1000:06d}" for i in range(len(vectors))]  # duplicates' ids are not in row order
    index = build(vectors, ids)
    for limit in (5, 29, 30, 31):
        assert served(index, q, limit) == brute_force(index, q, limit)


def test_stale_rows_and_min_score():
    vectors, q = near_tie_corpus(5, dim=40, n=800)
    index = build(vectors)
    for i in range(0, 800, 7):  # updating a memory makes its binding stale
        index.put_memory(f"mem-{i:06d}", 2, "y")
    for min_score in (-1.0, 0.0, 0.59999, 0.6, 0.9):
        for limit in (10, 100):
            assert served(index, q, limit, min_score) == brute_force(index, q, limit, min_score)
    space = index.spaces[SPACE]
    rows, scored = candidate_rows(prepare_query(space, q), 10, -1.0)
    assert scored == space.live_count() and np.all(space.live[rows])


def test_prefilter_reads_few_rows_on_spread_data():
    """The point of the prefilter: on ordinary data it rescores a small fraction exactly."""
    rng = np.random.default_rng(9)
    vectors = np.stack([unit(v) for v in rng.standard_normal((3000, 128))])
    index = build(vectors)
    q = unit(rng.standard_normal(128))
    rows, _ = candidate_rows(prepare_query(index.spaces[SPACE], q), 10, -1.0)
    assert len(rows) < 300
    assert served(index, q, 10) == brute_force(index, q, 10)


def test_both_prefilters_agree_with_brute_force_on_random_queries(monkeypatch):
    rng = np.random.default_rng(13)
    vectors = np.stack([unit(v) for v in rng.standard_normal((1500, 64))])
    index = build(vectors)
    queries = [unit(rng.standard_normal(64)) for _ in range(10)]
    for threshold in (0, 10**9):  # int8, then float32 prefilter
        monkeypatch.setattr(cosine_module, "QUANTIZED_MIN_ROWS", threshold)
        for q in queries:
            assert served(index, q, 100) == brute_force(index, q, 100)
