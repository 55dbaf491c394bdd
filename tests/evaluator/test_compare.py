"""Comparing two campaigns: audited first, paired within one cohort, side by side across cohorts,
refusals with exit 2 and nothing written."""

from __future__ import annotations

import json
import shutil

import pytest

from evaluator.compare.compare import CohortConflict, RunFiles, Side, cohort
from ground.canonical import digest
from ground.errors import RefusedInput
from tests.conftest import lab_cli
from tests.evaluation_fixtures import Inputs, Run, built_inputs, exported_runs, prepared_lab

# heavy: whole campaigns exported and compared; runs in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return exported_runs(tmp_path_factory)


def compare(a: Run, b: Run, output, check: bool = True):
    return lab_cli("compare", "--a", a.directory, "--b", b.directory, "--output-dir", output, check=check)


def test_compare_takes_run_directories_not_their_files(runs, tmp_path):
    a, b = runs
    out = lab_cli("compare", "--a", a.public, "--b", b.directory, "--output-dir", tmp_path / "c", check=False)
    assert out.returncode == 2 and f"{a.public} is a file; give its run directory ({a.directory})" in out.stderr
    assert not (tmp_path / "c").exists()


def test_one_cohort_compares_paired_with_deltas_of_exactly_zero(runs, tmp_path):
    """Two campaigns on one lab under one plan rank identically: every paired delta is exactly 0."""
    a, b = runs
    output = tmp_path / "comparison"
    out = compare(a, b, output)
    assert out.stdout.split() == [str(output / name) for name in ("comparison.json", "comparison.md", "comparison.html")]
    assert "A: ok public" in out.stderr and "B: ok public" in out.stderr  # both sides audited in full
    result = json.loads((output / "comparison.json").read_text())
    protocol = json.loads(a.protocol.read_text())
    assert result["cohort"]["kind"] == "paired"
    assert result["methods"]["shared"] == sorted(protocol["methods"])
    assert result["statistics"]["seed"] == protocol["protocol_seed"]
    contrasts = result["contrasts"]
    assert len(contrasts) == len(protocol["methods"]) * len(protocol["evaluation"]["contrast_metrics"])
    for c in contrasts:
        assert (c["mean_delta"], c["interval"], c["ties"], c["queries"]) == (0.0, [0.0, 0.0], 10, 10), c
    assert result["sides"]["a"]["private_report_digest"] != result["sides"]["b"]["private_report_digest"]
    page = (output / "comparison.html").read_text()
    assert 'id="fig-forest"' in page and 'id="fig-means"' in page and "<script" not in page
    assert digest(json.loads(a.public.read_text())) == result["sides"]["a"]["public_report_digest"]
    assert "| graph_hybrid_balanced | nDCG@10 | paired | 10 |" in (output / "comparison.md").read_text()

    again = compare(a, b, output, check=False)  # an existing output is refused and left alone
    assert again.returncode == 2 and "refusing to overwrite existing output" in again.stderr
    assert json.loads((output / "comparison.json").read_text()) == result


@pytest.fixture(scope="module")
def development_run(tmp_path_factory) -> Run:
    """The same corpus evaluated on its development queries: another cohort (disjoint query ids)."""
    inputs = built_inputs(tmp_path_factory)
    run = Run(tmp_path_factory.mktemp("development-run"))
    protocol = json.loads(inputs.protocol.read_text())
    protocol["protocol_version"] = "synthetic-test-small-development"
    protocol["evaluation"]["split"] = "development"
    run.protocol.write_text(json.dumps(protocol))
    data = inputs.root / "synthetic"
    lab_cli("import", "--protocol", run.protocol, "--data-dir", data, "--output",
            run.directory / "source.json", "--relations", run.relations)
    # the same texts as the session fixture: its vectors, bound to this import's source (encoding is a
    # pure function of the text, tests/builders/test_embedding.py), instead of a second pass of the model
    source = json.loads((run.directory / "source.json").read_text())
    fixture = json.loads(inputs.fixture.read_text())
    assert [d["text"] for d in source["documents"]] == [d["text"] for d in fixture["source"]["documents"]]
    fixture.update(source=source, source_digest=digest(source))
    run.fixture.write_text(json.dumps(fixture))
    generation = json.loads(inputs.generation.read_text())
    generation["fixture_digest"] = digest(fixture)
    run.generation.write_text(json.dumps(generation))
    inputs = Inputs(run.directory, run.protocol, run.directory / "source.json", run.relations, run.fixture,
                    run.generation)
    prepared = prepared_lab(inputs, run.directory / "lab")
    try:
        shutil.copyfile(prepared.state, run.state)
        prepared.evaluate(run.plan, run.report)
    finally:
        assert prepared.lab.stop() == 0
    lab_cli("export", "--run-dir", run.directory)
    return run


def test_another_cohort_compares_side_by_side_unpaired(runs, development_run, tmp_path):
    a, _ = runs
    output = tmp_path / "comparison"
    compare(a, development_run, output)
    result = json.loads((output / "comparison.json").read_text())
    assert result["cohort"]["kind"] == "unpaired"
    assert result["cohort"]["queries"] == {"a": 10, "b": 3, "shared": 0}
    assert result["contrasts"] == [] and result["statistics"] is None
    assert {e["label"] for e in result["side_by_side"]} == {"unpaired"}
    public_b = json.loads(development_run.public.read_text())
    first = result["side_by_side"][0]
    assert first["b"]["mean"] == public_b["aggregates"]["methods"][first["method"]][first["metric"]]
    assert "Side by side (unpaired)" in (output / "comparison.md").read_text()


def test_a_side_whose_audit_fails_stops_the_comparison(runs, tmp_path):
    a, b = runs
    edited = Run(tmp_path / "a")
    shutil.copytree(a.directory, edited.directory)
    report = json.loads(edited.report.read_text())
    report["warmup"][0]["http_ms"] += 1.0  # a measurement: only the seal binds it
    edited.report.write_text(json.dumps(report))
    result = compare(edited, b, tmp_path / "comparison", check=False)
    assert result.returncode == 2
    assert "side A: the audit of" in result.stderr and "warmup[0]" in result.stderr
    assert "B: ok" not in result.stderr  # stopped before the second side
    assert not (tmp_path / "comparison").exists()


def test_a_query_labelled_differently_by_the_two_sides_is_refused(runs):
    """The cohort check itself, on two sides' labels: one judgment differs, the comparison refuses."""
    a, _ = runs
    fixture = json.loads(a.fixture.read_text())
    public = json.loads(a.public.read_text())
    labels = {q["id"]: {"judgments": q["judgments"], "evidence_chain": q["evidence_chain"]}
              for q in fixture["source"]["queries"] if q["id"] in public["plan"]["queries"]}
    query = sorted(labels)[3]
    other = json.loads(json.dumps(labels))
    doc = sorted(other[query]["judgments"])[0]
    other[query]["judgments"][doc] = 2
    side_a = Side("A", RunFiles(a.public), public, labels, fixture["space"])
    assert cohort(side_a, Side("B", RunFiles(a.public), public, labels, fixture["space"]))["kind"] == "paired"
    with pytest.raises(CohortConflict, match=f"query {query} has different judgments in A and B"):
        cohort(side_a, Side("B", RunFiles(a.public), public, other, fixture["space"]))
    assert issubclass(CohortConflict, RefusedInput)  # the command line exits 2 on it
