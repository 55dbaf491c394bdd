"""The entity walk (`entity_walk_v1`, docs/graph-v4.md): the spread with its entity step by hand, the
earlier methods unchanged by the shares_name relations, the server's pages against the evaluator's
independent recomputation, tampering caught, one search over HTTP against a real lab, and the v4
protocols and suite as the registry writes them."""

from __future__ import annotations

import copy
import json
import random
from fractions import Fraction
from pathlib import Path

import numpy as np

from builders.entity_graph import build_relations
from evaluator.verification.verifiers.graphs.walk import masses
from ground.artifacts import document_id
from ground.canonical import canonical
from protocols.families.graphs.walk import WALK_PROFILES
from protocols.routes import PROFILES
from server.families.walk.seeded_walk import EntityStep, spread
from server.retrieval.indexes import ScopeIndex
from server.routes import search
from tests.server.families.test_walk import failures_of as walk_failures
from tests.server.families.test_walk import graph, hand_checker

REPO = Path(__file__).resolve().parents[3]
PROFILE = WALK_PROFILES["entity_walk_v1"]
TITLES = ["Amber Valley", "Boreal Institute", "Cobalt Harbor", "Delta Works", "Ember Council", "Fjord Press"]
PEOPLE = ["Raoul Walsh", "Miriam Cooper", "Alan Hale", "Gordon Mcdonnell", "Valerie Hobson", "Tim Burton",
          "Helena Carter", "Mark Wahlberg"]
FILLER = "river company music school founded city born album band mayor museum capital".split()
QUERIES = ["Who founded Amber Valley?", "the director Raoul Walsh and his wife", "Cobalt Harbor museum",
           "album of the band from Delta Works", "Fjord Press mayor"]


def test_the_entity_step_by_hand():
    # graph: a - b; entity: a ~ c, b ~ d (b is a's graph neighbour, so a ~ b would not count)
    graph_links = graph([("a", "b")])
    entity_links = graph([("a", "c"), ("b", "d"), ("a", "b")])

    def entity(node):
        near = {other for other, _ in graph_links(node)}
        return [(o, r) for o, r in entity_links(node) if o not in near]

    step = EntityStep(entity, Fraction(1, 4), 1)
    walk = spread({"a": Fraction(1, 2)}, graph_links, 2, Fraction(1, 2), step)
    # step 1: a sends 1/4 to b (graph, 1/2 over 1) and 1/8 to c (entity, 1/4 over 1)
    # step 2: graph only: b sends 1/8 to a; c has no graph neighbour
    assert {n: walk.visit(n) for n in walk.visit_numerators} == {
        "a": Fraction(1, 2) + Fraction(1, 8), "b": Fraction(1, 4), "c": Fraction(1, 8)}
    assert [(i.step, i.source, i.alpha, i.source_neighbours) for i in walk.inflow["c"]] == [(1, "a", Fraction(1, 4), 1)]
    # d is b's entity neighbour, but the entity step is over after step 1
    assert "d" not in walk.visit_numerators
    # the evaluator's walk-by-walk enumeration with the two groups gives the same masses
    groups = [({n: dict(graph_links(n)) for n in "abcd"}, Fraction(1, 2), 2),
              ({n: dict(entity(n)) for n in "abcd"}, Fraction(1, 4), 1)]
    by_step = masses({"a": Fraction(1, 2)}, groups, 2)
    assert {n: sum(s.get(n, 0) for s in by_step) for n in "abc"} == {n: walk.visit(n) for n in "abc"}


# ---------------------------------------------------------------- a hand corpus with shared names


def name_corpus(seed: int = 4) -> tuple[list[dict], dict]:
    rng = random.Random(seed)
    docs = []
    for n in range(90):
        title = TITLES[n % len(TITLES)] if n % 3 else f"Film {n}"
        mention = rng.choice([t for t in TITLES if t != title])
        person = PEOPLE[n % len(PEOPLE)] if n < 24 else rng.choice(FILLER)  # 3 holders each: a rare name
        words = rng.sample(FILLER, 4)
        paragraph = f"{words[0]} {mention} {words[1]} with {person}, {words[2]} {words[3]} {n}"
        docs.append({"id": document_id(title, paragraph), "title": title, "paragraph_text": paragraph,
                     "text": title + "\n" + paragraph})
    relations = build_relations([{k: d[k] for k in ("id", "title", "paragraph_text")} for d in docs], "0" * 64)
    return docs, relations


def name_setup(with_names: bool = True):
    docs, relations = name_corpus()
    rng = np.random.default_rng(6)
    vectors = {d["id"]: rng.standard_normal(8).astype(np.float32) for d in docs}
    index = ScopeIndex("lab")
    for d in docs:
        index.put_memory(d["id"], 1, d["text"], {"content": d["text"], "metadata": {}})
        index.put_binding(d["id"], 1, "space-t", vectors[d["id"]])
    for rel in relations["relations"]:
        if with_names or rel["kind"] != "shares_name":
            index.put_relation({"id": rel["id"], "revision": 1, "kind": rel["kind"],
                                "source": {"id": rel["source"], "revision": 1},
                                "target": {"id": rel["target"], "revision": 1}, "provenance": rel["provenance"]})
    return docs, relations, vectors, index


def checker_for(docs, relations, vectors, qvecs):
    checker = hand_checker(docs, relations, vectors, qvecs)
    checker.profiles = {**PROFILES, **WALK_PROFILES}
    return checker


def failures_of(checker, query: dict, page: dict, limit: int, profile: str = "entity_walk_v1") -> list[tuple]:
    from evaluator.verification.verifiers.graphs.walk import check_walk
    return list(check_walk(checker, query, page, {"profile": profile, "limit": limit}))


def body(profile: str, question: str, vector, limit: int) -> dict:
    return {"profile": profile, "query": question, "query_vector": [float(x) for x in vector], "space_id": "space-t",
            "limit": limit}


def test_server_pages_equal_the_independent_recomputation():
    docs, relations, vectors, index = name_setup()
    assert relations["counts"]["shares_name"] > 0
    rng = np.random.default_rng(12)
    qvecs = {f"q{i}": rng.standard_normal(8).astype(np.float32) for i in range(len(QUERIES))}
    checker = checker_for(docs, relations, vectors, qvecs)
    named = 0
    for i, question in enumerate(QUERIES):
        for limit in (10, 100):
            request = body("entity_walk_v1", question, qvecs[f"q{i}"], limit)
            page = search(index, "walk", request)
            assert canonical(page) == canonical(search(index, "walk", request))  # identical bytes
            assert failures_of(checker, {"id": f"q{i}", "question": question}, page, limit) == []
            kinds = {rel["id"]: rel for rel in page["relations"]}
            for hit in page["hits"]:
                for step in (hit["proof"] or {}).get("inflow", []):
                    if step["kind"] == "shares_name":
                        assert step["step"] == 1 and kinds[step["relation_id"]]["provenance"]["evidence_ref"] \
                            .startswith("shared_name:")
                        named += 1
    assert named > 0


def test_the_earlier_methods_ignore_the_name_relations():
    """seeded_walk_v1 and the typed paths follow only their own kinds: with or without the
    shares_name relations in the lab, their pages are byte for byte the same."""
    *_, with_names = name_setup(True)
    *_, without = name_setup(False)
    qvec = np.random.default_rng(3).standard_normal(8).astype(np.float32)
    for question in QUERIES:
        walk = body("seeded_walk_v1", question, qvec, 20)
        assert canonical(search(with_names, "walk", walk)) == canonical(search(without, "walk", walk))
        typed = {**body("typed_path_balanced_v1", question, qvec, 20), "seed": "hybrid"}
        assert canonical(search(with_names, "graph", typed)) == canonical(search(without, "graph", typed))
        entity = body("entity_walk_v1", question, qvec, 20)
        # without them the entity walk is the seeded walk (the same ranking)
        assert [h["id"] for h in search(without, "walk", entity)["hits"]] == \
            [h["id"] for h in search(without, "walk", walk)["hits"]]


def test_verifier_catches_a_tampered_page():
    docs, relations, vectors, index = name_setup()
    qvec = np.random.default_rng(7).standard_normal(8).astype(np.float32)
    checker = checker_for(docs, relations, vectors, {"q": qvec})
    query = {"id": "q", "question": QUERIES[1]}
    page = search(index, "walk", body("entity_walk_v1", query["question"], qvec, 30))

    def fields(tampered):
        return {field for _, field, _ in failures_of(checker, query, tampered, 30)}

    assert fields(page) == set()
    at = next((i, j) for i, h in enumerate(page["hits"]) if h["proof"]
              for j, s in enumerate(h["proof"]["inflow"]) if s["kind"] == "shares_name")
    neighbours = copy.deepcopy(page)
    neighbours["hits"][at[0]]["proof"]["inflow"][at[1]]["from_neighbours"] += 1
    assert "proof.inflow" in fields(neighbours)
    evidence = copy.deepcopy(page)
    step = page["hits"][at[0]]["proof"]["inflow"][at[1]]
    where = next(k for k, rel in enumerate(page["relations"]) if rel["id"] == step["relation_id"])
    evidence["relations"][where]["provenance"]["evidence_ref"] = "shared_name:somebody else"
    assert f"relations[{step['relation_id']}].provenance" in fields(evidence)
    # a verifier that ignored the entity step would see another page: the seeded walk's check fails
    assert walk_failures(checker, query, page, 30)


# ---------------------------------------------------------------- over HTTP, on a real lab

from protocols.committed import committed_file

HTTP_SPACE = {"provider": "test", "model": "entity-walk-hand-corpus", "revision": "r1", "dimensions": 8}


def test_entity_walk_route_over_http_matches_the_verifier(fresh_scope):
    from ground.canonical import digest

    client = fresh_scope()
    docs, relations, vectors, _ = name_setup()
    receipts = client.create_memories([{"idempotency_key": d["id"], "external_id": d["id"],
                                        "payload": {"content": d["text"], "metadata": {}}} for d in docs])["receipts"]
    record = {d["id"]: r["id"] for d, r in zip(docs, receipts)}
    client.attach_embeddings([{"idempotency_key": "e" + d["id"], "record_id": record[d["id"]], "revision": 1,
                               "space": HTTP_SPACE, "vector": [float(x) for x in vectors[d["id"]]]} for d in docs])
    items = [{"idempotency_key": r["id"], "external_id": r["id"], "kind": r["kind"],
              "source": {"id": record[r["source"]], "revision": 1}, "target": {"id": record[r["target"]], "revision": 1},
              "provenance": r["provenance"]} for r in relations["relations"]]  # the lab stores kind shares_name
    rel_receipts = [receipt for start in range(0, len(items), 500)
                    for receipt in client.assert_relations(items[start:start + 500])["receipts"]]
    lab_docs = [{**d, "id": record[d["id"]]} for d in docs]
    lab_relations = {"relations": [{**r, "id": rec["id"], "source": record[r["source"]], "target": record[r["target"]]}
                                   for r, rec in zip(relations["relations"], rel_receipts)]}
    qvec = np.random.default_rng(8).standard_normal(8).astype(np.float32)
    checker = checker_for(lab_docs, lab_relations, {record[k]: v for k, v in vectors.items()}, {"q": qvec})
    request = {**body("entity_walk_v1", QUERIES[1], qvec, 10), "space_id": "space-" + digest(HTTP_SPACE)}
    page, micros, size, _ = client.search("walk", request)
    assert micros > 0 and page["method"] == "walk" and page["profile"] == "entity_walk_v1"
    assert failures_of(checker, {"id": "q", "question": QUERIES[1]}, page, 10) == []
    assert any(rel["kind"] == "shares_name" for rel in page["relations"])
    assert client.catalog()["profiles"]["entity_walk_v1"] == json.loads(json.dumps(PROFILE))


# ---------------------------------------------------------------- the frozen v4 protocols and suite


def test_v4_protocols_are_v3_plus_the_entity_walk_and_the_suite_pins_them():
    """What v4 adds (that it is derived byte for byte: tests/protocols/test_protocol_registry.py)."""
    from protocols.schema import load_protocol
    from protocols.suite import load_suite, pinned_protocols

    for dataset in ("musique", "hotpotqa", "2wikimultihopqa"):
        frozen = load_protocol(committed_file(f"{dataset}-sample-v4.json"))
        parent = load_protocol(committed_file(f"{dataset}-sample-v3.json"))
        assert {m: s for m, s in frozen["methods"].items() if m != "graph_entity_walk"} == parent["methods"]
        assert frozen["methods"]["graph_entity_walk"] == {"route": "walk", "profile": "entity_walk_v1", "limit": 10}
        assert frozen["ranking_profiles"]["entity_walk_v1"] == json.loads(json.dumps(PROFILE))
        assert frozen["graph_builder"] == {"method": "document_entity_graph_v1"}
        assert frozen["selection"] == parent["selection"]  # the same test rows as v1 and v3
        assert frozen["evaluation"]["primary_contrast"] == {"candidate": "graph_entity_walk",
                                                           "baseline": "graph_hybrid_balanced",
                                                           "label": "confirmatory"}
    suite_path = committed_file("suite-graph-v4.json")
    suite = load_suite(suite_path)
    assert list(pinned_protocols(suite, suite_path)) == ["musique", "hotpotqa", "2wikimultihopqa"]
    assert suite["primary_contrast"] == {"candidate": "graph_entity_walk", "baseline": "graph_hybrid_balanced",
                                         "metric": "ndcg@10", "label": "confirmatory"}
    assert [(c["candidate"], c["baseline"]) for c in suite["secondary_contrasts"]] == [
        ("graph_entity_walk", "weighted_rrf_v2"), ("graph_entity_walk", "graph_walk")]
