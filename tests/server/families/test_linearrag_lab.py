"""The linearrag route over HTTP against a real lab: its page on a small world (the one docs/api.md
shows), its node memories no other method ranks, and bad input answered 4xx with nothing written."""

from __future__ import annotations

import pytest

from bench.api_examples import PASSAGES, body, build_world
from evaluator.connection.client import LabError


def test_the_page_links_bridges_and_walks(fresh_scope):
    client = fresh_scope()
    space_id = build_world(client)["space_id"]
    page, *_ = client.search("linearrag", {**body("linearrag", space_id), "limit": 5})
    section = page["linearrag"]
    assert section["graph"] == {"passages": 5, "entities": 3, "sentences": 3, "edges": 6}
    assert [(link["entity"], link["node"]) for link in section["links"]] == [("france", "France"), ("paris", "Paris")]
    assert section["rounds"][0] and section["iterations"] >= 1
    masses = [hit["mass"] for hit in page["hits"]]
    assert len(masses) == 5 and masses == sorted(masses, reverse=True) and all(m is not None for m in masses)
    # without entities: the dense order, no walk
    dense, *_ = client.search("linearrag", {**body("linearrag", space_id), "entity_vectors": []})
    assert dense["linearrag"]["iterations"] == 0 and all(hit["mass"] is None for hit in dense["hits"])
    lexical, *_ = client.search("lexical", {"query": "Paris Seine France Europe river", "limit": 20})
    assert len(lexical["hits"]) <= len(PASSAGES)  # the entity and sentence nodes are no documents


def refused(client, request: dict, status: int, code: str) -> None:
    with pytest.raises(LabError) as caught:
        client.search("linearrag", request)
    assert (caught.value.status, caught.value.code) == (status, code), caught.value


def test_bad_input_gets_a_4xx(fresh_scope):
    client = fresh_scope()
    space_id = build_world(client)["space_id"]
    good = body("linearrag", space_id)
    refused(client, {**good, "entity_vectors": [{"phrase": "paris"}]}, 422, "invalid_entity_vectors")
    refused(client, {**good, "entity_vectors": good["entity_vectors"][::-1]}, 422, "invalid_entity_vectors")
    refused(client, {**good, "entity_vectors": [{"phrase": "paris", "vector": [0.0, 0.0, 0.0]}]}, 422, "invalid_vector")
    refused(client, {**good, "profile": "linearrag_v9"}, 422, "unknown_profile")
    refused(client, {**good, "limit": 101}, 422, "out_of_range")
    empty = fresh_scope()
    empty.request("POST", f"/api/v1/scopes/{empty.scope}/memories", {"items": [
        {"idempotency_key": "d", "external_id": "d", "payload": {"content": "Paris"}}]})
    refused(empty, good, 422, "unknown_space")  # no vector bound in this scope at all


def test_v2_draws_what_linearrag_leaves_to_chance_per_question(fresh_scope):
    """A twin entity ("Paris\\n", a title line, with Paris's very vector): v1 always links Paris, the
    first in ascending text; v2 breaks the exact tie by the question's draw, so over questions both
    are linked, each question always the same way, and the question's entities come in the drawn order."""
    from bench.api_examples import LINEAR_ENTITIES, SEARCH_SPACE
    from protocols.families.graphs.linearrag import DRAW, draw_key

    client = fresh_scope()
    space_id = build_world(client)["space_id"]
    s = f"/api/v1/scopes/{client.scope}"
    (made,) = client.request("POST", f"{s}/memories", {"items": [
        {"idempotency_key": "entity-twin", "external_id": "~le:twin",
         "payload": {"content": "Paris\n", "metadata": {"graph_node": "entity"}}}]}).json()["receipts"]
    client.request("POST", f"{s}/embeddings", {"items": [
        {"idempotency_key": "emb-twin", "record_id": made["id"], "revision": 1, "space": SEARCH_SPACE,
         "vector": LINEAR_ENTITIES["Paris"]}]})
    linked = {"linearrag_musique_v1": [], "linearrag_musique_v2": []}
    for i in range(16):
        request = {**body("linearrag", space_id), "query_vector": [0.8, 0.5, 0.2 + i / 100], "limit": 5,
                   "entity_vectors": [{"phrase": "paris", "vector": LINEAR_ENTITIES["Paris"]},
                                      {"phrase": "seine", "vector": LINEAR_ENTITIES["Seine"]}]}
        for profile in linked:
            page, *_ = client.search("linearrag", {**request, "profile": profile})
            links = page["linearrag"]["links"]
            linked[profile].append(next(link["node"] for link in links if link["entity"] == "paris"))
            if profile.endswith("v2"):
                question = page["query_receipt"]["vector_sha256"]
                order = sorted(["paris", "seine"], key=lambda text: draw_key(DRAW, question, text))
                assert [link["entity"] for link in links] == order
                again, *_ = client.search("linearrag", {**request, "profile": profile})
                assert again["linearrag"] == page["linearrag"]
    assert set(linked["linearrag_musique_v1"]) == {"Paris"}
    assert set(linked["linearrag_musique_v2"]) == {"Paris", "Paris\n"}
