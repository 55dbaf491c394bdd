"""hipporag2 as a user meets it (docs/hipporag2.md): the graph-import page's three passages and
triples through `lab protocol new --graph` and `lab run` with the real model and a real lab, then
`lab audit` failing on a hand-edited phrase seed, linked fact, mass, iteration count or synonym edge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import lab_cli
from tests.lab.campaigns.test_graph_import_run import lay_out, run

FIXTURE_SECTION = "hipporag2_graph"


pytestmark = pytest.mark.heavy  # a whole campaign with the real model (about 15 s)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hipporag2-run")
    for argv in lay_out(folder):
        done = run(folder, argv)
        assert done.returncode == 0, f"{argv}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "audit: all checks hold" in done.stdout + done.stderr
    return folder / "runs" / "mine-graph"


def hipporag2_rows(report: dict) -> list[int]:
    return [i for i, row in enumerate(report["rows"]) if row["method"] == "hipporag2"]


def audit_of(run_dir: Path, tmp_path: Path, edit, role: str = "report", code: int = 1) -> str:
    """`lab audit` of a copy of the run whose `role` file was edited; its output. A page that fails
    its check exits 1; an input that does not hold to itself is refused before any check (2)."""
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("lab-db", "public*"))
    path = copy / f"{role}.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    edit(value)
    path.write_text(json.dumps(value), encoding="utf-8")
    done = lab_cli("audit", "--run-dir", copy, check=False)
    assert done.returncode == code, (done.stdout, done.stderr)
    return done.stdout + done.stderr


def test_the_page_carries_what_the_verifier_recomputes(finished):
    report = json.loads((finished / "report.json").read_text(encoding="utf-8"))
    rows = hipporag2_rows(report)
    assert rows, "the protocol new writes for an imported graph runs hipporag2"
    section = report["rows"][rows[0]]["page"]["hipporag2"]
    assert section["graph"] == {"passages": 3, "phrases": 5, "facts": 3, "edges": section["graph"]["edges"]}
    assert len(section["facts"]) == 3 and section["phrases"], "three facts linked, their phrases seeded"
    assert section["iterations"] >= 1
    hits = report["rows"][rows[0]]["page"]["hits"]
    assert [h["mass"] is not None for h in hits] == [True] * len(hits)
    masses = [h["mass"] for h in hits]
    assert masses == sorted(masses, reverse=True)
    fixture = json.loads((finished / "fixture.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in fixture[FIXTURE_SECTION]["phrases"]] == [
        "lake tessa", "mount brel", "orin river", "orin valley", "velmar"]


def test_a_hand_edited_phrase_seed_fails_the_audit(finished, tmp_path):
    def edit(report):
        row = report["rows"][hipporag2_rows(report)[0]]
        row["page"]["hipporag2"]["phrases"][0]["units"] += 1

    assert "hipporag2.phrases:" in audit_of(finished, tmp_path, edit)


def test_a_hand_edited_linked_fact_fails_the_audit(finished, tmp_path):
    def edit(report):
        row = report["rows"][hipporag2_rows(report)[0]]
        row["page"]["hipporag2"]["facts"][0]["score"] -= 1

    assert "hipporag2.facts[" in audit_of(finished, tmp_path, edit)


def test_a_hand_edited_mass_fails_the_audit(finished, tmp_path):
    def edit(report):
        row = report["rows"][hipporag2_rows(report)[0]]
        row["page"]["hits"][0]["mass"] -= 1

    assert "rank 1, mass:" in audit_of(finished, tmp_path, edit)


def test_a_hand_edited_iteration_count_fails_the_audit(finished, tmp_path):
    def edit(report):
        row = report["rows"][hipporag2_rows(report)[0]]
        row["page"]["hipporag2"]["iterations"] -= 1

    assert "hipporag2.iterations:" in audit_of(finished, tmp_path, edit)


def test_a_hand_edited_synonym_edge_fails_the_audit(finished, tmp_path):
    def edit(fixture):
        fixture[FIXTURE_SECTION]["synonyms"].append(["orin river", "orin valley", 0.9])

    # the fixture's synonyms are recomputed from its own phrase vectors when it is loaded
    assert ("synonym edge 'orin river' -> 'orin valley': listed 0.9, recomputed None"
            in audit_of(finished, tmp_path, edit, role="fixture", code=2))


def test_the_pages_hold_on_validation_workers_too(finished):
    """A worker's inputs hold no document vectors (evaluator/verification/worker_inputs.py): the verifier
    reads them from the checker's matrix."""
    done = lab_cli("audit", "--run-dir", finished, "--workers", "2", check=False)
    assert done.returncode == 0 and "audit: all checks hold" in done.stdout + done.stderr, done.stdout[-2000:]


def test_hipporag2_under_e5_runs_with_its_calibrated_threshold_and_audits_clean(tmp_path):
    """The page's protocol, its E5 twin with HippoRAG 2's synonym threshold calibrated for E5
    (docs/embeddings.md, "Thresholds and their encoder"), frozen and run: the fixture's synonym
    edges are built, and recomputed by the audit, with the calibrated rule."""
    commands = lay_out(tmp_path)
    done = run(tmp_path, commands[0])
    assert done.returncode == 0, done.stderr
    for argv in (["lab", "protocol", "derive", "hipporag-musique-openie-hipporag2-e5-v1", "--protocol",
                  "mine-graph-v1.json", "--version", "mine-graph-e5-v1", "--output", "mine-graph-e5-v1.json"],
                 ["lab", "protocol", "freeze", "mine-graph-e5-v1.json"],
                 ["lab", "run", "--protocol", "mine-graph-e5-v1.json", "--data-dir", "data", "--graph-dir", "graph",
                  "--run-dir", "runs/e5"]):
        done = run(tmp_path, argv)
        assert done.returncode == 0, f"{argv}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "audit: all checks hold" in done.stdout + done.stderr
    run_dir = tmp_path / "runs" / "e5"
    fixture = json.loads((run_dir / "fixture.json").read_text(encoding="utf-8"))
    assert fixture["space"]["model"].startswith("intfloat/multilingual-e5-small")
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert report["protocol"]["methods"]["hipporag2"]["profile"] == "hipporag2_e5_v1"
    assert report["protocol_frozen"]["frozen"] and hipporag2_rows(report)
