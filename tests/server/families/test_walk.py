"""The seeded walk (`seeded_walk_v1`, docs/graph-v3.md): the method's invariants on hand-built
graphs, the server's pages against the evaluator's independent recomputation (another algorithm:
walk-by-walk enumeration), tampering caught, one search over HTTP against a real lab, and the v3
protocols and suite as the generators write them."""

from __future__ import annotations

import copy
import json
import random
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from builders.title_graph import build_relations
from evaluator.verification import recompute as rc
from evaluator.verification.verifiers.graphs.walk import check_walk, masses
from evaluator.verification.verify import Checker, RecentCache
from ground.artifacts import document_id
from ground.canonical import canonical, digest
from protocols.families.graphs.walk import WALK_PROFILES
from protocols.routes import PROFILES
from server.families.walk.seeded_walk import rank_walk, spread
from server.retrieval.indexes import ScopeIndex
from server.routes import search

REPO = Path(__file__).resolve().parents[3]
PROFILE = WALK_PROFILES["seeded_walk_v1"]
NAMES = ["Amber Valley", "Boreal Institute", "Cobalt Harbor", "Delta Works", "Ember Council", "Fjord Press",
         "Granite Union", "Harbor Lights", "Iris Theatre", "Juniper Records"]
FILLER = "river company music school founded city born album band mayor museum capital".split()
QUERIES = ["Who founded Amber Valley?", "Which city is the capital where Cobalt Harbor and Delta Works stand?",
           "Juniper Records album", "mayor of the city where Iris Theatre was founded", "Fjord Press"]


def graph(edges: list[tuple[str, str]]):
    table: dict[str, dict[str, str]] = {}
    for i, (a, b) in enumerate(edges):
        for x, y in ((a, b), (b, a)):
            table.setdefault(x, {}).setdefault(y, f"r{i:02d}")
    return lambda node: sorted(table.get(node, {}).items())


def test_spread_is_the_truncated_walk_by_hand():
    # a - b, a - c, b - d; seeds a (1/2) and b (1/4); alpha 1/2, two steps
    neighbours = graph([("a", "b"), ("a", "c"), ("b", "d")])
    walk = spread({"a": Fraction(1, 2), "b": Fraction(1, 4)}, neighbours, 2, Fraction(1, 2))
    # step 1: a sends 1/8 to b and c; b sends 1/16 to a and d
    # step 2: from b (1/8): 1/32 to a and d; from c (1/8): 1/16 to a; from a (1/16): 1/64 to b, c; from d (1/16): 1/32 to b
    assert {n: walk.visit(n) for n in walk.visit_numerators} == {"a": Fraction(1, 2) + Fraction(1, 16) + Fraction(1, 32) + Fraction(1, 16),
                          "b": Fraction(1, 4) + Fraction(1, 8) + Fraction(1, 64) + Fraction(1, 32),
                          "c": Fraction(1, 8) + Fraction(1, 64),
                          "d": Fraction(1, 16) + Fraction(1, 32)}
    assert [(i.step, i.source, Fraction(1, 2) * walk.mass(i.step - 1, i.source) / i.source_neighbours)
            for i in walk.inflow["d"]] == [(1, "b", Fraction(1, 16)), (2, "b", Fraction(1, 32))]
    # the evaluator's walk-by-walk enumeration gives the same masses step by step
    table = {n: dict(neighbours(n)) for n in "abcd"}
    by_step = masses({"a": Fraction(1, 2), "b": Fraction(1, 4)}, table, 2, Fraction(1, 2))
    assert {n: sum(step.get(n, 0) for step in by_step) for n in "abcd"} == {n: walk.visit(n) for n in "abcd"}


def test_no_edges_keeps_the_base_order_and_a_linked_record_rises():
    base = [(f"d{i}", (1, 3 + i)) for i in range(8)]
    alone = rank_walk(base, lambda node: [], PROFILE)
    assert [rid for rid, *_ in alone.final] == [rid for rid, _ in base]  # the walk lane only repeats the seeds
    # d7 (base rank 8) is linked to the top two seeds: it gains walk mass and climbs above d4
    linked = rank_walk(base, graph([("d0", "d7"), ("d1", "d7")]), PROFILE)
    order = [rid for rid, *_ in linked.final]
    assert order.index("d7") < order.index("d4")
    # and a record outside the base reached by the walk enters the list with no base score
    outside = rank_walk(base, graph([("d0", "x")]), PROFILE)
    entry = next(item for item in outside.final if item[0] == "x")
    assert entry[1] is None and entry[2] is not None


# ---------------------------------------------------------------- server page = independent recomputation


def hand_corpus(seed: int = 3) -> tuple[list[dict], dict]:
    rng = random.Random(seed)
    docs = []
    for n in range(120):
        title = NAMES[n % len(NAMES)]
        mentions = rng.sample([t for t in NAMES if t != title], 2)
        words = rng.sample(FILLER, 4)
        paragraph = f"{words[0]} {mentions[0]} {words[1]} {words[2]} {mentions[1]} {words[3]} {n}"
        docs.append({"id": document_id(title, paragraph), "title": title, "paragraph_text": paragraph,
                     "text": title + "\n" + paragraph})
    relations = build_relations([{k: d[k] for k in ("id", "title", "paragraph_text")} for d in docs], "0" * 64)
    return docs, relations


def hand_setup():
    docs, relations = hand_corpus()
    rng = np.random.default_rng(5)
    vectors = {d["id"]: rng.standard_normal(8).astype(np.float32) for d in docs}
    index = ScopeIndex("lab")
    for d in docs:
        index.put_memory(d["id"], 1, d["text"], {"content": d["text"], "metadata": {}})
        index.put_binding(d["id"], 1, "space-t", vectors[d["id"]])
    for rel in relations["relations"]:
        index.put_relation({"id": rel["id"], "revision": 1, "kind": rel["kind"],
                            "source": {"id": rel["source"], "revision": 1},
                            "target": {"id": rel["target"], "revision": 1}, "provenance": rel["provenance"]})
    return docs, relations, vectors, index


def hand_checker(docs, relations, vectors, query_vectors) -> Checker:
    """A Checker over the hand corpus, built from its parts (the campaign builds it from the frozen
    files; tests/lab/campaigns/test_family_campaigns.py runs that path)."""
    checker: Any = Checker.__new__(Checker)  # only what the walk's checks read, set by hand
    checker.profiles = {**PROFILES, "seeded_walk_v1": PROFILE}  # as in a protocol: the base names weighted_rrf_v2
    checker.frozen = SimpleNamespace(query_vectors=query_vectors)
    checker.bm25 = rc.Bm25.build({d["id"]: d["text"] for d in docs})
    checker.cosine_index = rc.CosineIndex({k: v.astype(np.float64) for k, v in vectors.items()})
    checker._work, checker.derived = RecentCache(64), {}
    checker.revision_of = {d["id"]: 1 for d in docs}
    checker.edges = {r["id"]: rc.Edge(r["id"], r["kind"], r["source"], r["target"]) for r in relations["relations"]}
    checker.relation_revision = {r["id"]: 1 for r in relations["relations"]}
    checker.provenance = {r["id"]: r["provenance"] for r in relations["relations"]}
    return checker


def failures_of(checker, query: dict, page: dict, limit: int) -> list[tuple]:
    return list(check_walk(checker, query, page, {"profile": "seeded_walk_v1", "limit": limit}))


def test_server_pages_equal_the_independent_recomputation():
    docs, relations, vectors, index = hand_setup()
    rng = np.random.default_rng(11)
    qvecs = {f"q{i}": rng.standard_normal(8).astype(np.float32) for i in range(len(QUERIES))}
    checker = hand_checker(docs, relations, vectors, qvecs)
    walked = 0
    for i, question in enumerate(QUERIES):
        for limit in (10, 100):
            body = {"profile": "seeded_walk_v1", "query": question, "query_vector": [float(x) for x in qvecs[f"q{i}"]],
                    "space_id": "space-t", "limit": limit}
            page = search(index, "walk", body)
            assert canonical(page) == canonical(search(index, "walk", body))  # identical bytes
            assert failures_of(checker, {"id": f"q{i}", "question": question}, page, limit) == []
            assert len(page["anchors"]) == PROFILE["seeds"] and page["relations"]
            walked += sum(1 for hit in page["hits"] if hit["proof"] and hit["proof"]["inflow"])
    assert walked > 0


def test_verifier_catches_a_tampered_page():
    docs, relations, vectors, index = hand_setup()
    qvec = np.ones(8, dtype=np.float32)
    checker = hand_checker(docs, relations, vectors, {"q": qvec})
    query = {"id": "q", "question": QUERIES[1]}
    page = search(index, "walk", {"profile": "seeded_walk_v1", "query": query["question"], "query_vector": [1.0] * 8,
                               "space_id": "space-t", "limit": 20})

    def fields(tampered):
        return {field for _, field, _ in failures_of(checker, query, tampered, 20)}

    assert fields(page) == set()
    swapped = copy.deepcopy(page)
    swapped["hits"][0], swapped["hits"][1] = swapped["hits"][1], swapped["hits"][0]
    assert "id" in fields(swapped) and "order" in fields(swapped)
    target = next(i for i, h in enumerate(page["hits"]) if h["proof"] and h["proof"]["inflow"])
    amount = copy.deepcopy(page)
    amount["hits"][target]["proof"]["inflow"][0]["amount_exact"] = "1/3"
    assert "proof.inflow" in fields(amount)
    rank = copy.deepcopy(page)
    rank["hits"][target]["channels"]["walk"]["rank"] += 1
    assert "channels.walk.rank" in fields(rank)
    dropped = copy.deepcopy(page)
    dropped["relations"] = dropped["relations"][1:]
    assert "relations" in fields(dropped)
    seeds = copy.deepcopy(page)
    seeds["anchors"][0]["mass_exact"] = "1/2"
    assert fields(seeds) == {"anchors"}


# ---------------------------------------------------------------- over HTTP, on a real lab

from evaluator.connection.client import LabError  # noqa: E402
from protocols.committed import committed_file
from tests.lab_fixtures import PROVENANCE  # noqa: E402

HTTP_SPACE = {"provider": "test", "model": "walk-hand-corpus", "revision": "r1", "dimensions": 8}


def test_walk_route_over_http_matches_the_verifier(fresh_scope):
    client = fresh_scope()
    docs, relations = hand_corpus()
    rng = np.random.default_rng(5)
    vectors = {d["id"]: rng.standard_normal(8).astype(np.float32) for d in docs}
    receipts = client.create_memories([{"idempotency_key": d["id"], "external_id": d["id"],
                                        "payload": {"content": d["text"], "metadata": {}}} for d in docs])["receipts"]
    record = {d["id"]: r["id"] for d, r in zip(docs, receipts)}
    client.attach_embeddings([{"idempotency_key": "e" + d["id"], "record_id": record[d["id"]], "revision": 1,
                               "space": HTTP_SPACE, "vector": [float(x) for x in vectors[d["id"]]]} for d in docs])
    items = [{"idempotency_key": r["id"], "external_id": r["id"], "kind": r["kind"],
              "source": {"id": record[r["source"]], "revision": 1}, "target": {"id": record[r["target"]], "revision": 1},
              "provenance": PROVENANCE} for r in relations["relations"]]
    rel_receipts = [receipt for start in range(0, len(items), 500)
                    for receipt in client.assert_relations(items[start:start + 500])["receipts"]]
    lab_docs = [{**d, "id": record[d["id"]]} for d in docs]
    lab_relations = {"relations": [{**r, "id": rec["id"], "source": record[r["source"]], "target": record[r["target"]],
                                    "provenance": PROVENANCE}  # as asserted above: the page must name it
                                   for r, rec in zip(relations["relations"], rel_receipts)]}
    qvec = np.random.default_rng(2).standard_normal(8).astype(np.float32)
    checker = hand_checker(lab_docs, lab_relations, {record[k]: v for k, v in vectors.items()}, {"q": qvec})
    body = {"profile": "seeded_walk_v1", "query": QUERIES[3], "query_vector": [float(x) for x in qvec],
            "space_id": "space-" + digest(HTTP_SPACE), "limit": 10}
    page, micros, size, _ = client.search("walk", body)
    assert micros > 0 and size > 0 and page["method"] == "walk"
    assert failures_of(checker, {"id": "q", "question": QUERIES[3]}, page, 10) == []
    assert client.catalog()["profiles"]["seeded_walk_v1"] == json.loads(json.dumps(PROFILE))
    for change, code in (({"limit": 101}, "out_of_range"), ({"limit": 0}, "out_of_range"),
                         ({"profile": "weighted_rrf_v2"}, "unknown_profile"), ({"extra": 1}, "unknown_field"),
                         ({"profile": ["seeded_walk_v1"]}, "unknown_profile"), ({"query": 7}, "wrong_type"),
                         ({"space_id": "space-none"}, "unknown_space"), ({"query_vector": [0.0] * 8}, "invalid_vector"),
                         ({"query_vector": [1.0] * 3}, "dimension_mismatch")):
        with pytest.raises(LabError) as caught:
            client.search("walk", {**body, **change})
        assert caught.value.status == 422 and caught.value.code == code, change
    missing = dict(body)
    del missing["space_id"]
    with pytest.raises(LabError) as caught:
        client.search("walk", missing)
    assert caught.value.status == 422 and caught.value.code == "missing_field"
    assert client.fence() == page["fence"], "refused searches write nothing"


# ---------------------------------------------------------------- the frozen v3 protocols and suite


def test_v3_protocols_are_their_inputs_plus_the_walk_and_the_suite_pins_them():
    """What v3 adds (that it is derived byte for byte: tests/protocols/test_protocol_registry.py)."""
    from protocols.schema import load_protocol
    from protocols.suite import load_suite, pinned_protocols

    pairs = {"musique-sample-v3.json": "musique-sample-v1.json", "hotpotqa-sample-v3.json": "hotpotqa-sample-v1.json",
             "2wikimultihopqa-sample-v3.json": "2wikimultihopqa-sample-v1.json",
             "graph-multihop-protocol-v3.json": "graph-multihop-protocol-v2.json"}
    for v3, previous in pairs.items():
        frozen = load_protocol(committed_file(v3))
        parent = load_protocol(committed_file(previous))
        assert {m: s for m, s in frozen["methods"].items() if m != "graph_walk"} == parent["methods"], v3
        assert frozen["ranking_profiles"]["seeded_walk_v1"] == json.loads(json.dumps(PROFILE)), v3
        assert frozen["evaluation"]["primary_contrast"] == {"candidate": "graph_walk", "baseline": "weighted_rrf_v2",
                                                           "label": "confirmatory"}
        assert frozen["methods"]["graph_walk"] == {"route": "walk", "profile": "seeded_walk_v1", "limit": 10}
    suite_path = committed_file("suite-graph-v3.json")
    suite = load_suite(suite_path)
    pinned = pinned_protocols(suite, suite_path)
    assert list(pinned) == ["musique", "hotpotqa", "2wikimultihopqa"]
    assert suite["primary_contrast"] == {"candidate": "graph_walk", "baseline": "weighted_rrf_v2",
                                         "metric": "ndcg@10", "label": "confirmatory"}
    assert suite["secondary_contrasts"] == [{"candidate": "graph_walk", "baseline": "graph_hybrid_balanced",
                                             "metric": "ndcg@10", "label": "secondary"}]
