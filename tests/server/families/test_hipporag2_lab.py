"""HippoRAG 2's graph inside a real lab (docs/hipporag2.md, "How the lab holds the graph"): phrase and
fact nodes are memories no other method ranks, their writes are validated like every write, and
the route's page is the one the evaluator's verifier recomputes from the same graph."""

from __future__ import annotations

import numpy as np
import pytest

from builders.hipporag2_graph import add_synonyms, build
from evaluator.connection.client import LabError
from evaluator.verification.verifiers.graphs.hipporag2.hipporag2_verifier import (
    Table,
    edge_arrays,
    exact_cosines,
    page_failures,
    query_unit,
    unit_rows,
)
from protocols.families.graphs.hipporag2 import HIPPORAG2, PASSAGE, PHRASE
from tests.lab_fixtures import embedding_item, memory_item, relation_item

PASSAGES = {"p0": ("The Orin flows into Tessa.", [1.0, 0.2, 0.0, 0.1]),
            "p1": ("Tessa lies in Velmar.", [0.1, 1.0, 0.3, 0.0]),
            "p2": ("Velmar borders Brel.", [0.0, 0.3, 1.0, 0.2]),
            "p3": ("A passage without triples.", [0.2, 0.1, 0.1, 1.0])}
FACTS = {"f0": ("orin", "flows into", "tessa", [1.0, 0.1, 0.0, 0.0], "p0", 1),
         "f1": ("tessa", "lies in", "velmar", [0.0, 1.0, 0.2, 0.0], "p1", 1),
         "f2": ("velmar", "borders", "brel", [0.0, 0.1, 1.0, 0.1], "p2", 2)}
SYNONYM = ("orin", "brel", 0.85)


def node(key: str, text: str, kind: str, **ends: str) -> dict:
    return memory_item(key, content=text, graph_node=kind, **ends)


def world(client) -> dict:
    """The passages, the graph's nodes, the fact vectors and the two relation kinds; the ids."""
    ids = {key: r["id"] for key, r in zip(PASSAGES, client.create_memories(
        [memory_item(key, content=text) for key, (text, _) in PASSAGES.items()])["receipts"])}
    phrases = sorted({end for s, _, o, *_ in FACTS.values() for end in (s, o)})
    made = client.create_memories([node("e:" + p, p, "phrase") for p in phrases] + [
        node(key, str((s, r, o)), "fact", subject=s, object=o) for key, (s, r, o, *_) in FACTS.items()])["receipts"]
    ids.update(zip(["e:" + p for p in phrases] + list(FACTS), (r["id"] for r in made)))
    receipts = client.attach_embeddings(
        [embedding_item("v" + key, ids[key], vector=vector) for key, (_, vector) in PASSAGES.items()]
        + [embedding_item("v" + key, ids[key], vector=fact[3]) for key, fact in FACTS.items()])["receipts"]
    client.assert_relations(
        [relation_item("s" + key, ids[fact[4]], ids[key], kind="states", evidence_ref=f"triples:{fact[5]}")
         for key, fact in FACTS.items()]
        + [relation_item("syn", ids["e:" + SYNONYM[0]], ids["e:" + SYNONYM[1]], kind="synonym_of",
                         evidence_ref=f"cosine:{SYNONYM[2]!r}")])
    ids["space_id"] = receipts[0]["space_id"]
    return ids


def recomputed(ids: dict) -> Table:
    """The evaluator's own table of the same graph, under the lab's record ids."""
    triples: dict[str, list] = {ids[fact[4]]: [] for fact in FACTS.values()}
    for s, r, o, _, pid, count in FACTS.values():
        triples[ids[pid]] += [[s, r, o]] * count
    passages = sorted(ids[key] for key in PASSAGES)
    graph = add_synonyms(build(passages, triples), {SYNONYM[0]: [(SYNONYM[1], SYNONYM[2])]})
    undirected = graph.undirected()
    nodes = [PASSAGE + p for p in passages] + sorted({n for pair in undirected for n in pair if n.startswith(PHRASE)})
    facts = sorted(ids[key] for key in FACTS)
    by_id = {ids[key]: fact for key, fact in FACTS.items()}
    return Table(passages, facts, {f: (by_id[f][0], by_id[f][2]) for f in facts},
                 unit_rows([np.array(by_id[f][3], dtype=np.float32) for f in facts]),
                 unit_rows([np.array(PASSAGES[k][1], dtype=np.float32) for k in sorted(PASSAGES, key=ids.__getitem__)]),
                 {one: len(held) for one, held in graph.holders.items()}, [], np.zeros((0, 0)), nodes,
                 edge_arrays(nodes, undirected, HIPPORAG2["pagerank"]["transition_bits"]), len(undirected))


@pytest.mark.parametrize("query", [[1.0, 0.0, 0.0, 0.0], [0.0, 0.2, 1.0, 0.0], [0.3, 0.3, 0.3, 0.3]])
def test_the_labs_page_is_the_one_the_verifier_recomputes(fresh_scope, query):
    client = fresh_scope()
    ids = world(client)
    page, *_ = client.search("hipporag2", {"profile": "hipporag2_v1", "query_vector": query,
                                           "space_id": ids["space_id"], "limit": 4})
    table = recomputed(ids)
    unit = query_unit(np.array(query, dtype=np.float32))
    failures = list(page_failures(page["hipporag2"], page["hits"], table, exact_cosines(table.fact_units, unit),
                                  exact_cosines(table.passage_units, unit), HIPPORAG2, 4, 2e-6))
    assert failures == []
    assert page["hipporag2"]["graph"] == {"passages": 4, "phrases": 4, "facts": 3, "edges": 10}
    assert sorted(h["id"] for h in page["hits"]) == sorted(ids[key] for key in PASSAGES)
    # and a page edited by one unit is caught
    page["hits"][0]["mass"] += 1
    assert list(page_failures(page["hipporag2"], page["hits"], table, exact_cosines(table.fact_units, unit),
                              exact_cosines(table.passage_units, unit), HIPPORAG2, 4, 2e-6))


def test_graph_nodes_are_no_documents_of_any_other_method(fresh_scope):
    client = fresh_scope()
    ids = world(client)
    page, *_ = client.search("lexical", {"profile": "bm25_v1", "query": "orin tessa velmar brel flows", "limit": 20})
    assert {h["id"] for h in page["hits"]} <= {ids[key] for key in PASSAGES}
    page, *_ = client.search("semantic", {"profile": "cosine_exact_v1", "query_vector": [1.0, 0.1, 0.0, 0.0],
                                          "space_id": ids["space_id"], "limit": 20, "min_score": -1.0})
    assert sorted(h["id"] for h in page["hits"]) == sorted(ids[key] for key in PASSAGES)


def refused(call, status: int, code: str, client) -> str:
    before = client.fence()["high_watermark"]
    with pytest.raises(LabError) as caught:
        call()
    assert (caught.value.status, caught.value.code) == (status, code), caught.value
    assert client.fence()["high_watermark"] == before, "a refused write writes nothing"
    return str(caught.value)


def test_bad_graph_writes_get_a_4xx_and_write_nothing(fresh_scope):
    client = fresh_scope()
    ids = world(client)
    refused(lambda: client.create_memories([node("x", "a fact", "fact", subject="a")]), 422, "invalid_graph_node", client)
    refused(lambda: client.create_memories([node("y", "z", "topic")]), 422, "invalid_graph_node", client)
    for kind, evidence in (("states", "triples:0"), ("states", "count:1"), ("synonym_of", "cosine:2.5"),
                           ("synonym_of", "cosine:nan")):
        refused(lambda: client.assert_relations([relation_item("bad", ids["p3"], ids["f0"], kind=kind,
                                                               evidence_ref=evidence)]),
                422, "invalid_evidence", client)
    message = refused(lambda: client.update_memories([{"idempotency_key": "u", "id": ids["p0"], "revision": 1,
                                                       "payload": {"content": "now a phrase",
                                                                   "metadata": {"graph_node": "phrase"}}}]),
                      409, "graph_node_fixed", client)
    assert "a document stays a document" in message


def test_a_scope_without_the_graph_is_answered_409(fresh_scope):
    client = fresh_scope()
    made = client.create_memories([memory_item("p", content="a passage")])["receipts"]
    space_id = client.attach_embeddings([embedding_item("v", made[0]["id"])])["receipts"][0]["space_id"]
    with pytest.raises(LabError) as caught:
        client.search("hipporag2", {"profile": "hipporag2_v1", "query_vector": [1.0, 0.0, 0.0, 0.0],
                                    "space_id": space_id, "limit": 3})
    assert (caught.value.status, caught.value.code) == (409, "no_hipporag2_graph")
