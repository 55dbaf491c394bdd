"""Every route of the lab over real sockets, plus start/stop/reopen of the real process."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import time

import numpy as np
import pytest

from evaluator.connection.client import LabClient, LabError
from evaluator.connection.lab_process import COMMAND, start_lab
from ground.canonical import digest
from tests.lab_fixtures import SPACE, embedding_item, memory_item, relation_item, seed


def test_health_reports_limits_without_a_token(lab):
    process, client = lab
    answer = LabClient({**process.access, "token": "nope"}).health()
    assert answer["status"] == "ok"
    limits = answer["limits"]
    assert limits["body_bytes"] == 2 * 1024 * 1024 and limits["batch_items"] == 1000
    assert limits["content_chars"] == 32768 and limits["vector_dimensions"] == 4096
    assert limits["search_limit"] == [1, 100] and limits["max_depth"] == [0, 3]


def test_identity_and_access_file(lab):
    process, client = lab
    identity = client.identity()
    assert identity["lab_id"] == process.access["lab_id"] and identity["scope"] == "lab"
    assert identity["journal_id"] == client.fence()["journal_id"]
    assert process.access["pid"] == process.pid
    assert process.access["base_url"].startswith("http://127.0.0.1:")
    assert stat.S_IMODE(os.stat(process.access_file).st_mode) == 0o600
    issued = time.strptime(process.access["issued_at"], "%Y-%m-%dT%H:%M:%SZ")
    expires = time.strptime(process.access["expires_at"], "%Y-%m-%dT%H:%M:%SZ")
    assert time.mktime(expires) - time.mktime(issued) == 24 * 3600


def test_catalog_lists_profiles(lab):
    _, client = lab
    profiles = client.catalog()["profiles"]
    assert {"bm25_v1", "weighted_rrf_v2"} <= set(profiles)


def test_memories_create_read_list_update(fresh_scope):
    client = fresh_scope()
    created = client.create_memories([memory_item(f"k{i}", f"text {i}", source="t") for i in range(5)])
    ids = [r["id"] for r in created["receipts"]]
    assert created["replayed"] == [False] * 5 and created["fence"]["high_watermark"] == 5
    records = client.read_memories(ids[:2])
    assert records[0] == {"id": ids[0], "revision": 1, "payload": {"content": "text 0", "metadata": {"source": "t"}}}
    page = client.list_memories(limit=2)
    assert [r["id"] for r in page["records"]] == sorted(ids)[:2] and page["next"] == sorted(ids)[1]
    rest = client.list_memories(after=page["next"], limit=10)
    assert [r["id"] for r in rest["records"]] == sorted(ids)[2:] and rest["next"] is None
    updated = client.update_memories([{"idempotency_key": "u", "id": ids[0], "revision": 1,
                                       "payload": {"content": "changed"}}])
    assert updated["receipts"][0]["revision"] == 2
    assert client.read_memories([ids[0]])[0]["payload"]["content"] == "changed"
    with pytest.raises(LabError) as missing:
        client.read_memories(["mem-" + "0" * 32])
    assert missing.value.status == 404


def test_embeddings_attach_read_and_stale_after_update(fresh_scope):
    client = fresh_scope()
    [rid] = [r["id"] for r in client.create_memories([memory_item("m")])["receipts"]]
    vector = [0.1, 0.2, 0.3, 0.4]
    receipt = client.attach_embeddings([embedding_item("e", rid, vector=vector)])["receipts"][0]
    assert receipt["vector_sha256"] == hashlib.sha256(np.asarray(vector, "<f4").tobytes()).hexdigest()
    assert receipt["binding_id"].startswith("emb-") and receipt["dimensions"] == 4
    [binding] = client.read_embeddings([rid], receipt["space_id"])
    assert binding["current"] is True and binding["vector"] == [float(np.float32(x)) for x in vector]
    client.update_memories([{"idempotency_key": "u", "id": rid, "revision": 1, "payload": {"content": "v2"}}])
    [binding] = client.read_embeddings([rid], receipt["space_id"])
    assert binding["current"] is False, "an update stales the bindings of the old revision"
    client.attach_embeddings([embedding_item("e2", rid, revision=2, vector=vector)])
    assert [b["current"] for b in client.read_embeddings([rid], receipt["space_id"])] == [False, True]


def test_relations_assert_read_list_and_eligibility(fresh_scope):
    client = fresh_scope()
    ids = seed(client, 3)
    listed = client.list_relations(limit=10)
    assert len(listed["relations"]) == 2 and listed["next"] is None
    rel_ids = [r["id"] for r in listed["relations"]]
    relations = client.read_relations(rel_ids)
    assert all(r["eligible"] for r in relations)
    assert relations[0]["provenance"]["origin"] == "tool_observation"
    client.update_memories([{"idempotency_key": "u", "id": ids[1], "revision": 1, "payload": {"content": "x"}}])
    after = {r["id"]: r for r in client.read_relations(rel_ids)}
    assert not any(r["eligible"] for r in after.values()), "both relations touch the updated memory"
    assert len(client.list_relations()["relations"]) == 2, "stale relations are kept"
    fresh = client.assert_relations([relation_item("r-new", ids[0], ids[1], target_revision=2, kind="supports")])
    assert client.read_relations([fresh["receipts"][0]["id"]])[0]["eligible"] is True


def test_model_inference_needs_a_model(fresh_scope):
    client = fresh_scope()
    ids = seed(client, 2)
    ok = client.assert_relations([relation_item("r", ids[0], ids[1], kind="causal_claim",
                                                origin="model_inference", model="some-llm")])
    assert ok["receipts"][0]["kind"] == "causal_claim"


def test_an_imported_graph_relation_names_its_external_model(fresh_scope):
    client = fresh_scope()
    ids = seed(client, 2)
    ok = client.assert_relations([relation_item("r", ids[0], ids[1], kind="shares_argument",
                                                origin="external_model", model="gpt-3.5-turbo-1106")])
    assert ok["receipts"][0]["kind"] == "shares_argument"
    stored = client.read_relations([ok["receipts"][0]["id"]])[0]["provenance"]
    assert (stored["origin"], stored["model"]) == ("external_model", "gpt-3.5-turbo-1106")


def test_journal_and_fence(fresh_scope):
    client = fresh_scope()
    seed(client, 3)
    journal = client.journal()
    assert [e["sequence"] for e in journal["entries"]] == list(range(1, 9))
    assert [e["op"] for e in journal["entries"]] == ["memory.create"] * 3 + ["embedding.attach"] * 3 + ["relation.assert"] * 2
    assert journal["high_watermark"] == 8 == client.fence()["high_watermark"]
    assert [e["sequence"] for e in client.journal(after=6, limit=1)["entries"]] == [7]


def test_replay_returns_the_original_receipt(fresh_scope):
    client = fresh_scope()
    first = client.create_memories([memory_item("a"), memory_item("b")])
    mixed = client.create_memories([memory_item("a"), memory_item("c")])
    assert mixed["replayed"] == [True, False]
    assert mixed["receipts"][0] == first["receipts"][0]
    assert mixed["fence"]["high_watermark"] == 3


def test_credentials_are_scope_bound(lab, fresh_scope):
    process, root = lab
    client = fresh_scope()
    with pytest.raises(LabError) as other:
        LabClient({**process.access, "token": client.http.headers["authorization"].split()[1]}).fence()
    assert other.value.status == 403
    minted = root.mint_credential("lab", 5)
    assert minted["scope"] == "lab" and minted["token"] != process.access["token"]
    # a minted token cannot mint: holding one scope's token never yields another scope's
    with pytest.raises(LabError) as escalation:
        client.mint_credential(client.scope + "x", 60)
    assert escalation.value.status == 403 and escalation.value.code == "minting_not_allowed"


def test_digest_covers_every_family(fresh_scope):
    client = fresh_scope()
    empty = client.digest()
    seed(client, 2)
    full = client.digest()
    assert set(full) == {"records", "bindings", "relations", "journal", "all"}
    assert all(full[k] != empty[k] for k in full)


def test_same_commands_on_a_fresh_dbdir_give_same_ids_and_digest(lab_pool):
    answers = []
    for _ in range(2):
        _, client = lab_pool.start()
        ids = seed(client, 4)
        answers.append((ids, client.digest(), client.journal()["entries"]))
    assert answers[0] == answers[1]


@pytest.mark.heavy  # starts the lab again and again
def test_reopen_preserves_everything_and_revokes_old_tokens(lab_pool):
    process, client = lab_pool.start()
    seed(client, 3)
    state = (client.digest(), client.fence(), client.journal(), client.list_memories(), client.list_relations())
    identity = client.identity()
    assert process.stop() == 0
    again, client2 = lab_pool.start(dbdir=lab_pool.base / "db1", reopen=True)
    assert (client2.digest(), client2.fence(), client2.journal(), client2.list_memories(),
            client2.list_relations()) == state
    assert client2.identity()["lab_id"] == identity["lab_id"]
    with pytest.raises(LabError) as revoked:
        LabClient({**again.access, "token": process.access["token"]}).fence()
    assert revoked.value.status == 401


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    """`lab serve` in its own process (a refusal that regressed into serving would hang this one)."""
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.heavy  # starts the lab again and again
def test_cli_refusals(tmp_path, lab_pool):
    existing = tmp_path / "exists"
    existing.mkdir()
    refused = _run_cli(str(existing), str(tmp_path / "a.json"), "0")
    assert refused.returncode == 2 and "refusing to overwrite" in refused.stderr
    (tmp_path / "access.json").write_text("{}")
    refused = _run_cli(str(tmp_path / "new"), str(tmp_path / "access.json"), "0")
    assert refused.returncode == 2 and not (tmp_path / "new").exists()
    refused = _run_cli(str(tmp_path / "new"), str(tmp_path / "b.json"), "0", "--host", "0.0.0.0")
    assert refused.returncode == 2 and "127.0.0.1" in refused.stderr
    refused = _run_cli(str(tmp_path / "new"), str(tmp_path / "b.json"), "0", "--scope", "lab\n")
    assert refused.returncode == 2 and "--scope" in refused.stderr and not (tmp_path / "new").exists()
    refused = _run_cli(str(existing), str(tmp_path / "c.json"), "0", "--reopen")
    assert refused.returncode == 2 and "lab store" in refused.stderr
    process, _ = lab_pool.start()
    locked = _run_cli(str(lab_pool.base / "db1"), str(tmp_path / "d.json"), "0", "--reopen")
    assert locked.returncode == 2 and "in use by another lab process" in locked.stderr
    assert not (tmp_path / "d.json").exists()
    port = process.access["base_url"].rsplit(":", 1)[1]
    taken = _run_cli(str(tmp_path / "fresh"), str(tmp_path / "e.json"), port)
    assert taken.returncode == 2 and "cannot bind" in taken.stderr
    assert not (tmp_path / "fresh").exists(), "a port in use must leave no DBDIR behind"


def test_sigint_stops_cleanly(tmp_path):
    process = start_lab(tmp_path / "db", tmp_path / "access.json", log_path=tmp_path / "lab.log")
    process.process.send_signal(signal.SIGINT)
    assert process.process.wait(20) == 0
    assert "stopped" in process.log()


def test_port_zero_is_recorded_and_loopback_round_trip_is_fast(lab):
    # Not a speed target (that is `lab bench store-writes`): only catches the ~40 ms Nagle stall.
    _, client = lab
    times = []
    for _ in range(50):
        started = time.perf_counter()
        client.health()
        times.append(time.perf_counter() - started)
    assert sorted(times)[25] < 0.02


# ---------------------------------------------------------------- search routes (retrieval is H5's; the
# app's part is auth, the body cap, admission, the fence and the timing header; admission itself is
# tests/server/test_retrieval_http.py::test_two_retrievals_run_at_once_and_a_third_gets_503_at_once)


def _search_bodies(space_id: str, query: str, vector: list[float]) -> dict:
    expansion = {"max_depth": 2, "max_nodes": 128, "max_edges": 256, "max_scan": 1024}
    return {
        "lexical": {"query": query, "limit": 5},
        "semantic": {"query_vector": vector, "space_id": space_id, "limit": 5, "min_score": -1},
        "hybrid": {"profile": "weighted_rrf_v2", "query": query, "query_vector": vector, "space_id": space_id, "limit": 5},
        "graph": {"profile": "typed_path_balanced_v1", "seed": "hybrid", "query": query, "query_vector": vector,
                  "space_id": space_id, "limit": 5, "expansion": expansion},
    }


def test_search_routes_carry_fence_and_retrieval_micros(fresh_scope):
    client = fresh_scope()
    seed(client, 4)
    fence = client.fence()
    for method, body in _search_bodies("space-" + digest(SPACE), "memory m1", [1.0, 1.0, 0.0, 1.0]).items():
        page, micros, size, seconds = client.search(method, body)
        assert page["fence"] == fence, method
        assert page["hits"] and page["hits"][0]["payload"]["content"].startswith("memory"), method
        assert 0 < micros < seconds * 1e6, "server time lies inside the client's round trip"
        assert size > 0
    bad = client.request("POST", f"/api/v1/scopes/{client.scope}/search/lexical", {"query": "x", "limit": 0})
    assert bad.status_code == 422 and bad.json()["error"]["code"]
    assert client.fence() == fence, "searches write nothing"
