"""Depth: a protocol version may judge deeper than k (synthetic-depth100-v1: every method returns 100
documents; R@20, R@50, R@100 and the recall-at-k curve), validated like every protocol field; the
protocols that declare none are unchanged."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from evaluator.derived import depth
from evaluator.numbers import statistics
from ground.errors import RefusedInput
from protocols.committed import committed_file
from protocols.registry import DEPTH_100
from protocols.schema import SEARCH_LIMIT_MAX, ProtocolError, load_protocol, validate_protocol
from tests.conftest import lab_cli
from tests.evaluation_fixtures import Run, built_inputs, prepared_lab

DEEP = committed_file("synthetic-depth100-v1.json")
BASE = committed_file("synthetic-v1.json")


def test_the_search_limit_is_the_servers():
    from server.validation import LIMITS

    assert SEARCH_LIMIT_MAX == LIMITS["search_limit"][1]


def test_the_deep_protocol_declares_depth_limits_and_cutoffs():
    deep, base = load_protocol(DEEP), load_protocol(BASE)
    assert deep["evaluation"]["depth"] == 100 and deep["evaluation"]["k"] == base["evaluation"]["k"] == 10
    assert deep["evaluation"]["recall_cutoffs"] == [2, 5, 10, 20, 50, 100]
    assert {spec["limit"] for spec in deep["methods"].values()} == {100}
    assert "depth" not in base["evaluation"] and depth.evaluation_depth(base["evaluation"]) == 10
    # everything else is the parent's
    trimmed = copy.deepcopy(deep)
    trimmed["evaluation"].pop("depth")
    trimmed["evaluation"]["recall_cutoffs"] = base["evaluation"]["recall_cutoffs"]
    for spec in trimmed["methods"].values():
        spec["limit"] = 10
    trimmed["protocol_version"], trimmed["title"] = base["protocol_version"], base["title"]
    assert trimmed == base


@pytest.mark.parametrize("edit, message", [
    (lambda p: p["evaluation"].update(depth=5), "evaluation.depth: must be >= 10"),
    (lambda p: p["evaluation"].update(depth=SEARCH_LIMIT_MAX + 1), "exceeds the lab's search limit 100"),
    (lambda p: p["evaluation"].update(depth="100"), "evaluation.depth: expected an integer"),
    (lambda p: p["methods"]["lexical"].update(limit=50), "methods.lexical.limit: 50 is not evaluation.depth = 100"),
    (lambda p: p["evaluation"]["recall_cutoffs"].append(200), "200 exceeds evaluation.depth = 100"),
])
def test_a_deep_protocol_is_validated_like_any_other(edit, message):
    protocol = json.loads(DEEP.read_text())
    validate_protocol(copy.deepcopy(protocol))
    edit(protocol)
    with pytest.raises(ProtocolError) as caught:
        validate_protocol(protocol)
    assert message in str(caught.value), str(caught.value)
    base = json.loads(BASE.read_text())
    base["evaluation"]["recall_cutoffs"].append(20)
    with pytest.raises(ProtocolError, match="20 exceeds evaluation.k = 10"):
        validate_protocol(base)


def test_the_step_refuses_a_parent_that_is_already_deep():
    with pytest.raises(RefusedInput, match="already declares a depth"):
        DEPTH_100.derive(load_protocol(DEEP), "again")


@pytest.fixture(scope="module")
def deep_run(tmp_path_factory):
    """A small campaign of the deep protocol: the test cohort of the evaluator fixtures, every method
    at limit 100, through import, embed, prepare, evaluate and export."""
    inputs = built_inputs(tmp_path_factory)
    root = tmp_path_factory.mktemp("deep-run")
    run = Run(root / "run")
    run.directory.mkdir()
    small = json.loads(inputs.protocol.read_text())
    protocol = DEPTH_100.derive(small, "synthetic-test-small-depth100")
    protocol["evaluation"]["repetitions"] = 1
    run.protocol.write_text(json.dumps(protocol, indent=2))
    lab_cli("import", "--run-dir", run.directory, "--data-dir", inputs.root / "synthetic")
    lab_cli("embed", "build", "--run-dir", run.directory)
    prepared = prepared_lab(inputs, root / "lab", fixture=run.fixture, relations=run.relations, protocol=run.protocol)
    try:
        lab_cli("evaluate", *prepared.common(fixture=run.fixture, relations=run.relations, protocol=run.protocol),
                "--generation", run.generation, "--plan", run.plan, "--report", run.report)
    finally:
        assert prepared.lab.stop() == 0
    lab_cli("export", "--run-dir", run.directory)
    return run


@pytest.mark.heavy  # a whole campaign at depth 100
def test_a_deep_campaign_reports_deep_recall_and_the_curve(deep_run):
    public = json.loads(deep_run.public.read_text())
    fixture = json.loads(deep_run.fixture.read_text())
    methods = public["plan"]["methods"]
    for method in methods:
        assert {"recall@20", "recall@50", "recall@100", "ndcg@10"} <= set(public["aggregates"]["methods"][method])
    assert max(len(r["ranking"]) for r in public["rows"]) > 10  # pages deeper than k, each checked by the verifier
    assert all(len(r["ranking"]) <= 100 for r in public["rows"])
    curve = public["recall_curve"]
    assert curve["cutoffs"] == list(range(1, 101))
    # the curve at 10, 20, 50, 100 is the report's own recall at those cutoffs (judged recall@10 at k)
    for method in methods:
        means = public["aggregates"]["methods"][method]
        assert curve["methods"][method][9] == pytest.approx(means["judged_recall@10"], abs=1e-12)
        for k in (20, 50, 100):
            assert curve["methods"][method][k - 1] == pytest.approx(means[f"recall@{k}"], abs=1e-12)
        assert all(a <= b + 1e-12 for a, b in zip(curve["methods"][method], curve["methods"][method][1:]))
    primary = public["evaluation"]["primary_contrast"]
    assert sorted(curve["band"]) == sorted([primary["candidate"], primary["baseline"]])
    # the band at k = 20 by recipe 1, recomputed by hand
    relevant = {q["id"]: {d for d, g in q["judgments"].items() if g > 0} for q in fixture["source"]["queries"]}
    rows = sorted((r for r in public["rows"] if r["method"] == primary["candidate"]), key=lambda r: r["query_id"])
    values = np.array([len(relevant[r["query_id"]] & set(r["ranking"][:20])) / len(relevant[r["query_id"]]) for r in rows])
    low, high = statistics.bootstrap_interval(values, public["plan"]["seed"], public["evaluation"]["bootstrap"]["resamples"],
                                              public["evaluation"]["bootstrap"]["confidence"])
    assert (curve["band"][primary["candidate"]]["low"][19], curve["band"][primary["candidate"]]["high"][19]) == (low, high)
    assert "recall_curve" in public["outputs"]["figures"]
    assert "![recall_curve](public.figures/recall_curve.svg)" in (deep_run.directory / "public.md").read_text()
    assert "| R@20 | R@50 | R@100 |" in (deep_run.directory / "public.md").read_text()
    lab_cli("audit", "--report", deep_run.report, "--fixture", deep_run.fixture, "--relations", deep_run.relations,
            "--protocol", deep_run.protocol, "--generation", deep_run.generation, "--public", deep_run.public)


@pytest.mark.heavy
def test_a_run_judged_on_a_deep_campaign_is_cut_at_its_depth(deep_run, tmp_path):
    method = json.loads(deep_run.protocol.read_text())["evaluation"]["primary_contrast"]["baseline"]
    lab_cli("judge", "--run-dir", deep_run.directory, "--run", deep_run.directory / "public.runs" / f"{method}.run",
            "--name", "again", "--output-dir", tmp_path / "j")
    judged = json.loads((tmp_path / "j" / "judged.json").read_text())
    assert judged["input"]["depth"] == 100
    c = next(c for c in judged["statistics"]["contrasts"] if c["baseline"] == method)
    assert c["mean_delta"] == 0.0 and c["interval"] == [0.0, 0.0]
    assert "recall@100" in judged["aggregates"]["methods"]["again"]
