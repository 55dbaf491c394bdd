"""The ANN lane `cosine_hnsw_v1` (server/families/ann): exact scores, id tie order, current bindings only,
reproducible builds from record-id order, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

from ground.canonical import canonical
from server.errors import ApiError
from server.retrieval.cosine import exact_cosines, prepare_query
from server.retrieval.indexes import Indexes, ScopeIndex
from server.routes import search

SPACE = "space-" + "d" * 64
DIM = 16


def corpus(n: int = 800, seed: int = 1) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((12, DIM))
    vectors = centers[rng.integers(0, 12, n)] + 0.7 * rng.standard_normal((n, DIM))
    vectors[n - 10:] = vectors[n - 20:n - 10]  # exact duplicates under other ids: ties order by id
    return [f"mem-{(7919 * i) % 100003:032x}" for i in range(n)], vectors.astype(np.float32)


def build(ids, vectors, order) -> ScopeIndex:
    index = Indexes().scope("s")
    for i in order:
        index.put_memory(ids[i], 1, f"doc {i}")
        index.put_binding(ids[i], 1, SPACE, vectors[i], binding_id=f"emb-{i}")
    return index


def body(q, limit=10) -> dict:
    return {"query_vector": [float(x) for x in q], "space_id": SPACE, "limit": limit}


@pytest.fixture(scope="module")
def lane():
    ids, vectors = corpus()
    return ids, vectors, build(ids, vectors, range(len(ids)))


def brute(index: ScopeIndex, q, limit):
    space = index.spaces[SPACE]
    rows = np.flatnonzero(space.live[: space.count])
    exact = exact_cosines(prepare_query(space, q), rows)
    pairs = sorted(zip(exact.tolist(), [index.slot_ids[space.row_slots[r]] for r in rows.tolist()]),
                   key=lambda p: (-p[0], p[1]))
    return pairs[:limit]


def test_hits_carry_exact_cosines_in_score_then_id_order_with_high_recall(lane):
    ids, vectors, index = lane
    rng = np.random.default_rng(2)
    found = 0
    for _ in range(20):
        q = vectors[rng.integers(len(ids))] + 0.3 * rng.standard_normal(DIM).astype(np.float32)
        page = search(index, "ann", body(q, 10))
        assert page["method"] == "ann" and page["profile"] == "cosine_hnsw_v1"
        assert page["coverage"]["candidates"] is False
        space = index.spaces[SPACE]
        query = prepare_query(space, q)
        for hit in page["hits"]:
            row = space.bindings[hit["id"]].row
            assert hit["score"] == exact_cosines(query, np.array([row]))[0]
            assert hit["embedding_receipt"]["record_id"] == hit["id"]
        keys = [(-h["score"], h["id"]) for h in page["hits"]]
        assert keys == sorted(keys) and len(keys) == 10
        exact = brute(index, q, 10)
        found += len({h["id"] for h in page["hits"]} & {rid for _, rid in exact})
    assert found / 200 >= 0.95


def test_build_is_reproducible_from_record_id_order(lane):
    ids, vectors, index = lane
    other = build(ids, vectors, np.random.default_rng(3).permutation(len(ids)).tolist())  # other arrival order
    rng = np.random.default_rng(4)
    for _ in range(20):
        q = rng.standard_normal(DIM).astype(np.float32)
        assert canonical(search(index, "ann", body(q, 25))) == canonical(search(other, "ann", body(q, 25)))


def test_writes_rebuild_the_lane_and_stale_bindings_never_come_back():
    ids, vectors = corpus(300, seed=5)
    index = build(ids, vectors, range(len(ids)))
    q = vectors[7]
    first = search(index, "ann", body(q, 5))["hits"][0]
    assert first["id"] == ids[7] or first["score"] >= 0.999999
    index.put_memory(ids[7], 2, "updated")  # its binding is now stale
    hits = search(index, "ann", body(q, 5))["hits"]
    assert ids[7] not in {h["id"] for h in hits}
    index.put_binding(ids[7], 2, SPACE, vectors[7], binding_id="emb-7b")
    assert search(index, "ann", body(q, 5))["hits"][0]["id"] in {ids[7]} | {ids[i] for i in range(len(ids))
                                                                             if np.array_equal(vectors[i], vectors[7])}


@pytest.mark.parametrize("patch, code", [
    ({"profile": "cosine_hnsw_v9"}, "unknown_profile"),
    ({"limit": 0}, "out_of_range"),
    ({"query_vector": [0.0] * DIM}, "invalid_vector"),
    ({"query_vector": [1.0] * (DIM + 1)}, "dimension_mismatch"),
    ({"min_score": 0.5}, "unknown_field"),
])
def test_bad_ann_bodies_are_422(lane, patch, code):
    _, vectors, index = lane
    with pytest.raises(ApiError) as caught:
        search(index, "ann", {**body(vectors[0]), **patch})
    assert (caught.value.status, caught.value.code) == (422, code)
