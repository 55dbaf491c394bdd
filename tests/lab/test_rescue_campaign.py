"""The rescue family and the ANN lane end to end: an ANN protocol (v2 plus the ANN lane) derived by
the declared steps (`lab protocol derive`), the real model and lab, every rescue and ANN page
verified independently during evaluate, the rescue tables and the ANN agreement exported, the
audit holding. One campaign for both: the ANN protocol keeps every v2 method unchanged."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from tests.conftest import lab_cli
from tests.evaluation_fixtures import Inputs, built_inputs, cli, prepared_lab

# heavy: a whole ANN + rescue campaign; runs in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy

RESCUE_METHODS = {"graph_rescue", "graph_rescue_fuse_025", "graph_rescue_fuse_100"}


@pytest.fixture(scope="module")
def rescue_inputs(tmp_path_factory) -> Inputs:
    base = built_inputs(tmp_path_factory)
    root = tmp_path_factory.mktemp("rescue-inputs")
    inputs = Inputs(root, root / "protocol.json", root / "source.json", root / "relations.json",
                    root / "fixture.json", root / "generation.json")
    v2 = root / "protocol-v2.json"
    # the declared steps of graph-multihop-protocol-v2 (rescue family) and graph-multihop-ann-v1 (ANN lane)
    lab_cli("protocol", "derive", "graph-multihop-protocol-v2", "--protocol", base.protocol,
            "--version", "synthetic-test-small-v2", "--output", v2)
    lab_cli("protocol", "derive", "graph-multihop-ann-v1", "--protocol", v2,
            "--version", "synthetic-test-small-ann-v1", "--output", inputs.protocol)
    lab_cli("import", "--protocol", inputs.protocol, "--data-dir", base.root / "synthetic",
            "--output", inputs.source, "--relations", inputs.relations)
    lab_cli("embed", "build", "--source", inputs.source, "--output", inputs.fixture,
            "--generation", inputs.generation)
    return inputs


def test_an_ann_campaign_verifies_exports_and_audits_the_rescue_family_and_the_ann_lane(rescue_inputs, tmp_path):
    protocol = json.loads(rescue_inputs.protocol.read_text())
    assert RESCUE_METHODS <= set(protocol["methods"])
    prepared = prepared_lab(rescue_inputs, tmp_path / "lab")
    plan, report_path = tmp_path / "plan.json", tmp_path / "report.json"
    try:
        prepared.evaluate(plan, report_path)
    finally:
        assert prepared.lab.stop() == 0
    report = json.loads(report_path.read_text())
    assert report["status"] == "complete"

    primary = [c for c in report["statistics"]["contrasts"] if c["label"] == "confirmatory"]
    assert {(c["candidate"], c["baseline"]) for c in primary} == {("graph_rescue", "weighted_rrf_v1")}

    rows = [r for r in report["rows"] if r["method"] == "graph_rescue"]
    assert rows
    for row in rows:
        hits = row["page"]["hits"]
        stamps = [hit["rescued"] for hit in hits]
        # append, never fuse: no rescued candidate above any base candidate
        assert stamps == sorted(stamps), row["query_id"]
        # every score is rank-derived, exactly 1/(60 + rank)
        assert all(Fraction(hit["score_exact"]) == Fraction(1, 60 + hit["rank"]) for hit in hits)

    ann = report["ann"]["methods"]["semantic_ann"]  # per-query recall@10 and RBO against the exact lane
    queries = {r["query_id"] for r in report["rows"] if r["method"] == "semantic"}
    assert set(ann["per_query"]) == queries and ann["queries"] == len(queries)
    assert all(0.0 <= v["recall"] <= 1.0 and 0.0 <= v["rbo"] <= 1.0 for v in ann["per_query"].values())
    # a few hundred documents: the HNSW lane finds the exact top 10
    assert ann["recall_mean"] >= 0.9
    for row in (r for r in report["rows"] if r["method"] == "semantic_ann"):
        assert row["page"]["coverage"]["candidates"] is False

    rescue = report["rescue"]
    assert set(rescue["methods"]) == RESCUE_METHODS
    assert "graph_rescue" in rescue["oracle_bound"] and "graph_rescue" in rescue["budget_curve"]

    public = tmp_path / "public.json"
    lab_cli("export", "--report", report_path, "--fixture", rescue_inputs.fixture,
            "--output", public)
    summary = (tmp_path / "public.md").read_text()
    assert "## Rescue family (exploratory)" in summary and "UPPER BOUND" in summary
    assert "](public.figures/budget_curve.svg)" in summary
    page = (tmp_path / "public.html").read_text()
    assert 'id="fig-budget_curve"' in page and 'id="table-rescue-budget"' in page

    out = lab_cli("audit", "--report", report_path, "--fixture", rescue_inputs.fixture,
                  "--relations", rescue_inputs.relations, "--protocol", rescue_inputs.protocol, "--public", public)
    assert "ok public" in out.stdout and "all checks hold" in out.stdout
