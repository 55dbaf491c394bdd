"""hipporag_ner inside a real lab (docs/hipporag2.md): phrase nodes with vectors and `mentions`
relations make the NER graph, the route links each question entity to its nearest phrase, and the
page is the one the evaluator's verifier recomputes from the same graph; bad input gets a 4xx."""

from __future__ import annotations

import numpy as np
import pytest

from builders.hipporag2_graph import add_synonyms, build_ner
from evaluator.connection.client import LabError
from evaluator.verification.verifiers.graphs.hipporag2.hipporag2_verifier import (
    Table,
    edge_arrays,
    exact_cosines,
    query_unit,
    unit_rows,
)
from evaluator.verification.verifiers.graphs.hipporag2.ner_verifier import page_failures
from protocols.families.graphs.hipporag2 import HIPPORAG_NER, PASSAGE, PHRASE
from tests.lab_fixtures import embedding_item, memory_item, relation_item

PASSAGES = {"p0": ("The Orin flows into Tessa.", [1.0, 0.2, 0.0, 0.1]),
            "p1": ("Tessa lies in Velmar.", [0.1, 1.0, 0.3, 0.0]),
            "p2": ("Velmar borders Brel.", [0.0, 0.3, 1.0, 0.2]),
            "p3": ("A passage without entities.", [0.2, 0.1, 0.1, 1.0])}
# phrase -> (vector, the passages mentioning it, their labels); "tessa" and "tessa lake" share a vector:
# an entity near both links to the first by phrase
PHRASES = {"brel": ([0.0, 0.0, 1.0, 0.3], ["p2"], "GPE"),
           "orin": ([1.0, 0.0, 0.0, 0.0], ["p0"], "LOC"),
           "tessa": ([0.0, 1.0, 0.0, 0.0], ["p0", "p1"], "LOC"),
           "tessa lake": ([0.0, 1.0, 0.0, 0.0], ["p1"], "LOC"),
           "velmar": ([0.0, 0.2, 1.0, 0.0], ["p1", "p2"], "GPE,PERSON")}
SYNONYM = ("orin", "brel", 0.85)


def world(client) -> dict:
    ids = {key: r["id"] for key, r in zip(PASSAGES, client.create_memories(
        [memory_item(key, content=text) for key, (text, _) in PASSAGES.items()])["receipts"])}
    made = client.create_memories([memory_item("e:" + p, content=p, graph_node="phrase") for p in PHRASES])["receipts"]
    ids.update(zip(["e:" + p for p in PHRASES], (r["id"] for r in made)))
    receipts = client.attach_embeddings(
        [embedding_item("v" + key, ids[key], vector=vector) for key, (_, vector) in PASSAGES.items()]
        + [embedding_item("ve" + p, ids["e:" + p], vector=vector) for p, (vector, _, _) in PHRASES.items()])["receipts"]
    client.assert_relations(
        [relation_item(f"m{p}{pid}", ids[pid], ids["e:" + p], kind="mentions", evidence_ref="ner:" + labels)
         for p, (_, pids, labels) in PHRASES.items() for pid in pids]
        + [relation_item("syn", ids["e:" + SYNONYM[0]], ids["e:" + SYNONYM[1]], kind="synonym_of",
                         evidence_ref=f"cosine:{SYNONYM[2]!r}")])
    ids["space_id"] = receipts[0]["space_id"]
    return ids


def recomputed(ids: dict) -> Table:
    """The evaluator's own table of the same graph, under the lab's record ids."""
    ner = {"documents": [{"id": ids[key], "entities": [[p, labels.split(",")[0]] for p, (_, pids, labels)
                                                       in PHRASES.items() if key in pids]} for key in PASSAGES]}
    passages = sorted(ids[key] for key in PASSAGES)
    graph = add_synonyms(build_ner(passages, ner), {SYNONYM[0]: [(SYNONYM[1], SYNONYM[2])]})
    undirected = graph.undirected()
    nodes = [PASSAGE + p for p in passages] + sorted({n for pair in undirected for n in pair if n.startswith(PHRASE)})
    return Table(passages, [], {}, np.zeros((0, 0)),
                 unit_rows([np.array(PASSAGES[k][1], dtype=np.float32) for k in sorted(PASSAGES, key=ids.__getitem__)]),
                 {one: len(held) for one, held in graph.holders.items()}, graph.phrases,
                 unit_rows([np.array(PHRASES[p][0], dtype=np.float32) for p in graph.phrases]).astype(np.float64),
                 nodes, edge_arrays(nodes, undirected, HIPPORAG_NER["pagerank"]["transition_bits"]), len(undirected))


def search(client, ids: dict, query, entities: list, limit: int = 4) -> dict:
    page, *_ = client.search("hipporag_ner", {
        "profile": "hipporag_ner_v1", "query_vector": query, "space_id": ids["space_id"], "limit": limit,
        "entity_vectors": [{"phrase": text, "vector": vector} for text, vector in entities]})
    return page


def failures(page: dict, ids: dict, query, entities: list, limit: int = 4) -> list:
    table = recomputed(ids)
    dense = exact_cosines(table.passage_units, query_unit(np.array(query, dtype=np.float32)))
    given = [(text, np.array(vector, dtype=np.float32)) for text, vector in entities]
    return list(page_failures(page["hipporag_ner"], page["hits"], table, given, dense, HIPPORAG_NER, limit, 2e-6))


CASES = [
    ([1.0, 0.0, 0.0, 0.0], [("orin river", [0.9, 0.1, 0.0, 0.0]), ("velmar", [0.0, 0.2, 1.0, 0.0])]),
    ([0.0, 0.2, 1.0, 0.0], [("the tessa", [0.0, 1.0, 0.05, 0.0])]),  # a tie: tessa and tessa lake
    ([0.3, 0.3, 0.3, 0.3], []),  # no entity: the dense order
]


@pytest.mark.parametrize("query, entities", CASES)
def test_the_labs_page_is_the_one_the_verifier_recomputes(fresh_scope, query, entities):
    client = fresh_scope()
    ids = world(client)
    page = search(client, ids, query, entities)
    assert failures(page, ids, query, entities) == []
    section = page["hipporag_ner"]
    assert section["graph"] == {"passages": 4, "phrases": 5, "facts": 0, "edges": 8}
    assert [e["entity"] for e in section["entities"]] == [text for text, _ in entities]
    if entities:
        assert all(h["mass"] is not None for h in page["hits"]) and section["iterations"] >= 1
    else:
        assert all(h["mass"] is None for h in page["hits"]) and section["iterations"] == 0
    # and a page edited by one unit is caught (on the dense order, a mass where none belongs)
    page["hits"][0]["mass"] = page["hits"][0]["mass"] + 1 if entities else 1
    assert failures(page, ids, query, entities)


def test_an_entity_links_to_its_nearest_phrase_ties_by_phrase_and_weighs_one_over_its_passages(fresh_scope):
    client = fresh_scope()
    ids = world(client)
    query, entities = CASES[0]
    page = search(client, ids, query, entities)
    assert [(e["entity"], e["phrase"]) for e in page["hipporag_ner"]["entities"]] == [
        ("orin river", "orin"), ("velmar", "velmar")]
    units = 20 << 16  # a weight of 1 in the passage seeds' unit of 2^-16 / 20
    assert page["hipporag_ner"]["phrases"] == [{"phrase": "orin", "units": units},
                                                {"phrase": "velmar", "units": units // 2}]
    tie = search(client, ids, *CASES[1])
    assert tie["hipporag_ner"]["entities"][0]["phrase"] == "tessa"


def test_a_page_linking_a_farther_phrase_or_another_seed_fails(fresh_scope):
    client = fresh_scope()
    ids = world(client)
    query, entities = CASES[0]
    page = search(client, ids, query, entities)
    page["hipporag_ner"]["entities"][1]["phrase"] = "brel"
    rank, field, message = failures(page, ids, query, entities)[0]
    assert (rank, field[: len("entities[1]")]) == (None, "entities[1]") and "'velmar'" in message
    page = search(client, ids, query, entities)
    page["hipporag_ner"]["phrases"][1]["units"] += 1
    assert failures(page, ids, query, entities)[0][:2] == (None, "phrases")


def refused_search(client, body: dict, status: int, code: str) -> None:
    with pytest.raises(LabError) as caught:
        client.search("hipporag_ner", body)
    assert (caught.value.status, caught.value.code) == (status, code), caught.value


def test_bad_input_gets_a_4xx(fresh_scope):
    client = fresh_scope()
    ids = world(client)
    body = {"profile": "hipporag_ner_v1", "query_vector": [1.0, 0.0, 0.0, 0.0], "space_id": ids["space_id"],
            "limit": 3}
    unordered = [{"phrase": "velmar", "vector": [0.0, 0.0, 1.0, 0.0]}, {"phrase": "orin", "vector": [1.0, 0, 0, 0]}]
    refused_search(client, {**body, "entity_vectors": unordered}, 422, "invalid_entity_vectors")
    refused_search(client, {**body, "entity_vectors": [{"phrase": "orin"}]}, 422, "invalid_entity_vectors")
    refused_search(client, {**body, "entity_vectors": [{"phrase": "orin", "vector": [1.0, 0.0]}]}, 422,
                   "dimension_mismatch")
    refused_search(client, {**body, "entity_vectors": [{"phrase": "x", "vector": [1.0, 0, 0, 0]}] * 65}, 422,
                   "invalid_entity_vectors")
    before = client.fence()["high_watermark"]
    for evidence in ("ner:", "ner:person", "labels:GPE"):
        with pytest.raises(LabError) as caught:
            client.assert_relations([relation_item("bad", ids["p3"], ids["e:orin"], kind="mentions",
                                                   evidence_ref=evidence)])
        assert (caught.value.status, caught.value.code) == (422, "invalid_evidence")
    assert client.fence()["high_watermark"] == before, "a refused write writes nothing"


def test_a_graph_without_linkable_phrase_vectors_is_answered_409(fresh_scope):
    """No vector at all in the graph: no graph; a vector only on a phrase no passage mentions: no link target."""
    client = fresh_scope()
    made = client.create_memories([memory_item("p", content="a passage"),
                                   memory_item("e", content="orin", graph_node="phrase"),
                                   memory_item("f", content="tessa", graph_node="phrase")])["receipts"]
    space_id = client.attach_embeddings([embedding_item("v", made[0]["id"])])["receipts"][0]["space_id"]
    client.assert_relations([relation_item("m", made[0]["id"], made[2]["id"], kind="mentions", evidence_ref="ner:LOC")])
    body = {"profile": "hipporag_ner_v1", "query_vector": [1.0, 0.0, 0.0, 0.0], "space_id": space_id, "limit": 3,
            "entity_vectors": [{"phrase": "orin", "vector": [1.0, 0.0, 0.0, 0.0]}]}
    refused_search(client, body, 409, "no_hipporag2_graph")
    client.attach_embeddings([embedding_item("ve", made[1]["id"])])
    refused_search(client, body, 409, "no_phrase_vectors")
