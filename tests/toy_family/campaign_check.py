"""The toy families at work, run by tests/lab/test_extend_a_method.py inside the copy of the repository
that the steps of docs/extend-a-method.md changed (and only there: it imports the toys' modules).

A protocol with both toy methods passes the validator, the fixture is built with the titlesim family's
section (`--title-vectors`, derived from its declaration), a real lab serves both routes with the
fields their declarations derive and holds the titles as node memories no other method ranks, a
campaign runs them through the evaluator's own commands (every page verified), the audit passes, and
the verifiers catch tampered pages.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from evaluator.connection.client import LabClient, LabError
from evaluator.inputs import load_frozen
from evaluator.verification.verify import Checker
from lab.pipeline import embed_arguments
from protocols.routes import ROUTES
from protocols.schema import validate_protocol
from tests.evaluation_fixtures import Inputs, cli, prepared_lab

METHOD = {"route": "coord", "profile": "coord_v1", "limit": 10, "min_terms": 1}
TITLES = {"route": "titlesim", "profile": "titlesim_v1", "limit": 10}


def toy_inputs(root: Path) -> Inputs:
    """The outer session's generated corpus, imported and embedded under a protocol with the toy
    method (the import binds the protocol's digest, the fixture the source's)."""
    base = Inputs(**{name: Path(value) for name, value in json.loads(os.environ["TOY_FAMILY_INPUTS"]).items()})
    inputs = Inputs(root, root / "protocol.json", root / "source.json", root / "relations.json",
                    root / "fixture.json", root / "generation.json")
    protocol = json.loads(base.protocol.read_text())
    protocol["protocol_version"] = "synthetic-test-coord"
    protocol["methods"] = {"lexical": protocol["methods"]["lexical"], "coord": METHOD, "titlesim": TITLES}
    protocol["ranking_profiles"] = {"bm25_v1": protocol["ranking_profiles"]["bm25_v1"], **ROUTES["coord"].profiles,
                                    **ROUTES["titlesim"].profiles}
    protocol["evaluation"]["primary_contrast"] = {"candidate": "coord", "baseline": "lexical",
                                                  "label": "coordination-level matching minus BM25"}
    validate_protocol(protocol)  # the route, its family and its fields are known to the validator (step 1)
    inputs.protocol.write_text(json.dumps(protocol, indent=2))
    cli("import_musique_graph.py", "--protocol", inputs.protocol, "--source-dir", base.root / "synthetic",
        "--output", inputs.source, "--relations", inputs.relations)
    # the flag a family's section declares (builders/embedding/sections/), as lab run derives it
    assert embed_arguments(protocol) == ["--title-vectors"]
    cli("build_embedding_fixture.py", "--source", inputs.source, "--output", inputs.fixture,
        "--measurements", inputs.generation, "--title-vectors")
    return inputs


def test_the_toy_family_runs_a_verified_campaign(tmp_path):
    inputs = toy_inputs(tmp_path)
    prepared = prepared_lab(inputs, tmp_path / "lab")
    plan, report_path = tmp_path / "plan.json", tmp_path / "report.json"
    try:
        # the lab accepts exactly the fields the route declares (steps 1 and 3)
        with LabClient(prepared.lab.access) as client:
            with pytest.raises(LabError) as missing:
                client.search("coord", {"profile": "coord_v1", "query": "river", "limit": 3})
            with pytest.raises(LabError) as unknown:
                client.search("coord", {**METHOD, "query": "river", "seed": "lexical"})
        prepared.evaluate(plan, report_path)
    finally:
        assert prepared.lab.stop() == 0
    assert (missing.value.status, missing.value.code) == (422, "missing_field") and "min_terms" in missing.value.message
    assert (unknown.value.status, unknown.value.code) == (422, "unknown_field") and "seed" in unknown.value.message

    report = json.loads(report_path.read_text())
    assert report["status"] == "complete"  # every page of every method passed its verification
    rows = [row for row in report["rows"] if row["method"] == "coord"]
    assert rows and all(row["page"]["method"] == "coord" for row in rows)
    assert sum(len(row["records"]) for row in rows) > 0
    titled = [row for row in report["rows"] if row["method"] == "titlesim"]
    assert titled and all(len(row["records"]) == TITLES["limit"] for row in titled)
    # the titles are node memories of the lab: prepared, never ranked by another method
    nodes = [key for key in report["state"]["memories"] if key.startswith("~t:")]
    assert len(nodes) == len(json.loads(inputs.source.read_text())["documents"])
    assert not {row["page"]["hits"][0]["id"] for row in report["rows"] if row["page"]["hits"]} & {
        report["state"]["memories"][key]["id"] for key in nodes}

    audit = cli("audit_graph_evaluation.py", "--report", report_path, "--fixture", inputs.fixture, "--relations",
                inputs.relations, "--protocol", inputs.protocol, "--generation", inputs.generation, "--state",
                prepared.state, "--plan", plan)
    assert "all checks hold" in audit.stdout

    # the verifier (step 4) recomputes the page: a changed score or order is caught
    frozen = load_frozen(inputs.protocol, inputs.fixture, inputs.relations)
    checker = Checker(frozen, report["state"])
    row = next(row for row in rows if len(row["records"]) >= 2)
    query = frozen.queries[row["query_id"]]
    assert checker.check_page(query, "coord", row["page"], None) == []
    raised = copy.deepcopy(row["page"])
    raised["hits"][0]["score"] += 1.0
    assert {(f.field, f.rank) for f in checker.check_page(query, "coord", raised, None)} >= {("score", 1)}
    swapped = copy.deepcopy(row["page"])
    swapped["hits"][:2] = [{**swapped["hits"][1], "rank": 1}, {**swapped["hits"][0], "rank": 2}]
    assert "id" in {f.field for f in checker.check_page(query, "coord", swapped, None)}
    row = titled[0]
    query = frozen.queries[row["query_id"]]
    assert checker.check_page(query, "titlesim", row["page"], None) == []
    nudged = copy.deepcopy(row["page"])
    nudged["hits"][0]["score"] -= 0.01
    assert ("score", 1) in {(f.field, f.rank) for f in checker.check_page(query, "titlesim", nudged, None)}
