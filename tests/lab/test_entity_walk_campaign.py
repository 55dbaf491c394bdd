"""The entity walk end to end (docs/graph-v4.md): a v4 protocol derived by the declared steps (`lab
protocol derive`: the seeded walk, then the entity walk and its builder), the import building
document_entity_graph_v1, the real model and lab, every walk page verified independently during
evaluate (the entity relations recomputed by the evaluator's own code on load), export and the audit
holding; v1 methods and the seeded walk rank as under v3."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from tests.conftest import lab_cli
from tests.evaluation_fixtures import Inputs, built_inputs, prepared_lab

# heavy: a whole v4 campaign; runs in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def entity_inputs(tmp_path_factory) -> Inputs:
    base = built_inputs(tmp_path_factory)
    root = tmp_path_factory.mktemp("entity-walk-inputs")
    inputs = Inputs(root, root / "protocol.json", root / "source.json", root / "relations.json",
                    root / "fixture.json", root / "generation.json")
    # the declared steps of musique-sample-v3 (the seeded walk) and musique-sample-v4 (the entity walk)
    lab_cli("protocol", "derive", "musique-sample-v3", "--protocol", base.protocol,
            "--version", "synthetic-test-small-v3", "--output", root / "v3.json")
    lab_cli("protocol", "derive", "musique-sample-v4", "--protocol", root / "v3.json",
            "--version", "synthetic-test-small-v4", "--output", inputs.protocol)
    out = lab_cli("import", "--protocol", inputs.protocol, "--data-dir", base.root / "synthetic",
                  "--output", inputs.source, "--relations", inputs.relations)
    assert "shares_name" in out.stdout
    lab_cli("embed", "build", "--source", inputs.source, "--output", inputs.fixture,
            "--generation", inputs.generation)
    return inputs


def test_a_v4_campaign_verifies_exports_and_audits_the_entity_walk(entity_inputs, tmp_path):
    protocol = json.loads(entity_inputs.protocol.read_text())
    assert protocol["graph_builder"] == {"method": "document_entity_graph_v1"}
    assert protocol["methods"]["graph_entity_walk"] == {"route": "walk", "profile": "entity_walk_v1", "limit": 10}
    relations = json.loads(entity_inputs.relations.read_text())
    assert relations["method"] == "document_entity_graph_v1" and relations["counts"]["shares_name"] > 0
    prepared = prepared_lab(entity_inputs, tmp_path / "lab")
    plan, report_path = tmp_path / "plan.json", tmp_path / "report.json"
    try:
        prepared.evaluate(plan, report_path)
    finally:
        assert prepared.lab.stop() == 0
    report = json.loads(report_path.read_text())
    assert report["status"] == "complete"
    primary = [c for c in report["statistics"]["contrasts"] if c["label"] == "confirmatory"]
    assert {(c["candidate"], c["baseline"]) for c in primary} == {("graph_entity_walk", "graph_hybrid_balanced")}
    rows = [r for r in report["rows"] if r["method"] == "graph_entity_walk"]
    assert rows
    named = 0
    for row in rows:
        page = row["page"]
        by_id = {rel["id"]: rel for rel in page["relations"]}
        for hit in page["hits"]:
            channels = hit["channels"]
            parts = sum((Fraction(channels[c]["contribution_exact"]) for c in ("lexical", "semantic", "walk")),
                        Fraction(0))
            assert Fraction(hit["score_exact"]) == parts  # the score is exactly its parts
            for step in (hit["proof"] or {}).get("inflow", []):
                if step["kind"] == "shares_name":  # the proof names the shared name that linked the two
                    evidence = by_id[step["relation_id"]]["provenance"]["evidence_ref"]
                    assert evidence.startswith("shared_name:") and step["step"] == 1
                    named += 1
    assert named > 0
    public = tmp_path / "public.json"
    lab_cli("export", "--report", report_path, "--fixture", entity_inputs.fixture, "--output", public)
    assert "graph_entity_walk" in (tmp_path / "public.md").read_text()
    out = lab_cli("audit", "--report", report_path, "--fixture", entity_inputs.fixture,
                  "--relations", entity_inputs.relations, "--protocol", entity_inputs.protocol, "--public", public)
    assert "ok public" in out.stdout and "all checks hold" in out.stdout
