"""imported_triples_v1 (docs/graph-import.md): the title graph kept byte for byte, one star per shared
argument with its predicates, the rebuild from the pinned section, and the evaluator's own reading
agreeing with the builder and catching every hand edit."""

from __future__ import annotations

import copy

import pytest

from builders import imported_graph, title_graph
from builders.graph_builders import rebuild
from builders.title_graph import GraphInputError
from evaluator.entity_relations import entity_failures
from ground.artifacts import document_id
from ground.canonical import digest

SOURCE = "0" * 64
TEXTS = [(f"Place {i}", f"Place {i} lies on the river Orin near Place {i + 1}.") for i in range(70)]


def corpus() -> list[dict]:
    return sorted(({"id": document_id(t, p), "title": t, "paragraph_text": p} for t, p in TEXTS), key=lambda d: d["id"])


def section(docs: list[dict]) -> dict:
    """An imported section: every passage names the river (70 passages: too common to link), its
    own place, and its neighbour place in another spelling (case, spaces, NFKC), so each neighbour
    pair shares exactly one argument; one passage carries predicates too long to fit."""
    by_title = {d["title"]: d["id"] for d in docs}
    out = []
    for i in range(70):
        triples = [[f"Place {i}", "lies on", "river Orin"], [f"Place {i}", "lies near", f"  PLACE   {i + 1} "]]
        if i == 3:
            triples.append([f"Place {i}", "x" * 500 + " b", "Place 4"])
            triples.append([f"Place {i}", "x" * 500 + " a", "Place 4"])
            triples.append([f"Place {i}", "x" * 150, "ｐｌａｃｅ 4"])  # fullwidth letters: NFKC makes them "place 4"
        out.append({"id": by_title[f"Place {i}"], "triples": triples})
    out.sort(key=lambda d: d["id"])
    return {"format": "lab_triples_v1", "producer": "a test", "files": {}, "policy": {}, "counts": {},
            "left_out": {}, "documents": out}


@pytest.fixture(scope="module")
def built() -> dict:
    docs = corpus()
    return imported_graph.build_relations(docs, SOURCE, section(docs))


def test_the_title_graph_is_kept_byte_for_byte(built):
    title = title_graph.build_relations(corpus(), SOURCE)["relations"]
    assert [r for r in built["relations"] if r["kind"] in title_graph.KINDS] == title


def test_one_star_per_shared_argument_with_its_predicates(built):
    argument = [r for r in built["relations"] if r["kind"] == imported_graph.KIND]
    # place k (k = 1..69) is named by passage k and passage k-1: one relation each; "river orin" by 70: none
    assert len(argument) == 69
    assert all(r["provenance"]["evidence_ref"].split("\n")[0] != "argument:river orin" for r in argument)
    ids = {d["title"]: d["id"] for d in corpus()}
    five = next(r for r in argument if r["provenance"]["evidence_ref"].startswith("argument:place 5\n"))
    assert {five["source"], five["target"]} == {ids["Place 4"], ids["Place 5"]}
    assert five["source"] == min(ids["Place 4"], ids["Place 5"])
    assert five["provenance"]["evidence_ref"] == "argument:place 5\npredicates:lies near | lies on"
    assert five["provenance"] == {**five["provenance"], "origin": "external_model", "model": "a test",
                                  "method": "imported_triples_v1"}


def test_predicates_are_cut_at_whole_predicates_to_fit_the_reference(built):
    four = next(r for r in built["relations"] if r["provenance"]["evidence_ref"].startswith("argument:place 4\n"))
    ref = four["provenance"]["evidence_ref"]
    assert len(ref) <= 1024 and ref.endswith(" (+1 more)")
    assert ref.split("predicates:")[1].split(" | ")[0] == "lies near"


def test_the_rebuild_from_the_pinned_section_is_byte_for_byte(built):
    assert digest(rebuild(built)) == digest(built)


def test_the_evaluators_own_reading_agrees(built):
    assert entity_failures(built) == []


def test_a_short_last_predicate_fits_whole_rather_than_cut():
    """The longest prefix wins even when a shorter cut would need the longer note."""
    head = "argument:a\npredicates:"
    first = "p" * (1024 - len(head) - len(" | zz"))
    assert imported_graph.evidence("a", {first, "zz"}) == head + first + " | zz"


def test_every_hand_edit_fails(built):
    edited = copy.deepcopy(built)
    edited["imported"]["documents"][0]["triples"][1][2] = "somewhere else"  # its neighbour link
    assert entity_failures(edited) == ["the imported graph is missing or is not the one imported_digest pins"]
    with pytest.raises(GraphInputError, match="imported_digest"):
        rebuild(edited)
    edited["imported_digest"] = digest(edited["imported"])  # the digest made to follow: the relations do not
    assert entity_failures(edited)
    for change in ("evidence", "drop", "add"):
        edited = copy.deepcopy(built)
        argument = [r for r in edited["relations"] if r["kind"] == imported_graph.KIND]
        if change == "evidence":
            argument[0]["provenance"]["evidence_ref"] += " | invented"
        elif change == "drop":
            edited["relations"].remove(argument[0])
        else:
            edited["relations"].append({**argument[0], "id": "edge-" + "f" * 64})
        failures = entity_failures(edited)
        assert failures, change


def test_a_section_naming_a_passage_outside_the_projection_is_refused():
    docs = corpus()
    stray = section(docs)
    stray["documents"].append({"id": "musique-" + "0" * 64, "triples": [["a", "b", "c"]]})
    with pytest.raises(GraphInputError, match="is not in the projection"):
        imported_graph.build_relations(docs, SOURCE, stray)
