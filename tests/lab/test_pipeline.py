"""The evaluator end to end on a small synthetic corpus: real model, real lab, every real CLI."""

from __future__ import annotations

import json

import ir_measures
import pytest
from ir_measures import R, nDCG

from ground.canonical import digest
from tests.conftest import lab_cli
from tests.evaluation_fixtures import built_inputs, prepared_lab


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    lab = prepared_lab(built_inputs(tmp_path_factory), tmp_path_factory.mktemp("pipeline"))
    yield lab
    assert lab.lab.stop() == 0


@pytest.mark.heavy  # a prepared lab over the session's generated, imported and embedded inputs
def test_prepare_resumes_after_a_crash_and_reproduces_the_state(prepared):
    original = json.loads(prepared.state.read_text())
    assert original["status"] == "complete"
    assert len(original["memories"]) == len(json.loads(prepared.inputs.source.read_text())["documents"])
    # a crash after the memories and embeddings: relations not written yet, state not complete
    crashed = dict(original, status="in_progress", fence=None, relations={},
                   batches={**original["batches"], "relations": 0})
    prepared.state.write_text(json.dumps(crashed))
    out = lab_cli("prepare", *prepared.common())
    assert "re-verifying" in out.stderr and "prepare:" in out.stderr  # resumed, with progress lines
    assert json.loads(prepared.state.read_text()) == original  # same ids, same receipts, same fence


@pytest.mark.heavy  # a whole campaign: evaluate, export, audit
def test_evaluate_export_audit(prepared, tmp_path):
    plan, report_path = tmp_path / "plan.json", tmp_path / "report.json"
    out = prepared.evaluate(plan, report_path)
    assert str(report_path) in out.stdout and "evaluate:" in out.stderr and "ETA" in out.stderr
    report = json.loads(report_path.read_text())
    protocol = json.loads(prepared.inputs.protocol.read_text())
    n_queries, n_methods = 10, len(protocol["methods"])
    assert report["status"] == "complete" and report["failure"] is None
    assert len(report["rows"]) == n_queries * n_methods
    assert len(report["jobs"]) == n_queries * n_methods * protocol["evaluation"]["repetitions"]
    assert [[j["query_id"], j["method"], j["repetition"]] for j in report["jobs"]] == json.loads(plan.read_text())["jobs"]
    development = [q for q in json.loads(prepared.inputs.source.read_text())["queries"] if q["split"] == "development"]
    smallest = min(development, key=lambda q: (len(q["question"]), q["id"]))["id"]
    assert [(w["query_id"], w["method"]) for w in report["warmup"]] == [(smallest, m) for m in sorted(protocol["methods"])]
    assert report["resources"]["pid"] == prepared.lab.pid
    assert report["before"]["fence"] == report["after"]["fence"] == report["plan"]["fence"]
    assert report["resources"]["samples"] >= 2 and report["resources"]["rss_bytes_max"] > 0
    assert report["hash_chain"]["plan"] == digest(json.loads(plan.read_text()))
    primary = [c for c in report["statistics"]["contrasts"] if c["label"] == "confirmatory"]
    assert [c["metric"] for c in primary] == protocol["evaluation"]["contrast_metrics"]

    # a second campaign under the same (byte-identical) plan reproduces every ranking and proof
    again_path = tmp_path / "again.json"
    prepared.evaluate(plan, again_path)
    again = json.loads(again_path.read_text())
    assert [(r["ranking_digest"], r["proof_digest"]) for r in again["rows"]] == \
           [(r["ranking_digest"], r["proof_digest"]) for r in report["rows"]]
    assert again["aggregates"] == report["aggregates"] and again["statistics"] == report["statistics"]

    public = tmp_path / "public.json"
    out = lab_cli("export", "--report", report_path, "--fixture", prepared.inputs.fixture,
                  "--output", public)
    runs, qrels, summary = tmp_path / "public.runs", tmp_path / "public.qrels", tmp_path / "public.md"
    page, figures = tmp_path / "public.html", tmp_path / "public.figures"
    rows, text_dir = (tmp_path / "public.rows.csv", tmp_path / "public.rows.jsonl"), tmp_path / "public.text"
    assert out.stdout.split() == [str(public), str(runs), str(qrels), str(summary), str(page), str(figures),
                                  *map(str, rows), str(text_dir)]
    text = public.read_text()
    data = json.loads(text)
    for private in ('"content"', '"vector"', '"proof"', '"token"', '"scope"', '"payload"'):
        assert private not in text
    assert data["private_report_digest"] == digest(report)
    assert "| graph_hybrid_balanced |" in summary.read_text() and "confirmatory" in summary.read_text()
    # the exported run and qrels files give the report's means under ir_measures
    qrel_list = list(ir_measures.read_trec_qrels(str(qrels)))
    for method in protocol["methods"]:
        run = list(ir_measures.read_trec_run(str(runs / f"{method}.run")))
        values = ir_measures.calc_aggregate([nDCG @ 10, R @ 10], qrel_list, run)
        means = report["aggregates"]["methods"][method]
        # the run's rank-derived scores make the TREC tools see exactly the lab's order, ties included
        assert values[R @ 10] == pytest.approx(means["judged_recall@10"], abs=1e-9)
        assert values[nDCG @ 10] == pytest.approx(means["ndcg@10"], abs=1e-9)

    out = lab_cli("audit", "--report", report_path, "--fixture", prepared.inputs.fixture,
                  "--relations", prepared.inputs.relations, "--protocol", prepared.inputs.protocol,
                  "--generation", prepared.inputs.generation, "--state", prepared.state, "--plan", plan,
                  "--public", public)
    for check in ("pages", "rows", "metrics", "generation", "seal", "record", "state_file", "plan_file", "public"):
        assert f"ok {check}" in out.stdout, out.stdout
    assert "all checks hold" in out.stdout


def test_job_order_is_a_seeded_permutation_and_warmup_is_the_smallest_query():
    from evaluator.plan import seeded_jobs, smallest_query

    jobs = seeded_jobs(["q2", "q1", "q3"], ["b", "a"], 2, seed=20260921)
    assert sorted(jobs) == [[q, m, r] for q in ("q1", "q2", "q3") for m in ("a", "b") for r in (1, 2)]
    assert jobs == seeded_jobs(["q1", "q2", "q3"], ["a", "b"], 2, seed=20260921)
    assert jobs != seeded_jobs(["q1", "q2", "q3"], ["a", "b"], 2, seed=1)
    queries = [{"id": "b", "question": "abc"}, {"id": "a", "question": "xyz"}, {"id": "c", "question": "abcd"}]
    assert smallest_query(queries)["id"] == "a"  # fewest characters, ties by id


def test_state_lock_is_exclusive_and_symlinks_are_refused(tmp_path):
    from evaluator.state import StateError, StateLock, load_state

    state = tmp_path / "state.json"
    with StateLock(state):
        with pytest.raises(StateError, match="locked by another prepare"):
            with StateLock(state):
                pass
    with StateLock(state):  # released on exit
        pass
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(StateError, match="symbolic link"):
        load_state(link)
    (tmp_path / "other.json.lock").symlink_to(real)
    with pytest.raises(StateError, match="symbolic link"):
        with StateLock(tmp_path / "other.json"):
            pass


def test_pin_writes_accepts_identical_and_refuses_anything_else(tmp_path):
    from evaluator.plan import PlanMismatch, pin

    plan = {"format": "graph_evaluation_plan_v1", "jobs": [["q1", "m", 1]]}
    path = tmp_path / "plan.json"
    digest_written = pin(path, plan)
    assert pin(path, plan) == digest_written  # byte-identical: accepted
    with pytest.raises(PlanMismatch, match="fields: jobs"):
        pin(path, {**plan, "jobs": [["q1", "m", 2]]})
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(PlanMismatch, match="not a file"):
        pin(tmp_path / "dir.json", plan)

