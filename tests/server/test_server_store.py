"""The RocksDB store in-process: atomic batches, idempotency, revisions, digests, markers, locks."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ground.canonical import digest
from server import validation
from server.errors import ApiError
from server.retrieval.indexes import Indexes
from server.store.store import Store, StoreOpenError, binding_id, decode_vector, encode_vector, memory_id, relation_id
from tests.lab_fixtures import embedding_item, memory_item, relation_item


def _store(tmp_path, name="db") -> Store:
    return Store.create(str(tmp_path / name), "lab-test", "2026-01-01T00:00:00Z")


def _load(store: Store, scope: str, n: int = 3) -> list[str]:
    result = store.create_memories(scope, validation.memory_creates({"items": [memory_item(f"k{i}") for i in range(n)]}))
    return [r["id"] for r in result.receipts]


def test_ids_derive_from_scope_and_external_ids_never_from_keys(tmp_path):
    store = _store(tmp_path)
    created = store.create_memories("s", validation.memory_creates({"items": [
        memory_item("fixture-a:k0", external_id="doc-0"), memory_item("fixture-a:k1", external_id="doc-1")]}))
    ids = [r["id"] for r in created.receipts]
    assert ids[0] == "mem-" + digest(["s", "memory", "doc-0"])[:32] == memory_id("s", "doc-0")
    assert _load(store, "t")[0] != memory_id("s", "k0"), "the scope is part of the id"
    bound = store.attach_embeddings("s", validation.embedding_attaches({"items": [embedding_item("fixture-a:e0", ids[0])]}))
    receipt = bound.receipts[0]
    assert receipt["binding_id"] == binding_id("s", ids[0], 1, receipt["space_id"])
    related = store.assert_relations("s", validation.relation_asserts({"items": [
        relation_item("fixture-a:r0", ids[0], ids[1], external_id="edge-0")]}))
    assert related.receipts[0]["id"] == "rel-" + digest(["s", "relation", "edge-0"])[:32] == relation_id("s", "edge-0")
    store.close()


def test_same_commands_on_fresh_stores_give_same_ids_and_digests(tmp_path):
    digests = []
    for name in ("a", "b"):
        store = Store.create(str(tmp_path / name), f"lab-{name}", "2026-01-01T00:00:00Z")
        ids = _load(store, "s")
        store.attach_embeddings("s", validation.embedding_attaches({"items": [embedding_item("e", ids[0])]}))
        store.assert_relations("s", validation.relation_asserts({"items": [relation_item("r", ids[0], ids[1])]}))
        digests.append(store.digests("s"))
        store.close()
    assert digests[0] == digests[1]


def test_a_refused_item_refuses_the_whole_batch(tmp_path):
    store = _store(tmp_path)
    ids = _load(store, "s")
    before = (store.fence("s"), store.digests("s"))
    items = [relation_item("ok", ids[0], ids[1]), relation_item("stale", ids[0], ids[2], target_revision=2)]
    with pytest.raises(ApiError) as refused:
        store.assert_relations("s", validation.relation_asserts({"items": items}))
    assert (refused.value.status, refused.value.code) == (409, "stale_revision")
    assert (store.fence("s"), store.digests("s")) == before
    store.close()


def test_idempotent_replay_and_conflict(tmp_path):
    store = _store(tmp_path)
    first = store.create_memories("s", validation.memory_creates({"items": [memory_item("k", "text")]}))
    again = store.create_memories("s", validation.memory_creates({"items": [memory_item("k", "text")]}))
    assert again.receipts == first.receipts and again.replayed == [True]
    assert again.fence == first.fence, "a replay writes nothing"
    with pytest.raises(ApiError) as conflict:
        store.create_memories("s", validation.memory_creates({"items": [memory_item("k", "other")]}))
    assert (conflict.value.status, conflict.value.code) == (409, "idempotency_conflict")
    store.close()


def test_update_bumps_revision_keeps_history_and_stales_relations(tmp_path):
    store = _store(tmp_path)
    ids = _load(store, "s")
    rel = store.assert_relations("s", validation.relation_asserts({"items": [relation_item("r", ids[0], ids[1])]}))
    update = {"items": [{"idempotency_key": "u", "id": ids[0], "revision": 1, "payload": {"content": "new"}}]}
    result = store.update_memories("s", validation.memory_updates(update))
    assert result.receipts[0]["revision"] == 2
    assert store.read_memories("s", [ids[0]])[0]["payload"]["content"] == "new"
    [relation] = store.read_relations("s", [rel.receipts[0]["id"]])
    assert relation["eligible"] is False and relation["source"]["revision"] == 1
    with pytest.raises(ApiError) as stale:
        store.update_memories("s", validation.memory_updates(
            {"items": [{"idempotency_key": "u2", "id": ids[0], "revision": 1, "payload": {"content": "x"}}]}))
    assert stale.value.code == "stale_revision"
    store.close()


def test_streamed_digest_equals_digest_of_the_list(tmp_path):
    store = _store(tmp_path)
    _load(store, "s", 5)
    rows = store.journal("s", 0, 1000)
    assert store.digests("s")["journal"] == digest(rows)
    store.close()


def test_reopen_preserves_state_and_caches(tmp_path):
    store = _store(tmp_path)
    ids = _load(store, "s")
    before = (store.fence("s"), store.digests("s"), store.marker)
    store.close()
    again = Store.reopen(str(tmp_path / "db"))
    assert (again.fence("s"), again.digests("s"), again.marker) == before
    assert again.current_revision("s", ids[0]) == 1
    again.close()


def test_reopen_refuses_a_directory_without_our_marker(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(StoreOpenError):
        Store.reopen(str(tmp_path / "plain"))
    with pytest.raises(StoreOpenError):
        Store.reopen(str(tmp_path / "absent"))


def test_a_second_open_of_the_same_dbdir_fails_on_the_lock(tmp_path):
    store = _store(tmp_path)
    with pytest.raises(StoreOpenError, match="in use"):
        Store.reopen(str(tmp_path / "db"))
    store.close()


def test_values_are_canonical_json(tmp_path):
    store = _store(tmp_path)
    _load(store, "s", 1)
    for _, raw in store._cf["memories"].items():
        assert raw == json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    store.close()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**40, 10**40),
                          st.sampled_from([1e-45, -1e-45, 1e-50, 3.4028234e38, -3.4028235e38, 3.5e38])),
                min_size=4, max_size=4))
def test_every_vector_validation_accepts_feeds_the_index(values):
    """The index feed runs after the commit, so it must never refuse what validation accepted
    (else the live index would diverge from RocksDB): finite in float32, not all zero, same dimension."""
    try:
        narrow = validation.vector(values, "vector", 4)
    except ApiError:
        return
    index = Indexes().scope("s")
    index.put_memory("mem-a", 1, "a")
    index.put_binding("mem-a", 1, "space-x", decode_vector(encode_vector(narrow)))  # the stored round trip
    row = index.spaces["space-x"].rows[0]
    assert np.isfinite(row).all() and abs(float(np.dot(row.astype(np.float64), row)) - 1.0) < 1e-6
