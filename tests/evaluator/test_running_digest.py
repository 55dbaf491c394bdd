"""The running digest: a set hash the store keeps in each WriteBatch, checked at every open, served
with its fence, and recomputed by the evaluator from the frozen inputs (docs/design.md §6)."""

from __future__ import annotations

import json

import pytest
from rocksdict import Options, Rdict

from evaluator.connection.client import LabClient, LabError
from evaluator.evaluate.snapshot import Snapshots, StoreMismatch, read_everything
from evaluator.inputs import load_frozen
from evaluator.prepare.expected import content_digest, prepared_digest
from ground.canonical import canonical
from ground.running_digest import FAMILIES, RunningDigest
from server import validation
from server.errors import ApiError
from server.store.store import FAMILIES as STORE_FAMILIES
from server.store.store import Store, StoreOpenError
from tests.evaluation_fixtures import built_inputs, prepared_lab
from tests.lab_fixtures import embedding_item, memory_item, relation_item


def _store(tmp_path, name="db") -> Store:
    return Store.create(str(tmp_path / name), "lab-test", "2026-01-01T00:00:00Z")


def _scan(path, scope: str) -> RunningDigest:
    """The digest of a scope's content, recomputed here from a raw read of the four families."""
    db = Rdict(str(path), options=Options(raw_mode=True), column_families={f: Options(raw_mode=True) for f in STORE_FAMILIES})
    try:
        running = RunningDigest()
        for family in FAMILIES:
            running.add(family, [raw for key, raw in db.get_column_family(family).items()
                                 if isinstance(key, bytes) and key.split(b"\x00", 1)[0] == scope.encode()])
        return running
    finally:
        db.close()


def _workload(store: Store, scope: str) -> None:
    ids = [r["id"] for r in store.create_memories(scope, validation.memory_creates(
        {"items": [memory_item(f"k{i}") for i in range(4)]})).receipts]
    store.attach_embeddings(scope, validation.embedding_attaches({"items": [embedding_item("e0", ids[0])]}))
    store.assert_relations(scope, validation.relation_asserts({"items": [relation_item("r0", ids[0], ids[1])]}))
    # an update replaces the current memory and adds a revision: the digest removes the old value
    store.update_memories(scope, validation.memory_updates({"items": [
        {"idempotency_key": "u0", "id": ids[0], "revision": 1, "payload": {"content": "changed", "metadata": {}}}]}))
    store.attach_embeddings(scope, validation.embedding_attaches({"items": [embedding_item("e1", ids[0], revision=2)]}))
    # a replay writes nothing and changes nothing
    store.create_memories(scope, validation.memory_creates({"items": [memory_item("k0")]}))


def test_the_digest_is_a_set_hash_with_removal():
    a, b = RunningDigest(), RunningDigest()
    values = [canonical({"id": f"x{i}", "revision": 1}) for i in range(5)]
    a.add("memories", values)
    for v in reversed(values):
        b.add("memories", [v])
    assert a == b and a.hexdigest() == b.hexdigest(), "order of the writes does not matter"
    c = a.copy()
    c.add("memories", [b"extra"])
    assert c != a
    c.remove("memories", [b"extra"])
    assert c == a and c.counts["memories"] == 5
    d = a.copy()
    d.add("relations", values[:1])
    d.remove("memories", values[:1])
    assert d.hexdigest() != a.hexdigest(), "the family is part of each element"
    assert RunningDigest.from_json(json.loads(json.dumps(a.to_json()))) == a
    assert RunningDigest().summary()["counts"] == {f: 0 for f in FAMILIES}


def test_store_keeps_the_digest_of_its_content_through_every_kind_of_write(tmp_path):
    store = _store(tmp_path)
    _workload(store, "s")
    _workload(store, "t")
    kept = {scope: store.running_digest(scope) for scope in ("s", "t")}
    store.close()
    for scope in ("s", "t"):
        assert _scan(tmp_path / "db", scope).summary() == kept[scope]
    assert kept["s"]["counts"] == {"memories": 4, "memory_revisions": 5, "bindings": 2, "relations": 1}
    reopened = Store.reopen(str(tmp_path / "db"))  # the open-time check passes and keeps the same digests
    assert {scope: reopened.running_digest(scope) for scope in ("s", "t")} == kept
    reopened.close()


def test_a_refused_batch_leaves_the_digest_unchanged(tmp_path):
    store = _store(tmp_path)
    _workload(store, "s")
    before = store.running_digest("s")
    bad = validation.memory_updates({"items": [
        {"idempotency_key": "stale", "id": store.list_memories("s", None, 1)[0][0]["id"], "revision": 9,
         "payload": {"content": "x", "metadata": {}}}]})
    with pytest.raises(ApiError, match="revision"):  # a stale revision: the whole batch refused
        store.update_memories("s", bad)
    assert store.running_digest("s") == before
    store.close()


def test_content_changed_outside_the_lab_is_refused_at_open(tmp_path):
    store = _store(tmp_path)
    _workload(store, "s")
    store.close()
    db = Rdict(str(tmp_path / "db"), options=Options(raw_mode=True),
               column_families={f: Options(raw_mode=True) for f in STORE_FAMILIES})
    memories = db.get_column_family("memories")
    key, raw = next(iter(memories.items()))
    value = json.loads(raw)
    value["payload"]["content"] += " (edited)"
    memories[key] = canonical(value)
    memories.close()
    db.close()
    with pytest.raises(StoreOpenError, match="does not match its running digest"):
        Store.reopen(str(tmp_path / "db"))


def test_a_store_without_a_digest_gets_one_at_its_first_open(tmp_path):
    store = _store(tmp_path)
    _workload(store, "s")
    kept = store.running_digest("s")
    store.close()
    db = Rdict(str(tmp_path / "db"), options=Options(raw_mode=True),
               column_families={f: Options(raw_mode=True) for f in STORE_FAMILIES})
    meta = db.get_column_family("meta")
    del meta[b"digest\x00s"]  # as written before the running digest existed
    meta.close()
    db.close()
    for _ in range(2):
        reopened = Store.reopen(str(tmp_path / "db"))
        assert reopened.running_digest("s") == kept
        reopened.close()


def test_route_answers_the_fence_and_digest_and_refuses_other_scopes(lab):
    process, client = lab
    answer = client.running_digest()
    assert set(answer) == {"fence", "running_digest"}
    assert answer["fence"] == client.fence()
    assert answer["running_digest"]["scheme"] == "lthash16-1024-shake256-v1"
    with pytest.raises(LabError) as refused:
        client._call("GET", "/api/v1/scopes/other-scope/running-digest")
    assert refused.value.status == 403 and refused.value.code
    anonymous = LabClient({**process.access, "token": "not-a-token"})
    with pytest.raises(LabError) as unauthorized:
        anonymous.running_digest()
    anonymous.close()
    assert unauthorized.value.status == 401


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    lab = prepared_lab(built_inputs(tmp_path_factory), tmp_path_factory.mktemp("running-digest"))
    yield lab
    assert lab.lab.stop() == 0


@pytest.mark.heavy  # a prepared lab over the session's generated, imported and embedded inputs
def test_snapshot_by_digest_equals_the_full_read_and_refuses_other_content(prepared):
    frozen = load_frozen(prepared.inputs.protocol, prepared.inputs.fixture, prepared.inputs.relations)
    state = json.loads(prepared.state.read_text())
    access = json.loads(prepared.access_file.read_text())
    with LabClient(access) as client:
        assert client.running_digest()["running_digest"] == prepared_digest(frozen, state).summary()
        full = read_everything(client, frozen, state)
        assert Snapshots(frozen, state).take(client) == full, "same fields, same values as the full read"
        assert full["content_digest"] == content_digest(frozen, state)
        # content a full read does not look at: a binding of a prepared memory in another space
        record = next(iter(state["memories"].values()))
        client.attach_embeddings([embedding_item("other-space", record["id"], revision=record["revision"])])
        with pytest.raises(StoreMismatch, match="holds other content"):
            Snapshots(frozen, state).take(client)


@pytest.mark.heavy  # a prepare of the session's inputs into a scope that already holds a foreign memory
def test_prepare_refuses_a_scope_holding_content_it_did_not_write(tmp_path_factory):
    from evaluator.connection.lab_process import start_lab
    from tests.conftest import lab_cli

    inputs = built_inputs(tmp_path_factory)
    workdir = tmp_path_factory.mktemp("foreign-content")
    lab = start_lab(workdir / "db", workdir / "access.json")
    try:
        with LabClient(lab.access) as client:
            client.create_memories([memory_item("foreign", "written by someone else")])
        ran = lab_cli("prepare", "--fixture", inputs.fixture, "--relations", inputs.relations, "--access-file",
                      lab.access_file, "--state", workdir / "state.json", "--protocol", inputs.protocol, check=False)
        assert ran.returncode == 2 and "holds content this prepare did not write" in ran.stderr, ran.stderr[-500:]
        assert json.loads((workdir / "state.json").read_text())["status"] != "complete"
    finally:
        assert lab.stop() == 0
