"""The PPR family end to end (docs/field-graphs.md): a field-graphs protocol derived by the declared
steps (v3, v4, v5, then the PPR family and document_ner_graph_v1), the import running the pinned
spaCy NER, the fixture holding the questions' entities, the real model and lab, every ppr page
verified independently during evaluate; the audit holds, and a hand-edited mass, seed or
iteration count in a page fails it."""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import lab_cli
from tests.evaluation_fixtures import Inputs, built_inputs, prepared_lab

pytestmark = pytest.mark.heavy  # a whole campaign with the real model and lab


@pytest.fixture(scope="module")
def ppr_inputs(tmp_path_factory) -> Inputs:
    base = built_inputs(tmp_path_factory)
    root = tmp_path_factory.mktemp("ppr-inputs")
    inputs = Inputs(root, root / "protocol.json", root / "source.json", root / "relations.json",
                    root / "fixture.json", root / "generation.json")
    parent = base.protocol
    for step, version in (("musique-sample-v3", "v3"), ("musique-sample-v4", "v4"), ("musique-sample-v5", "v5"),
                          ("musique-sample-field-graphs-v1", "fg1")):
        out = root / f"{version}.json"
        lab_cli("protocol", "derive", step, "--protocol", parent, "--version", f"synthetic-test-small-{version}",
                "--output", out)
        parent = out
    inputs.protocol.write_bytes(parent.read_bytes())
    out = lab_cli("import", "--protocol", inputs.protocol, "--data-dir", base.root / "synthetic",
                  "--output", inputs.source, "--relations", inputs.relations)
    assert "shares_entity" in out.stdout
    lab_cli("embed", "build", "--source", inputs.source, "--output", inputs.fixture,
            "--generation", inputs.generation, "--query-entities")
    return inputs


@pytest.fixture(scope="module")
def campaign(ppr_inputs, tmp_path_factory):
    work = tmp_path_factory.mktemp("ppr-campaign")
    prepared = prepared_lab(ppr_inputs, work / "lab")
    plan, report_path = work / "plan.json", work / "report.json"
    try:
        prepared.evaluate(plan, report_path)
    finally:
        assert prepared.lab.stop() == 0
    return ppr_inputs, report_path


def audit(inputs: Inputs, report) -> object:
    return lab_cli("audit", "--report", report, "--fixture", inputs.fixture, "--relations", inputs.relations,
                   "--protocol", inputs.protocol, check=False)


def test_a_field_graphs_campaign_verifies_every_ppr_page_and_audits(campaign):
    inputs, report_path = campaign
    fixture = json.loads(inputs.fixture.read_text())
    assert fixture["query_entities"]["provenance"]["model_version"] == "3.8.0"
    report = json.loads(report_path.read_text())
    assert report["status"] == "complete"
    rows = [r for r in report["rows"] if r["method"] == "graph_ppr"]
    assert rows and any(r["page"]["ppr"]["seeds"] for r in rows)
    assert any(h["mass"] for r in rows for h in r["page"]["hits"])
    out = audit(inputs, report_path)
    assert out.returncode == 0 and "all checks hold" in out.stdout


@pytest.mark.parametrize("edit", ["mass", "seed", "iterations"])
def test_a_hand_edited_page_fails_the_audit(campaign, edit, tmp_path):
    inputs, report_path = campaign
    value = json.loads(report_path.read_text())
    i = next(i for i, r in enumerate(value["rows"]) if r["method"] == "graph_ppr" and r["page"]["ppr"]["seeds"]
             and any(h["mass"] for h in r["page"]["hits"]))
    page = value["rows"][i]["page"]
    if edit == "mass":
        next(h for h in page["hits"] if h["mass"])["mass"] += 1
    elif edit == "seed":
        page["ppr"]["seeds"][0]["reset"] += 1
    else:
        page["ppr"]["iterations"] += 1
    edited = tmp_path / "report.json"
    edited.write_text(json.dumps(value))
    out = audit(inputs, edited)
    assert out.returncode == 1
    assert f"FAIL pages rows[{i}]" in out.stdout and "ppr" in out.stdout


def test_the_fixture_refuses_query_entities_that_are_not_every_query(ppr_inputs):
    from builders.embedding.contract import FixtureError, validate_fixture

    fixture = json.loads(ppr_inputs.fixture.read_text())
    validate_fixture(fixture)
    dropped = copy.deepcopy(fixture)
    dropped["query_entities"]["queries"].pop()
    with pytest.raises(FixtureError, match="query_entities.queries"):
        validate_fixture(dropped)
    malformed = copy.deepcopy(fixture)
    malformed["query_entities"]["queries"][0]["entities"] = [["only text"]]
    with pytest.raises(FixtureError, match=r"query_entities.queries\[0\]"):
        validate_fixture(malformed)


def test_the_field_graphs_dev_harness_prints_the_development_table(ppr_inputs, capsys):
    """lab bench field-graphs-dev scores the six methods on the development rows only, from the
    run's frozen protocol and fixture (docs/field-graphs.md)."""
    from bench.design.field_graphs_dev import METHODS
    from bench.design.field_graphs_dev import main as harness

    assert harness(["--runs", f"synthetic={ppr_inputs.root}"]) == 0
    out = capsys.readouterr()
    assert "test rows never read" in out.err
    rows = [line for line in out.out.splitlines() if line.startswith("| graph_") or line.startswith("| weighted")
            or line.startswith("| prf_")]
    assert [row.split(" | ")[0][2:] for row in rows] == list(METHODS)
    for row in rows:  # every figure is a fraction in [0, 1]
        cells = [c for c in row.strip("| ").split(" | ")[1:]]
        values = [float(v) for cell in cells for v in cell.split(" / ")]
        assert all(0.0 <= v <= 1.0 for v in values)
