"""document_entity_graph_v1 (docs/graph-v4.md): names read from capitals on hand-built sentences, the
shares_name relations on small corpora, the title graph kept byte for byte, the evaluator's own
recomputation agreeing with the builder (random corpora, the shared samples) and catching a tampered
file, and the protocol and import refusing a builder that is not the protocol's."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from builders import entity_graph
from builders.graph_builders import SOURCE_BUILDERS, rebuild
from builders.names import name_runs, text_keys
from builders.title_graph import GraphInputError, project
from builders.title_graph import build_relations as title_relations
from evaluator.entity_relations import entity_failures, recompute_links
from evaluator.inputs import InputMismatch, _verify_relations
from ground.artifacts import document_id
from ground.canonical import digest
from ground.errors import RefusedInput
from protocols.committed import committed_file
from protocols.schema import ProtocolError, validate_protocol
from tests.conftest import SHARED_DATA, require_shared

REPO = Path(__file__).resolve().parents[2]
SOURCE = "0" * 64
KIND = entity_graph.KIND


def doc(title: str, text: str) -> dict:
    return {"id": document_id(title, text), "title": title, "paragraph_text": text}


def links(docs: list[dict]) -> dict[tuple[str, str], str]:
    value = entity_graph.build_relations(docs, SOURCE)
    return {(r["source"], r["target"]): r["provenance"]["evidence_ref"].removeprefix("shared_name:")
            for r in value["relations"] if r["kind"] == KIND}


def pair(a: dict, b: dict) -> tuple[str, str]:
    return (min(a["id"], b["id"]), max(a["id"], b["id"]))


# --- names -------------------------------------------------------------------------------------------

def test_name_runs_follow_capitals_joiners_and_gaps():
    text = ("The film was directed by Raoul Walsh and starred Douglas Fairbanks Jr., with the Bank of America "
            "Plaza, Apollo 11 and Greenfield-Central High School in Atwater, Ohio. In Paris he met Anne of.")
    assert name_runs(text) == [["raoul", "walsh"], ["douglas", "fairbanks", "jr"],
                               ["bank", "of", "america", "plaza"], ["apollo", "11"],
                               ["greenfield", "central", "high", "school"], ["atwater"], ["ohio"], ["paris"],
                               ["anne"]]
    # "The" and "In" open sentences (dropped); the trailing joiner of "Anne of" is dropped; a comma ends a run


def test_keys_are_subruns_starting_with_a_capital_and_eligible():
    keys = text_keys("Songs by Bank of America Plaza and 1999 and Apollo 11 and Rome and War.", 4)
    assert {"bank", "bank of america", "bank of america plaza", "america plaza", "plaza", "apollo", "apollo 11",
            "rome"} <= keys
    assert "of america" not in keys and "bank of" not in keys  # a key never starts or ends with a joiner
    assert "war" not in keys and "1999" not in keys and "11" not in keys  # short single words and numbers
    assert "songs" in keys  # a capital opening a sentence is a name unless it is a listed function word
    assert max(len(k.split()) for k in text_keys("Alpha Beta Gamma Delta Epsilon", 4)) == 4


# --- shares_name ------------------------------------------------------------------------------------------

def test_a_name_held_by_two_or_three_paragraphs_links_each_pair():
    a = doc("Jump for Glory", "A 1937 film directed by Raoul Walsh.")
    b = doc("Betrayed", "A 1917 film directed by Raoul Walsh, starring Miriam Cooper.")
    c = doc("Sadie Thompson", "Raoul Walsh acted in it.")
    d = doc("Other", "A film without a shared name.")
    got = links([a, b, c, d])
    assert got == {pair(a, b): "raoul walsh", pair(a, c): "raoul walsh", pair(b, c): "raoul walsh"}
    assert all(source < target for source, target in got)  # undirected: one relation, smaller id first


def test_a_name_held_by_one_or_four_paragraphs_links_nothing():
    alone = [doc("One", "Miriam Cooper starred."), doc("Two", "Nobody else.")]
    assert links(alone) == {}
    common = [doc(f"Film {i}", f"Made in the United States, number {i}.") for i in range(4)]
    assert links(common) == {}  # four holders: too common to be a bridge


def test_evidence_is_the_longest_shared_key_then_the_smallest():
    a = doc("A", "Douglas Fairbanks Jr starred with Alan Hale.")
    b = doc("B", "Douglas Fairbanks Jr and Alan Hale again.")
    assert links([a, b]) == {pair(a, b): "douglas fairbanks jr"}
    c, d = doc("C", "Zeta Beta met Alpha Gamma."), doc("D", "Alpha Gamma saw Zeta Beta.")
    assert links([c, d]) == {pair(c, d): "alpha gamma"}  # two keys of two words: the smaller


def test_the_title_graph_is_kept_byte_for_byte_and_the_file_rebuilds():
    docs = [doc("Raoul Walsh", "An American director."), doc("Betrayed", "Directed by Raoul Walsh, with Miriam Cooper."),
            doc("Jump for Glory", "Raoul Walsh directed it; Miriam Cooper did not."), doc("Raoul Walsh", "Born 1887.")]
    value = entity_graph.build_relations(docs, SOURCE)
    title = title_relations(docs, SOURCE)
    assert [r for r in value["relations"] if r["kind"] != KIND] == title["relations"]
    assert value["counts"] == {**title["counts"], KIND: 1}  # "raoul walsh" is held by 2 texts, "miriam cooper" too
    assert value["method"] == "document_entity_graph_v1" and value["policy"]["title_graph"] == title["policy"]
    assert [r["id"] for r in value["relations"]] == sorted(r["id"] for r in value["relations"])
    assert rebuild(json.loads(json.dumps(value))) == value
    entity = next(r for r in value["relations"] if r["kind"] == KIND)
    assert entity["provenance"] == {"origin": "tool_observation", "method": "document_entity_graph_v1",
                                    "method_revision": digest(entity_graph.POLICY),
                                    "evidence_ref": "shared_name:miriam cooper", "model": None}
    assert entity["id"] == "edge-" + digest([entity["source"], entity["target"], KIND])


def test_the_builder_sees_the_projection_only():
    bad = [{**doc("A", "Text."), "question": "leak?"}]
    with pytest.raises(GraphInputError, match="accepts exactly id, title, paragraph_text"):
        entity_graph.build_relations(bad, SOURCE)


# --- the evaluator's own recomputation ------------------------------------------------------------------

WORDS = ["Raoul", "Walsh", "Miriam", "Cooper", "Bank", "America", "Apollo", "Rome", "Ohio", "Indiana", "The", "In",
         "of", "de", "von", "the", "and", "film", "river", "born", "11", "1999", "Ünal", "İstanbul", "ǅemal", "Straße"]
GAPS = [" ", " ", " ", "  ", "-", " - ", ", ", ". ", " (", ") ", "\n", "—", "'", " ／ "]


def random_corpus(rng: random.Random, n: int) -> list[dict]:
    docs = []
    for i in range(n):
        parts = []
        for _ in range(rng.randint(3, 30)):
            parts += [rng.choice(WORDS), rng.choice(GAPS)]
        docs.append(doc(f"Doc {i}", "".join(parts) + str(i)))
    return docs


@pytest.mark.parametrize("seed", range(6))
def test_the_evaluator_recomputes_the_builders_relations(seed):
    docs = random_corpus(random.Random(seed), 60)
    value = entity_graph.build_relations(docs, SOURCE)
    assert value["counts"][KIND] > 0
    assert recompute_links(value["projection"], value["policy"]["entity"]) == \
        entity_graph.entity_links(value["projection"], entity_graph.ENTITY_POLICY)
    assert entity_failures(value) == []


def test_the_evaluator_catches_a_tampered_entity_relation():
    value = entity_graph.build_relations(random_corpus(random.Random(1), 60), SOURCE)
    entity = [i for i, r in enumerate(value["relations"]) if r["kind"] == KIND]
    dropped = copy.deepcopy(value)
    del dropped["relations"][entity[0]]
    assert "is missing" in entity_failures(dropped)[0]
    renamed = copy.deepcopy(value)
    renamed["relations"][entity[0]]["provenance"]["evidence_ref"] = "shared_name:someone else"
    assert "differs" in entity_failures(renamed)[0]
    invented = copy.deepcopy(value)
    invented["relations"].append({**value["relations"][entity[0]], "id": "edge-" + "f" * 64})
    assert "links no shared rare name" in entity_failures(invented)[0]
    # on load, the evaluator refuses the file even when its digests were made to agree
    forged = copy.deepcopy(value)
    forged["relations"] = dropped["relations"]
    source = {"documents": [{**d, "text": d["title"] + "\n" + d["paragraph_text"]} for d in value["projection"]]}
    with pytest.raises(InputMismatch):
        _verify_relations(forged, source, SOURCE)


@pytest.mark.parametrize("sample", ["musique-sample", "hotpotqa-sample", "2wikimultihopqa-sample"])
def test_the_evaluator_agrees_on_the_shared_samples(sample, tmp_path):
    from importer import import_source

    data = require_shared(SHARED_DATA / sample)
    name = sample.removesuffix("-sample")
    out = tmp_path / "source.json"
    import_source(committed_file(f"{name}-sample-v4.json"), data, out, tmp_path / "relations.json",
                  graph_builder=SOURCE_BUILDERS["document_entity_graph_v1"])
    relations = json.loads((tmp_path / "relations.json").read_text())
    assert relations["counts"][KIND] > 0 and entity_failures(relations) == []
    assert relations["projection"] == project(json.loads(out.read_text()))


# --- protocol and import --------------------------------------------------------------------------------

def test_a_protocol_whose_walk_follows_names_needs_the_entity_builder():
    protocol = json.loads(committed_file("musique-sample-v4.json").read_text())
    validate_protocol(copy.deepcopy(protocol))
    protocol["graph_builder"]["method"] = "document_title_graph_v1"
    with pytest.raises(ProtocolError, match="entity_step.relations"):
        validate_protocol(protocol)


def test_the_import_refuses_a_builder_that_is_not_the_protocols(tmp_path):
    from importer import import_source

    data = require_shared(SHARED_DATA / "musique-sample")
    with pytest.raises(RefusedInput, match="the protocol names 'document_entity_graph_v1'"):
        import_source(committed_file("musique-sample-v4.json"), data, tmp_path / "s.json", tmp_path / "r.json",
                      graph_builder=SOURCE_BUILDERS["document_title_graph_v1"])
    assert not (tmp_path / "s.json").exists() and not (tmp_path / "r.json").exists()
