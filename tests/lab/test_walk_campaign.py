"""The seeded walk end to end: a v3 protocol derived by the declared step (`lab protocol derive`), the
real model and lab, every walk page verified independently during evaluate (and its seeds against
the weighted_rrf_v2 page), repetitions reproducing ranking and proofs, export and the audit holding."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from tests.conftest import lab_cli
from tests.evaluation_fixtures import Inputs, built_inputs, cli, prepared_lab

# heavy: a whole v3 campaign; runs in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def walk_inputs(tmp_path_factory) -> Inputs:
    base = built_inputs(tmp_path_factory)
    root = tmp_path_factory.mktemp("walk-inputs")
    inputs = Inputs(root, root / "protocol.json", root / "source.json", root / "relations.json",
                    root / "fixture.json", root / "generation.json")
    # the declared step of graph-multihop-protocol-v3: add the seeded walk
    lab_cli("protocol", "derive", "graph-multihop-protocol-v3", "--protocol", base.protocol,
            "--version", "synthetic-test-small-v3", "--output", inputs.protocol)
    # clusters by supporting titles (the HotpotQA and 2Wiki rule), so the audit below must place the
    # queries with the documents' titles as evaluate and export do (it once derived without them)
    protocol = json.loads(inputs.protocol.read_text())
    protocol["evaluation"]["clusters"] = {"rule": "supporting_titles_v1"}
    inputs.protocol.write_text(json.dumps(protocol, indent=2))
    lab_cli("import", "--protocol", inputs.protocol, "--data-dir", base.root / "synthetic",
            "--output", inputs.source, "--relations", inputs.relations)
    lab_cli("embed", "build", "--source", inputs.source, "--output", inputs.fixture,
            "--generation", inputs.generation)
    return inputs


def test_a_v3_campaign_verifies_exports_and_audits_the_walk(walk_inputs, tmp_path):
    protocol = json.loads(walk_inputs.protocol.read_text())
    assert protocol["methods"]["graph_walk"]["route"] == "walk"
    assert protocol["evaluation"]["clusters"]["rule"] == "supporting_titles_v1"
    prepared = prepared_lab(walk_inputs, tmp_path / "lab")
    plan, report_path = tmp_path / "plan.json", tmp_path / "report.json"
    try:
        prepared.evaluate(plan, report_path)
    finally:
        assert prepared.lab.stop() == 0
    report = json.loads(report_path.read_text())
    assert report["status"] == "complete"
    primary = [c for c in report["statistics"]["contrasts"] if c["label"] == "confirmatory"]
    assert {(c["candidate"], c["baseline"]) for c in primary} == {("graph_walk", "weighted_rrf_v2")}
    rows = [r for r in report["rows"] if r["method"] == "graph_walk"]
    assert rows
    walked = 0
    for row in rows:
        for hit in row["page"]["hits"]:
            channels = hit["channels"]
            parts = sum((Fraction(channels[c]["contribution_exact"]) for c in ("lexical", "semantic", "walk")),
                        Fraction(0))
            assert Fraction(hit["score_exact"]) == parts  # the score is exactly its parts
            walked += bool(hit["proof"] and hit["proof"]["inflow"])
    assert walked > 0

    public = tmp_path / "public.json"
    lab_cli("export", "--report", report_path, "--fixture", walk_inputs.fixture, "--output", public)
    assert "graph_walk" in (tmp_path / "public.md").read_text()
    out = lab_cli("audit", "--report", report_path, "--fixture", walk_inputs.fixture,
                  "--relations", walk_inputs.relations, "--protocol", walk_inputs.protocol, "--public", public)
    assert "ok public" in out.stdout and "all checks hold" in out.stdout
