"""hipporag_ner as a user meets it (docs/hipporag2.md): the own-data page's question and passages
under a protocol of `lab protocol new --ner-graph`, through `lab run` with
the real model, the real spaCy pipeline and a real lab; then `lab audit` failing on a hand-edited
phrase seed, entity link, mass, iteration count or synonym edge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocols.families.graphs.hipporag2 import FIXTURE_SECTION, HIPPORAG_NER
from tests.conftest import lab_cli
from tests.importer.test_own_data_rows import shown as own_data_blocks
from tests.lab.campaigns.test_hipporag2_run import audit_of

pytestmark = pytest.mark.heavy  # a whole campaign with the real model and spaCy (about 20 s)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hipporag-ner-run")
    own = own_data_blocks()
    (folder / "data").mkdir()
    (folder / "data" / "questions.json").write_text(own["hipporag_musique_v1"], encoding="utf-8")
    (folder / "data" / "corpus.json").write_text(own["hipporag_*"], encoding="utf-8")
    lab_cli("protocol", "new", "--questions", folder / "data" / "questions.json", "--corpus",
            folder / "data" / "corpus.json", "--layout", "hipporag_musique_v1", "--test", "all",
            "--output", folder / "mine-ner-v1.json", "--ner-graph")
    protocol = json.loads((folder / "mine-ner-v1.json").read_text(encoding="utf-8"))
    assert protocol["graph_builder"] == {"method": "document_ner_graph_v1"}
    assert protocol["ranking_profiles"]["hipporag_ner_v1"] == HIPPORAG_NER
    assert protocol["evaluation"]["primary_contrast"]["candidate"] == "hipporag_ner"
    run_dir = folder / "runs" / "ner"
    done = lab_cli("run", "--protocol", folder / "mine-ner-v1.json", "--data-dir", folder / "data",
                   "--run-dir", run_dir, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "== audit: exit 0" in done.stderr  # the stage's own output goes to its process
    return run_dir


def test_ner_graph_and_an_imported_graph_are_refused_together(tmp_path):
    done = lab_cli("protocol", "new", "--questions", tmp_path / "q.json", "--layout", "musique_v1", "--test", "all",
                   "--output", tmp_path / "x.json", "--ner-graph", "--graph", tmp_path / "g.json", "--graph-format",
                   "lab_triples_v1", "--producer", "me", check=False)
    assert done.returncode == 2 and "--graph and --ner-graph" in done.stderr
    assert not (tmp_path / "x.json").exists()


def row_of(report: dict) -> dict:
    return next(row for row in report["rows"] if row["method"] == "hipporag_ner")


def test_the_question_links_to_the_passages_entities(finished):
    report = json.loads((finished / "report.json").read_text(encoding="utf-8"))
    section = row_of(report)["page"]["hipporag_ner"]
    assert section["graph"]["passages"] == 3 and section["graph"]["facts"] == 0
    assert section["entities"] and section["phrases"] and section["iterations"] >= 1
    fixture = json.loads((finished / "fixture.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in fixture[FIXTURE_SECTION]["phrases"]] == [
        "lake tessa", "mount brel", "the orin river", "the orin valley", "velmar"]
    assert fixture[FIXTURE_SECTION]["graph"] == "ner_entities"


def edit_section(field: str, change):
    def edit(report):
        change(row_of(report)["page"]["hipporag_ner"][field])
    return edit


def test_a_hand_edited_phrase_seed_fails_the_audit(finished, tmp_path):
    edit = edit_section("phrases", lambda phrases: phrases[0].update(units=phrases[0]["units"] + 1))
    assert "hipporag_ner.phrases:" in audit_of(finished, tmp_path, edit)


def test_a_hand_edited_entity_link_fails_the_audit(finished, tmp_path):
    def relink(entities):
        entities[0]["phrase"] = "mount brel" if entities[0]["phrase"] != "mount brel" else "velmar"

    assert "hipporag_ner.entities[0]" in audit_of(finished, tmp_path, edit_section("entities", relink))


def test_a_hand_edited_mass_fails_the_audit(finished, tmp_path):
    def edit(report):
        row_of(report)["page"]["hits"][0]["mass"] -= 1

    assert "rank 1, mass:" in audit_of(finished, tmp_path, edit)


def test_a_hand_edited_iteration_count_fails_the_audit(finished, tmp_path):
    def edit(report):
        row_of(report)["page"]["hipporag_ner"]["iterations"] -= 1

    assert "hipporag_ner.iterations:" in audit_of(finished, tmp_path, edit)


def test_a_hand_edited_synonym_edge_fails_the_audit(finished, tmp_path):
    def edit(fixture):
        fixture[FIXTURE_SECTION]["synonyms"].append(["lake tessa", "velmar", 0.9])

    assert ("synonym edge 'lake tessa' -> 'velmar': listed 0.9, recomputed None"
            in audit_of(finished, tmp_path, edit, role="fixture", code=2))


def test_a_question_phrase_edited_in_the_fixture_is_refused(finished, tmp_path):
    def edit(fixture):
        last = fixture[FIXTURE_SECTION]["query_phrases"][-1]
        last["id"] = "zz " + last["id"]  # still ascending: the contract passes, the evaluator's recomputation not

    assert "query_phrases are not the fixture's query_entities" in audit_of(finished, tmp_path, edit, role="fixture",
                                                                            code=2)
