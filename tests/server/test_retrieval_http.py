"""Search routes against a real lab process over loopback sockets.

Each page the server returns is compared with the page of the same request computed in process
on an index fed the same values, so the HTTP layer can neither drop nor alter a field.
"""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from evaluator.connection.client import LabError
from ground.canonical import canonical, digest
from server.retrieval.indexes import Indexes
from server.routes import search
from tests.lab_fixtures import memory_item, relation_item
from tests.protocol_files import declared_protocol_files, frozen_families

DIM = 8
SPACE = {"provider": "test", "model": "random-unit", "revision": "r1", "dimensions": DIM}
WORDS = ["river", "castle", "film", "album", "director", "capital", "bridge", "island", "poet", "empire"]


def unit(rng: np.random.Generator) -> list[float]:
    v = rng.standard_normal(DIM)
    return [float(x) for x in (v / np.linalg.norm(v)).astype(np.float32)]


def load_corpus(client, documents: int, relations_per_doc: int, seed: int = 5):
    """Memories, embeddings and relations through the HTTP API; returns what an index needs."""
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, size=6)) + f" doc{i}" for i in range(documents)]
    ids = []
    for start in range(0, documents, 500):
        batch = [memory_item(f"m{i}", texts[i]) for i in range(start, min(documents, start + 500))]
        ids += [r["id"] for r in client.create_memories(batch)["receipts"]]
    vectors = [unit(rng) for _ in ids]
    receipts = []
    for start in range(0, documents, 500):
        batch = [{"idempotency_key": f"e{i}", "record_id": ids[i], "revision": 1, "space": SPACE,
                  "vector": vectors[i]} for i in range(start, min(documents, start + 500))]
        receipts += client.attach_embeddings(batch)["receipts"]
    pairs = []
    for i in range(documents):
        for j in rng.choice(documents, size=relations_per_doc, replace=False).tolist():
            if j != i:
                pairs.append((i, j, "same_entity" if (i + j) % 2 else "semantic_related"))
    for start in range(0, len(pairs), 1000):
        client.assert_relations([relation_item(f"r{n}", ids[i], ids[j], kind=kind)
                                 for n, (i, j, kind) in enumerate(pairs[start:start + 1000], start=start)])
    return ids, texts, vectors, receipts


def in_process_index(client, ids, receipts):
    """An index fed from what the server stored (read back over HTTP), as the store feeds its own."""
    index = Indexes().scope(client.scope)
    for record in client.read_memories(ids):
        index.put_memory(record["id"], record["revision"], record["payload"]["content"], payload=record["payload"])
    space_id = receipts[0]["space_id"]
    for binding in client.read_embeddings(ids, space_id):
        index.put_binding(binding["record_id"], binding["revision"], space_id,
                          np.asarray(binding["vector"], dtype=np.float32), binding_id=binding["binding_id"])
    after = None
    while True:
        listing = client.list_relations(after=after, limit=1000)
        for relation in listing["relations"]:
            index.put_relation({k: v for k, v in relation.items() if k != "eligible"})
        after = listing["next"]
        if after is None:
            return index, space_id


def route_bodies(space_id: str, vector: list[float]) -> list[tuple[str, dict]]:
    query = "castle river director"
    return [
        ("lexical", {"query": query, "limit": 10}),
        ("semantic", {"query_vector": vector, "space_id": space_id, "limit": 10, "min_score": -1.0}),
        ("hybrid", {"profile": "weighted_rrf_v1", "query": query, "query_vector": vector, "space_id": space_id,
                    "limit": 10}),
        ("hybrid", {"profile": "weighted_rrf_v2", "query": query, "query_vector": vector, "space_id": space_id,
                    "limit": 10}),
        ("graph", {"profile": "typed_path_balanced_v1", "seed": "hybrid", "query": query, "query_vector": vector,
                   "space_id": space_id, "limit": 10,
                   "expansion": {"max_depth": 2, "max_nodes": 128, "max_edges": 256, "max_scan": 1024}}),
        ("graph", {"profile": "typed_path_entity_v1", "seed": "lexical", "query": query, "limit": 10}),
        ("graph", {"profile": "typed_path_balanced_v1", "seed": "hybrid", "query": query, "query_vector": vector,
                   "space_id": space_id, "limit": 10, "expansion": {"max_depth": 0}}),
    ]


@pytest.fixture(scope="module")
def corpus(lab):
    process, root = lab
    from evaluator.connection.client import LabClient
    client = LabClient({**process.access, "token": root.mint_credential("retrieval", 3600)["token"]},
                       scope="retrieval")
    ids, texts, vectors, receipts = load_corpus(client, documents=60, relations_per_doc=2)
    index, space_id = in_process_index(client, ids, receipts)
    yield client, index, space_id, np.random.default_rng(99)
    client.close()


def test_every_route_equals_the_in_process_page(corpus):
    client, index, space_id, rng = corpus
    vector = unit(rng)
    fence = client.fence()
    for route, body in route_bodies(space_id, vector):
        page, micros, size, _ = client.search(route, body)
        assert micros >= 0 and size > 0
        assert page.pop("fence") == fence
        assert canonical(page) == canonical(search(index, route, json.loads(json.dumps(body)))), route
        assert page["hits"], route
        if route == "graph" and body.get("expansion", {}).get("max_depth", 2) > 0:
            assert any(hit["proof"] and hit["proof"]["steps"] for hit in page["hits"])


def test_repeated_requests_give_identical_bytes(corpus):
    client, _, space_id, rng = corpus
    vector = unit(rng)
    for route, body in route_bodies(space_id, vector):
        first = client.request("POST", client._scoped(f"search/{route}"), body)
        second = client.request("POST", client._scoped(f"search/{route}"), body)
        assert first.status_code == 200 and first.content == second.content
        assert int(first.headers["X-Lab-Retrieval-Micros"]) >= 0


@pytest.mark.parametrize("route, body, code", [
    ("lexical", {"query": "x", "limit": 0}, "out_of_range"),
    ("lexical", {"query": "x", "limit": 5, "surprise": True}, "unknown_field"),
    ("lexical", {"query": "x" * 4097, "limit": 5}, "out_of_range"),
    ("semantic", {"query_vector": [1.0] * (DIM - 1), "space_id": "SPACE", "limit": 5}, "dimension_mismatch"),
    ("semantic", {"query_vector": [0.0] * DIM, "space_id": "SPACE", "limit": 5}, "invalid_vector"),
    ("semantic", {"query_vector": [1.0] * DIM, "space_id": "space-unknown", "limit": 5}, "unknown_space"),
    ("hybrid", {"profile": "weighted_rrf_v9", "query": "x", "query_vector": [1.0] * DIM, "space_id": "SPACE",
                "limit": 5}, "unknown_profile"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": "lexical", "query": "x", "limit": 5,
               "expansion": {"max_depth": 4}}, "out_of_range"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": "lexical", "query": "x", "limit": 5,
               "expansion": {"max_scan": 16385}}, "out_of_range"),
])
def test_bad_search_bodies_are_422_and_write_nothing(corpus, route, body, code):
    client, _, space_id, _ = corpus
    body = json.loads(json.dumps(body).replace('"SPACE"', json.dumps(space_id)))
    before = client.fence()
    with pytest.raises(LabError) as caught:
        client.search(route, body)
    assert (caught.value.status, caught.value.code) == (422, code)
    assert client.fence() == before


def test_nan_vector_is_refused(corpus):
    client, _, space_id, _ = corpus
    raw = ('{"query_vector": [NaN, 1, 1, 1, 1, 1, 1, 1], "space_id": "%s", "limit": 5}' % space_id).encode()
    before = client.fence()
    response = client.request("POST", client._scoped("search/semantic"), raw)
    assert (response.status_code, response.json()["error"]["code"]) == (422, "invalid_vector")
    assert client.fence() == before


def test_unknown_route_is_404(corpus):
    client = corpus[0]
    response = client.request("POST", client._scoped("search/fuzzy"), {"query": "x", "limit": 1})
    assert response.status_code == 404


def test_catalog_equals_the_protocol(lab):
    _, client = lab
    catalog = client.catalog()["profiles"]
    paths = declared_protocol_files()
    frozen = [json.loads(p.read_text())["ranking_profiles"] for p in paths]
    for profiles in frozen:
        for name, profile in profiles.items():
            assert digest(catalog[name]) == digest(profile), name
    union = {name: profile for profiles in frozen for name, profile in profiles.items()}
    measured = {name: profile for name, profile in catalog.items() if profile["family"] in frozen_families()}
    assert digest(measured) == digest(union)  # a measured family serves nothing no frozen protocol names


@pytest.mark.heavy  # a second lab over the store, or retrievals held open
def test_two_retrievals_run_at_once_and_a_third_gets_503_at_once(fresh_scope):
    """Admission: two concurrent searches are both served (so the limit is not 1), a burst of six
    gets `503 retrieval_busy` for some, and a refusal comes back without waiting for a search."""
    from evaluator.connection.client import LabClient

    client = fresh_scope()
    # A dense graph and the widest expansion make each graph search honestly take tens of ms.
    ids, _, _, receipts = load_corpus(client, documents=400, relations_per_doc=12, seed=8)
    space_id = receipts[0]["space_id"]
    body = {"profile": "typed_path_balanced_v1", "seed": "hybrid", "query": "castle river film",
            "query_vector": unit(np.random.default_rng(1)), "space_id": space_id, "limit": 100,
            "expansion": {"max_depth": 3, "max_nodes": 1024, "max_edges": 4096, "max_scan": 16384}}
    _, micros, _, _ = client.search("graph", body)
    assert micros > 5_000, f"the slow request took only {micros} us; the test would prove nothing"
    fence = client.fence()
    clients = [LabClient(client.access, scope=client.scope) for _ in range(6)]

    def burst(size: int) -> list[tuple[int, str | None, float]]:
        """`size` identical searches released together: (status, error code, client seconds) each."""
        results: list[tuple[int, str | None, float]] = []
        lock, start = threading.Lock(), threading.Barrier(size)

        def fire(own: LabClient) -> None:
            start.wait()
            started = time.perf_counter()
            response = own.request("POST", own._scoped("search/graph"), body)
            seconds = time.perf_counter() - started
            code = response.json()["error"]["code"] if response.status_code != 200 else None
            with lock:
                results.append((response.status_code, code, seconds))

        threads = [threading.Thread(target=fire, args=(c,)) for c in clients[:size]]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    try:
        for _ in range(3):
            assert [status for status, _, _ in burst(2)] == [200, 200], "two at once must both be admitted"
        for _ in range(5):  # a burst of six nearly always has three in flight; retry a slow start
            results = burst(6)
            if any(status == 503 for status, _, _ in results):
                break
    finally:
        for c in clients:
            c.close()
    assert {(status, code) for status, code, _ in results} == {(200, None), (503, "retrieval_busy")}, results
    served = [seconds for status, _, seconds in results if status == 200]
    refused = [seconds for status, _, seconds in results if status == 503]
    assert min(refused) < min(served), "a refusal must not wait for a running search"
    assert client.fence() == fence, "searches write nothing"


@pytest.mark.heavy  # a second lab over the store, or retrievals held open
def test_index_rebuilt_from_rocksdb_answers_like_the_live_one(lab_pool):
    """Live history with updates (stale bindings and relations), then a restart that rebuilds
    every index from RocksDB: each search answers with the same bytes, fence included."""
    process, client = lab_pool.start()
    ids, texts, _, receipts = load_corpus(client, documents=80, relations_per_doc=3, seed=21)
    rng = np.random.default_rng(3)
    space_id = receipts[0]["space_id"]
    probe = unit(rng)
    client.search("graph", route_bodies(space_id, probe)[4][1])  # warm the live caches first
    updated = ids[::7]
    client.update_memories([{"idempotency_key": f"u{i}", "id": rid, "revision": 1,
                             "payload": {"content": texts[ids.index(rid)] + " castle revised", "metadata": {}}}
                            for i, rid in enumerate(updated)])
    client.attach_embeddings([{"idempotency_key": f"e2-{i}", "record_id": rid, "revision": 2, "space": SPACE,
                               "vector": unit(rng)} for i, rid in enumerate(updated[::2])])
    vectors = [unit(rng) for _ in range(3)]
    bodies = [body for v in vectors for body in route_bodies(space_id, v)]
    live = [client.request("POST", client._scoped(f"search/{route}"), body).content for route, body in bodies]
    assert process.stop() == 0
    _, reopened = lab_pool.start(dbdir=lab_pool.base / "db1", reopen=True)
    rebuilt = [reopened.request("POST", reopened._scoped(f"search/{route}"), body).content for route, body in bodies]
    assert rebuilt == live
    assert any(json.loads(page)["work"]["stale_relations_skipped"] for page in live)


# ----------------------------------------------------------------------------- the thinner wire


def b64(values) -> str:
    import base64
    return base64.b64encode(np.asarray(values, dtype="<f8").tobytes()).decode("ascii")


def test_base64_query_vector_gives_the_same_bytes_as_the_array(corpus):
    from evaluator.connection.client import vector_base64
    client, _, space_id, rng = corpus
    vector = unit(rng)
    assert vector_base64(vector) == b64(vector)
    for route, body in route_bodies(space_id, vector):
        if "query_vector" not in body:
            continue
        array = client.request("POST", client._scoped(f"search/{route}"), body)
        encoded = client.request("POST", client._scoped(f"search/{route}"), {**body, "query_vector": b64(vector)})
        assert array.status_code == encoded.status_code == 200
        assert array.content == encoded.content, route


@pytest.mark.parametrize("encoded, code", [
    ("not base64!", "invalid_base64"),
    (b64([1.0] * DIM)[:-2], "invalid_base64"),  # padding cut
    ("ü" * 12, "invalid_base64"),
    (b64([1.0] * (DIM - 1)), "dimension_mismatch"),
    (b64([1.0] * DIM) + "AAAAAAA=", "invalid_base64"),
    ("AAAAAAAAAAA=", "dimension_mismatch"),  # 8 bytes: one float64 value
    ("AAAAAAAAAA==", "invalid_vector"),  # 7 bytes: not a whole float64
    (b64([float("nan")] + [1.0] * (DIM - 1)), "invalid_vector"),
    (b64([float("inf")] + [1.0] * (DIM - 1)), "invalid_vector"),
    (b64([1e300] + [1.0] * (DIM - 1)), "invalid_vector"),  # beyond float32
    (b64([0.0] * DIM), "invalid_vector"),
])
def test_bad_base64_vectors_are_422_and_write_nothing(corpus, encoded, code):
    client, _, space_id, _ = corpus
    before = client.fence()
    for route in ("semantic", "hybrid"):
        body = {"query_vector": encoded, "space_id": space_id, "limit": 5}
        if route == "hybrid":
            body.update(profile="weighted_rrf_v2", query="river")
        with pytest.raises(LabError) as caught:
            client.search(route, body)
        assert (caught.value.status, caught.value.code) == (422, code), (route, encoded)
    assert client.fence() == before


def test_include_payload_false_keeps_the_ranking_and_drops_the_text(corpus):
    client, _, space_id, rng = corpus
    vector = unit(rng)
    for route, body in route_bodies(space_id, vector):
        full = client.search(route, body)[0]
        thin, _, size, _ = client.search(route, {**body, "include_payload": False})
        assert [h["payload"] for h in thin["hits"]] == [None] * len(full["hits"])
        for hit in full["hits"]:
            hit["payload"] = None
        assert thin == full, route
    with pytest.raises(LabError) as caught:
        client.search("lexical", {"query": "x", "limit": 5, "include_payload": "no"})
    assert (caught.value.status, caught.value.code) == (422, "wrong_type")
