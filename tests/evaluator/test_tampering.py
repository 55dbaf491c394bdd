"""Bad input and tampering: each refused with a precise message, a non-zero exit, nothing overwritten.

One prepared lab and one complete campaign are shared by the module; tests that move the lab's fence
or stop it get a lab of their own.
"""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from builders.title_graph import build_relations
from evaluator.connection.client import LabClient
from ground.canonical import digest
from tests.conftest import Ran, lab_cli
from tests.evaluation_fixtures import built_inputs, prepared_lab

# heavy: campaigns run against tampered inputs; runs in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("tampering")
    prepared = prepared_lab(built_inputs(tmp_path_factory), root / "lab")
    plan, report = root / "plan.json", root / "report.json"
    prepared.evaluate(plan, report)
    yield prepared, plan, report
    if prepared.lab.process.poll() is None:
        assert prepared.lab.stop() == 0


def edited_copy(path: Path, target: Path, edit) -> Path:
    value = json.loads(path.read_text())
    edit(value)
    target.write_text(json.dumps(value))
    return target


def refused(result: subprocess.CompletedProcess, *fragments: str, code: int = 2) -> None:
    assert result.returncode == code, (result.stdout, result.stderr)
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


# ---- evaluate refuses ------------------------------------------------------------------------------


def test_an_existing_report_is_refused_and_left_alone(campaign):
    prepared, plan, report = campaign
    before = report.read_bytes()
    refused(prepared.evaluate(plan, report, check=False), "refusing to overwrite existing output", str(report))
    assert report.read_bytes() == before


def test_an_existing_plan_that_differs_is_refused(campaign, tmp_path):
    prepared, plan, _ = campaign
    other = edited_copy(plan, tmp_path / "plan.json", lambda p: p["jobs"].reverse())
    before = other.read_bytes()
    result = prepared.evaluate(other, tmp_path / "report.json", check=False)
    refused(result, "differs from the plan being pinned", "jobs")
    assert other.read_bytes() == before and not (tmp_path / "report.json").exists()


def test_fixture_edited_after_pinning(campaign, tmp_path):
    prepared, plan, _ = campaign

    def flip(fixture):
        raw = bytearray(base64.b64decode(fixture["documents"][3]["vector"]))
        raw[0] ^= 1
        fixture["documents"][3]["vector"] = base64.b64encode(bytes(raw)).decode()

    fixture = edited_copy(prepared.inputs.fixture, tmp_path / "fixture.json", flip)
    result = prepared.evaluate(plan, tmp_path / "report.json", check=False, fixture=fixture)
    refused(result, "fixture.documents[3].vector_sha256", "does not match the vector")
    assert not (tmp_path / "report.json").exists()


def test_relations_edited_after_pinning(campaign, tmp_path):
    prepared, plan, _ = campaign

    def flip(relations):
        rel = relations["relations"][0]
        rel["kind"] = "semantic_related" if rel["kind"] == "same_entity" else "same_entity"

    relations = edited_copy(prepared.inputs.relations, tmp_path / "relations.json", flip)
    refused(prepared.evaluate(plan, tmp_path / "report.json", check=False, relations=relations),
            "relations: differs from the graph rebuilt from its projection", "relations")


def test_protocol_edited_after_pinning(campaign, tmp_path):
    prepared, plan, _ = campaign
    protocol = edited_copy(prepared.inputs.protocol, tmp_path / "protocol.json",
                           lambda p: p["evaluation"].update(repetitions=3))
    refused(prepared.evaluate(plan, tmp_path / "report.json", check=False, protocol=protocol),
            "is not the protocol the source was imported with")


def test_state_edited_after_pinning(campaign, tmp_path):
    prepared, plan, _ = campaign
    state = edited_copy(prepared.state, tmp_path / "state.json",
                        lambda s: s["batches"].update(memories=s["batches"]["memories"] + 1))
    refused(prepared.evaluate(plan, tmp_path / "report.json", check=False, state=state),
            "differs from the plan being pinned", "digests")
    incomplete = edited_copy(prepared.state, tmp_path / "incomplete.json", lambda s: s.update(status="in_progress"))
    refused(prepared.evaluate(plan, tmp_path / "report2.json", check=False, state=incomplete), "is not complete")


def test_a_lab_whose_catalog_differs_from_the_protocol(campaign, tmp_path):
    """Inputs imported under a protocol copy with weighted_rrf_v2's k changed: the lab serves k = 2."""
    prepared, _, _ = campaign
    inputs = prepared.inputs
    protocol = json.loads(inputs.protocol.read_text())
    protocol["ranking_profiles"]["weighted_rrf_v2"]["k"] = 3
    fixture = json.loads(inputs.fixture.read_text())
    relations = json.loads(inputs.relations.read_text())
    generation = json.loads(inputs.generation.read_text())
    # what importing and embedding under that protocol gives (same texts, same vectors)
    fixture["source"]["protocol"]["digest"] = digest(protocol)
    fixture["source_digest"] = digest(fixture["source"])
    relations = build_relations(relations["projection"], fixture["source_digest"])
    generation["fixture_digest"] = digest(fixture)
    paths = {}
    for name, value in (("protocol", protocol), ("fixture", fixture), ("relations", relations), ("generation", generation)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(value))
    other = prepared_lab(inputs, tmp_path / "lab", **{k: v for k, v in paths.items() if k != "generation"})
    try:
        result = other.evaluate(tmp_path / "plan.json", tmp_path / "report.json", check=False, **paths)
        refused(result, "catalog: profile weighted_rrf_v2 differs from the protocol's frozen copy", "fields: k")
        assert not (tmp_path / "plan.json").exists() and not (tmp_path / "report.json").exists()
    finally:
        assert other.lab.stop() == 0


def test_a_server_pid_that_is_not_the_labs_process_is_refused(campaign, tmp_path):
    """CPU and RSS of another process must never be reported as the server's."""
    import os

    prepared, _, _ = campaign
    args = prepared.evaluate_args(tmp_path / "plan.json", tmp_path / "report.json") + ["--server-pid", os.getpid()]
    result = lab_cli(*args, check=False)
    refused(result, f"--server-pid {os.getpid()} is not the lab's process", f"pid {prepared.lab.pid}")
    assert list(tmp_path.iterdir()) == []


def test_an_access_file_without_a_pid_needs_server_pid(campaign, tmp_path):
    """The pid is read from the access file; one that names none is refused unless --server-pid says it."""
    prepared, _, _ = campaign
    access = json.loads(prepared.access_file.read_text())
    del access["pid"]
    bare = tmp_path / "access.json"
    bare.write_text(json.dumps(access))
    out = tmp_path / "out"
    out.mkdir()
    args = prepared.evaluate_args(out / "plan.json", out / "report.json", access_file=bare)
    refused(lab_cli(*args, check=False), f"access file {bare} names no pid: give --server-pid")
    assert list(out.iterdir()) == []


# ---- failures during the campaign -----------------------------------------------------------------


def start_evaluate(prepared, plan: Path, report: Path) -> subprocess.Popen:
    args = [sys.executable, "-m", "lab", *map(str, prepared.evaluate_args(plan, report))]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def pause_after_first_job(process: subprocess.Popen) -> list[str]:
    """Read stderr until the first job progress line, then SIGSTOP the campaign.

    A small campaign finishes in about a second, so without the pause a fast machine could end it
    before the intrusion lands and the test would pass or fail by timing. The caller intrudes, then
    resumes the campaign with SIGCONT.
    """
    lines = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stderr.readline()  # type: ignore[union-attr]  # started with stderr=PIPE
        if not line:
            break
        lines.append(line)
        if line.startswith("evaluate: ") and "jobs" in line and "plan pinned" not in line:
            process.send_signal(signal.SIGSTOP)
            return lines
    raise AssertionError("evaluate never reported a job: " + "".join(lines))


def test_a_write_during_evaluation_fails_the_campaign(tmp_path, tmp_path_factory):
    prepared = prepared_lab(built_inputs(tmp_path_factory), tmp_path / "lab")
    try:
        plan, report = tmp_path / "plan.json", tmp_path / "report.json"
        process = start_evaluate(prepared, plan, report)
        pause_after_first_job(process)
        with LabClient(prepared.lab.access) as client:
            client.create_memories([{"idempotency_key": "intruder", "external_id": "intruder", "payload": {"content": "x", "metadata": {}}}])
        process.send_signal(signal.SIGCONT)
        out, err = process.communicate(timeout=120)
        assert process.returncode == 1, err
        saved = json.loads(report.read_text())
        assert saved["status"] == "failed"
        assert "fence" in saved["failure"]["message"] and "fence" in err
        assert saved["rows"]  # the rows validated before the write are kept
    finally:
        assert prepared.lab.stop() == 0


def test_a_lab_stopped_mid_campaign_saves_a_failed_report_with_the_rows_so_far(tmp_path, tmp_path_factory):
    prepared = prepared_lab(built_inputs(tmp_path_factory), tmp_path / "lab")
    plan, report = tmp_path / "plan.json", tmp_path / "report.json"
    process = start_evaluate(prepared, plan, report)
    pause_after_first_job(process)
    prepared.lab.kill()
    process.send_signal(signal.SIGCONT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    saved = json.loads(report.read_text())
    assert saved["status"] == "failed" and len(saved["rows"]) >= 1
    # the lab vanished under the client: an httpx transport error, not a check of ours
    assert issubclass(getattr(httpx, saved["failure"]["type"]), httpx.TransportError), saved["failure"]
    assert "campaign failed" in err


# ---- export and audit of bad reports --------------------------------------------------------------


def test_export_refuses_a_failed_report(campaign, tmp_path):
    prepared, _, report = campaign
    failed = edited_copy(report, tmp_path / "failed.json",
                         lambda r: r.update(status="failed", failure={"message": "lab stopped"}))
    result = lab_cli("export", "--report", failed, "--fixture", prepared.inputs.fixture,
                     "--output", tmp_path / "public.json", check=False)
    refused(result, "the report is 'failed'", "lab stopped")
    assert list(tmp_path.iterdir()) == [failed]


def test_export_refuses_an_edited_report(campaign, tmp_path):
    prepared, _, report = campaign

    def inflate(r):
        r["rows"][5]["metrics"]["ndcg@10"] = 1.0 if r["rows"][5]["metrics"]["ndcg@10"] != 1.0 else 0.5

    edited = edited_copy(report, tmp_path / "edited.json", inflate)
    row = json.loads(edited.read_text())["rows"][5]
    result = lab_cli("export", "--report", edited, "--fixture", prepared.inputs.fixture,
                     "--output", tmp_path / "public.json", check=False)
    refused(result, f"rows[5] (query {row['query_id']}, method {row['method']}).metrics.ndcg@10")
    assert not (tmp_path / "public.json").exists()


def test_export_refuses_a_report_whose_fence_moved(campaign, tmp_path):
    """Metrics alone are not the report: a history that moved during the campaign is refused too."""
    prepared, _, report = campaign

    def move(r):
        r["after"]["fence"] = {**r["after"]["fence"], "high_watermark": r["after"]["fence"]["high_watermark"] + 1}

    edited = edited_copy(report, tmp_path / "edited.json", move)
    result = lab_cli("export", "--report", edited, "--fixture", prepared.inputs.fixture,
                     "--output", tmp_path / "public.json", check=False)
    refused(result, "after.fence:")
    assert list(tmp_path.iterdir()) == [edited]


def audit(prepared, report: Path) -> Ran:
    return lab_cli("audit", "--report", report, "--fixture", prepared.inputs.fixture,
                   "--relations", prepared.inputs.relations, "--protocol", prepared.inputs.protocol, check=False)


def first_graph_step(report: dict) -> tuple[int, int]:
    for i, row in enumerate(report["rows"]):
        for hit in row["page"]["hits"]:
            if hit["proof"] and hit["proof"]["steps"] and row["method"] == "graph_hybrid_balanced":
                return i, hit["rank"]
    raise AssertionError("no graph hit with a step in the campaign")


def test_audit_names_an_altered_proof_step(campaign, tmp_path):
    prepared, _, report = campaign
    value = json.loads(report.read_text())
    i, rank = first_graph_step(value)
    value["rows"][i]["page"]["hits"][rank - 1]["proof"]["steps"][0]["factor"] *= 1.5
    edited = tmp_path / "report.json"
    edited.write_text(json.dumps(value))
    result = audit(prepared, edited)
    row = value["rows"][i]
    assert result.returncode == 1
    assert (f"FAIL pages rows[{i}] query {row['query_id']}, method graph_hybrid_balanced, rank {rank}, "
            f"proof.steps[0].factor") in result.stdout
    # the page no longer has the proof digest the row (and every repetition) recorded, and the seal breaks
    assert f"FAIL rows rows[{i}] (query {row['query_id']}, method graph_hybrid_balanced).proof_digest" in result.stdout
    assert f"FAIL seal rows[{i}]" in result.stdout and "ok hash_chain" in result.stdout


def test_audit_names_an_altered_score(campaign, tmp_path):
    prepared, _, report = campaign
    value = json.loads(report.read_text())
    i = next(i for i, r in enumerate(value["rows"]) if r["method"] == "lexical" and len(r["page"]["hits"]) > 2)
    value["rows"][i]["page"]["hits"][2]["score"] += 0.5
    edited = tmp_path / "report.json"
    edited.write_text(json.dumps(value))
    result = audit(prepared, edited)
    assert result.returncode == 1
    assert f"FAIL pages rows[{i}] query {value['rows'][i]['query_id']}, method lexical, rank 3, score:" in result.stdout


def test_audit_names_an_altered_metric(campaign, tmp_path):
    prepared, _, report = campaign
    value = json.loads(report.read_text())
    value["aggregates"]["methods"]["semantic"]["judged_recall@10"] += 0.01
    edited = tmp_path / "report.json"
    edited.write_text(json.dumps(value))
    result = audit(prepared, edited)
    assert result.returncode == 1
    assert "FAIL metrics aggregates.methods.semantic.judged_recall@10: stored" in result.stdout
    assert "ok pages" in result.stdout and "ok hash_chain" in result.stdout


@pytest.mark.parametrize("workers", ["0", "2"])
def test_audit_names_an_edited_base_pool_in_process_and_on_workers(campaign, tmp_path, workers):
    """The pools are rechecked where the pages are (Checker.pool_difference): in this process, or
    on the workers beside their query's pages; either way an edit is named by query and position."""
    prepared, _, report = campaign
    value = json.loads(report.read_text())
    query_id = sorted(value["base_pools"])[1]
    pool = value["base_pools"][query_id]
    pool[2], pool[40] = pool[40], pool[2]
    edited = tmp_path / "report.json"
    edited.write_text(json.dumps(value))
    result = lab_cli("audit", "--report", edited, "--fixture", prepared.inputs.fixture, "--relations",
                     prepared.inputs.relations, "--protocol", prepared.inputs.protocol, "--workers", workers,
                     check=False)
    assert result.returncode == 1
    assert f"FAIL base_pools base_pools[{query_id}]: position 3 holds {pool[2]}, recomputed {pool[40]}" in result.stdout
    assert "ok pages" in result.stdout


def test_audit_of_the_untouched_report_holds(campaign):
    prepared, _, report = campaign
    result = audit(prepared, report)
    assert result.returncode == 0 and "FAIL" not in result.stdout, result.stdout


def test_checker_names_a_proof_from_another_anchor_and_a_missing_graph_coverage(campaign):
    """In process, on the stored pages: a proof must start at the page's anchor of its rank (its
    strength is derived from that rank), and graph coverage must be stated, not left out."""
    import copy

    from evaluator.inputs import load_frozen
    from evaluator.verification.verify import Checker

    prepared, _, report = campaign
    value = json.loads(report.read_text())
    inputs = prepared.inputs
    frozen = load_frozen(inputs.protocol, inputs.fixture, inputs.relations, inputs.generation)
    checker = Checker(frozen, value["state"])
    i, rank = first_graph_step(value)
    row = value["rows"][i]
    query, fence = frozen.queries[row["query_id"]], value["plan"]["fence"]
    assert checker.check_page(query, row["method"], row["page"], fence) == []

    moved = copy.deepcopy(row["page"])
    proof = moved["hits"][rank - 1]["proof"]
    other = next(a for a in moved["anchors"] if a["id"] != proof["anchor"]["id"])
    proof["anchor"] = {**proof["anchor"], "id": other["id"]}
    fields = [f.field for f in checker.check_page(query, row["method"], moved, fence)]
    assert "proof.anchor" in fields, fields

    stale = copy.deepcopy(row["page"])
    stale["hits"][rank - 1]["proof"]["steps"][0]["relation_revision"] = 2
    assert "proof.steps[0].revision" in [f.field for f in checker.check_page(query, row["method"], stale, fence)]

    silent = copy.deepcopy(row["page"])
    del silent["coverage"]["graph"]
    assert "coverage.graph" in [f.field for f in checker.check_page(query, row["method"], silent, fence)]

    from evaluator.state import StateError

    merged = copy.deepcopy(value["state"])
    first, second = sorted(merged["memories"])[:2]
    merged["memories"][second] = merged["memories"][first]
    with pytest.raises(StateError, match="two documents to one record"):
        Checker(frozen, merged)


def test_audit_recomputes_the_whole_plan(campaign, tmp_path):
    """A plan re-pinned with another warm-up query (its digest updated in the chain) is not the plan
    evaluate pins for these inputs: the audit names the field."""
    from evaluator.audit.audit import audit as run_audit

    prepared, _, report = campaign
    value = json.loads(report.read_text())
    development = sorted(q["id"] for q in json.loads(prepared.inputs.source.read_text())["queries"]
                         if q["split"] == "development")
    other = next(q for q in development if q != value["plan"]["warmup"]["query_id"])
    value["plan"]["warmup"]["query_id"] = other
    for entry in value["warmup"]:
        entry["query_id"] = other
    value["hash_chain"]["plan"] = digest(value["plan"])
    edited = tmp_path / "report.json"
    edited.write_text(json.dumps(value))
    lines: list[str] = []
    inputs = prepared.inputs
    result = run_audit(edited, inputs.fixture, inputs.relations, inputs.protocol, log=lines.append)
    assert not result.ok
    assert "FAIL plan plan.warmup: not the plan pinned for these inputs, lab and fence" in lines, lines
    assert "ok hash_chain" in lines and "ok warmup" not in lines


def test_a_binding_is_checked_by_its_vector_not_by_the_labs_receipt(campaign):
    """Snapshots and read-back recompute the vector hash from the vector the lab returns."""
    from evaluator.inputs import load_frozen
    from evaluator.prepare.expected import binding_is_frozen

    prepared, _, _ = campaign
    inputs = prepared.inputs
    frozen = load_frozen(inputs.protocol, inputs.fixture, inputs.relations)
    state = json.loads(prepared.state.read_text())
    doc = next(iter(state["bindings"]))
    receipt = state["bindings"][doc]
    with LabClient(json.loads(prepared.access_file.read_text())) as client:
        binding = next(b for b in client.read_embeddings([state["memories"][doc]["id"]], frozen.space_id) if b["current"])
    assert binding_is_frozen(binding, receipt, frozen, doc)
    swapped = {**binding, "vector": [-x for x in binding["vector"]]}  # same receipt, another vector
    assert not binding_is_frozen(swapped, receipt, frozen, doc)


def test_fence_check_covers_the_content_digest(campaign):
    """The content read after the campaign must be the content read before, not only the store digest."""
    from evaluator.derived.report import fence_failures

    _, _, report = campaign
    value = json.loads(report.read_text())
    assert fence_failures(value) == []
    value["after"]["content_digest"] = "0" * 64
    assert fence_failures(value) == ["after.content_digest: differs from before.content_digest"]
