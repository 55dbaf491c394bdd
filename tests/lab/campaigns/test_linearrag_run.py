"""LinearRAG as a user meets it (docs/linearrag.md): the own-data page's question and passages under a
protocol of `lab protocol new --linearrag`, through `lab run` with the real model, the real spaCy
pipeline (its parser too) and a real lab; then `lab audit` failing on each hand edit of what the page
carries: a link, a taken sentence, an activation, an entity seed, the passage seeds, the iteration
count, a mass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocols.families.graphs.linearrag import LINEARRAG_PROFILES, SECTION
from tests.conftest import lab_cli
from tests.importer.test_own_data_rows import shown as own_data_blocks
from tests.lab.campaigns.test_hipporag2_run import audit_of

pytestmark = pytest.mark.heavy  # a whole campaign with the real model and spaCy (about 15 s)


def run_of(tmp_path_factory, version: str) -> Path:
    """`lab protocol new --linearrag` gives linearrag_v2 (the declared draw); v1 (ascending orders) is
    the same protocol with v1's method and profile, so both verifiers meet a real page."""
    folder = tmp_path_factory.mktemp(f"linearrag-run-{version}")
    own = own_data_blocks()
    (folder / "data").mkdir()
    (folder / "data" / "questions.json").write_text(own["hipporag_musique_v1"], encoding="utf-8")
    (folder / "data" / "corpus.json").write_text(own["hipporag_*"], encoding="utf-8")
    lab_cli("protocol", "new", "--questions", folder / "data" / "questions.json", "--corpus",
            folder / "data" / "corpus.json", "--layout", "hipporag_musique_v1", "--test", "all",
            "--output", folder / "mine-linearrag.json", "--linearrag")
    protocol = json.loads((folder / "mine-linearrag.json").read_text(encoding="utf-8"))
    assert protocol["methods"]["linearrag_v2"]["profile"] == "linearrag_musique_v2"  # the layout's dataset's
    assert protocol["ranking_profiles"]["linearrag_musique_v2"] == LINEARRAG_PROFILES["linearrag_musique_v2"]
    assert protocol["evaluation"]["primary_contrast"]["candidate"] == "linearrag_v2"
    path = folder / "mine-linearrag.json"
    if version == "v1":
        protocol["protocol_version"] = "mine-linearrag-v1"
        protocol["methods"] = {("linearrag_v1" if name == "linearrag_v2" else name):
                               ({**method, "profile": "linearrag_musique_v1"} if name == "linearrag_v2" else method)
                               for name, method in protocol["methods"].items()}
        del protocol["ranking_profiles"]["linearrag_musique_v2"]
        protocol["ranking_profiles"]["linearrag_musique_v1"] = LINEARRAG_PROFILES["linearrag_musique_v1"]
        protocol["evaluation"]["primary_contrast"]["candidate"] = "linearrag_v1"
        path = folder / "mine-linearrag-v1.json"
        path.write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    run_dir = folder / "runs" / "linearrag"
    done = lab_cli("run", "--protocol", path, "--data-dir", folder / "data", "--run-dir", run_dir, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "== audit: exit 0" in done.stderr
    return run_dir


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    return run_of(tmp_path_factory, "v2")


def test_v1_ascending_orders_still_run_and_audit(tmp_path_factory, tmp_path):
    """v1's pages (every order ascending) through a real run, its audit clean; a hand-edited
    activation fails it (v2's run meets every hand edit below)."""
    run = run_of(tmp_path_factory, "v1")

    def weigh(section):
        section["activated"][0]["weight"] += 1e-9
    assert "linearrag.activated" in audit_of(run, tmp_path, edit_section(weigh))
    # v1 declares no draw: the draws bench has nothing to vary and says so
    refused = lab_cli("bench", "linearrag-draws", "--runs", run, "--draws", "3", "--json", tmp_path / "d.json",
                      check=False)
    assert refused.returncode == 2 and "declares no draw (a v2 profile does)" in refused.stderr
    assert not (tmp_path / "d.json").exists()


def row_of(report: dict) -> dict:
    return next(row for row in report["rows"] if row["method"] in ("linearrag_v1", "linearrag_v2"))


def edit_section(change):
    def edit(report):
        change(row_of(report)["page"]["linearrag"])
    return edit


def test_the_question_bridges_to_the_graphs_entities(finished):
    section = row_of(json.loads((finished / "report.json").read_text(encoding="utf-8")))["page"]["linearrag"]
    assert section["graph"]["passages"] == 3 and section["graph"]["entities"] >= 3
    assert [link["entity"] for link in section["links"]] == ["orin"]  # the question's entity, lower-cased
    assert section["rounds"][0][0]["sentences"], "the linked entity takes its sentence most like the question"
    assert [a["tier"] for a in section["activated"]][:1] == [2] and section["iterations"] >= 1
    fixture = json.loads((finished / "fixture.json").read_text(encoding="utf-8"))
    assert "Lake Tessa" in [e["id"] for e in fixture[SECTION]["entities"]]  # as written, case kept


def test_a_hand_edited_link_fails_the_audit(finished, tmp_path):
    def relink(section):
        section["links"][0]["node"] = "Velmar"
    assert "linearrag.links[0]" in audit_of(finished, tmp_path, edit_section(relink))


def test_a_hand_edited_taken_sentence_fails_the_audit(finished, tmp_path):
    def nudge(section):
        section["rounds"][0][0]["sentences"][0]["cosine"] += 1e-3
    assert "linearrag.rounds[0][0].sentences" in audit_of(finished, tmp_path, edit_section(nudge))


def test_a_hand_edited_activation_fails_the_audit(finished, tmp_path):
    def weigh(section):
        section["activated"][0]["weight"] += 1e-9
    assert "linearrag.activated" in audit_of(finished, tmp_path, edit_section(weigh))


def test_a_hand_edited_entity_seed_fails_the_audit(finished, tmp_path):
    def seed(section):
        section["entity_seeds"][0]["units"] += 1
    assert "linearrag.entity_seeds" in audit_of(finished, tmp_path, edit_section(seed))


def test_hand_edited_passage_seeds_fail_the_audit(finished, tmp_path):
    def reset(section):
        section["passage_digest"] = "0" * 64
    assert "linearrag.passage_digest" in audit_of(finished, tmp_path, edit_section(reset))


def test_a_hand_edited_iteration_count_fails_the_audit(finished, tmp_path):
    def iterate(section):
        section["iterations"] -= 1
    assert "linearrag.iterations" in audit_of(finished, tmp_path, edit_section(iterate))


def test_a_hand_edited_mass_fails_the_audit(finished, tmp_path):
    def edit(report):
        row_of(report)["page"]["hits"][0]["mass"] -= 1
    assert "rank 1, mass:" in audit_of(finished, tmp_path, edit)


def test_the_recognizer_reproduces_the_sections_mentions(finished):
    """The section keeps the recognizer's output so the evaluator never runs a model; the pinned
    pipeline with its parser gives the same mentions again, in a fresh process."""
    from builders import ner
    from builders.linearrag_graph import mentions

    fixture = json.loads((finished / "fixture.json").read_text(encoding="utf-8"))
    section = fixture[SECTION]
    sentences = [entry["id"] for entry in section["sentences"]]
    again = mentions((d["text"] for d in fixture["source"]["documents"]), ner.load_pipeline(ner.PARSING_EXCLUDED))
    assert [[[text, label, sentences.index(sentence)] for text, label, sentence in found] for found in again] == \
        [item["mentions"] for item in section["mentions"]]


def test_the_draws_bench_replays_the_campaign_and_measures_the_spread(finished, tmp_path):
    """`lab bench linearrag-draws`: the route replayed in process on a copy of the run's store gives
    the campaign's ranking under the declared draw, and a figure for each other draw and for v1."""
    out = tmp_path / "draws.json"
    ran = lab_cli("bench", "linearrag-draws", "--runs", finished, "--draws", "3", "--json", out)
    (case,) = json.loads(out.read_text(encoding="utf-8"))
    assert case["replayed_equal"] == case["questions"] >= 1, ran.stdout
    assert list(case["means"]) == ["seed 1", "seed 2", "seed 3", "ascending (v1)"]
    assert case["draws_min"] <= case["means"]["seed 1"] <= case["draws_max"]
    assert "the declared draw replays the campaign's ranking on" in ran.stdout
    assert (finished / "lab-db").is_dir() and not list(tmp_path.glob("lab-db*"))  # the run's store untouched
