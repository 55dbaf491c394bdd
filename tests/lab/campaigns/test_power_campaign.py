"""The new statistics through a real campaign: two concurrent evaluation clients give the report one
client gives; export and audit re-derive the statistics block; a one-dataset suite pools the audited
report end to end, and a report edited after the campaign is refused."""

from __future__ import annotations

import json
import shutil

import pytest

from lab import demo
from tests.conftest import lab_cli
from tests.evaluation_fixtures import built_inputs, prepared_lab
from tests.evaluation_fixtures import one_dataset_suite as shared_suite

# heavy: two-client campaigns and pooling; runs in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy

TIMING_KEYS = ("retrieval_micros", "http_ms", "embed_plus_http_ms")


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory):
    """One prepared lab; the same plan's campaign with one client and with two."""
    prepared = prepared_lab(built_inputs(tmp_path_factory), tmp_path_factory.mktemp("power"))
    out = prepared.workdir
    try:
        prepared.evaluate(out / "plan1.json", out / "report1.json")
        args = prepared.evaluate_args(out / "plan2.json", out / "report2.json") + ["--clients", "2"]
        lab_cli(*args)
    finally:
        assert prepared.lab.stop() == 0
    yield prepared, json.loads((out / "report1.json").read_text()), json.loads((out / "report2.json").read_text())


def test_two_clients_give_the_report_one_client_gives(campaigns):
    prepared, one, two = campaigns
    assert "clients" not in one["plan"] and two["plan"]["clients"] == 2
    # the private report is written compact (one line): the C encoder, not the indented pure-Python one
    assert (prepared.workdir / "report2.json").read_text().count("\n") == 1
    assert {k: v for k, v in two["plan"].items() if k != "clients"} == one["plan"]
    assert two["status"] == "complete"
    assert two["rows"] == one["rows"]  # every ranking, proof and page, in the same order
    strip = [{k: v for k, v in job.items() if k not in TIMING_KEYS} for job in two["jobs"]]
    assert strip == [{k: v for k, v in job.items() if k not in TIMING_KEYS} for job in one["jobs"]]
    for key in ("aggregates", "statistics", "work", "cuts", "cross_checks"):
        assert two[key] == one[key], key


def test_statistics_block_carries_every_new_field(campaigns):
    _, one, _ = campaigns
    stats = one["statistics"]
    assert stats["randomization"]["permutations"] == 10_000
    assert stats["clusters"]["rule"] == "musique_single_hop_components_v1"
    assert stats["clusters"]["primary_interval"] == "query"
    assert stats["clusters"]["queries"] == 10
    for c in stats["contrasts"]:
        assert 0 < c["p_value"] <= c["p_value_holm"] <= 1
        assert c["cluster"]["clusters"] == stats["clusters"]["clusters"]
        assert len(c["cluster"]["interval"]) == 2 and "detectable_effect" in c


def test_export_and_audit_rederive_the_statistics_of_a_two_client_report(campaigns, tmp_path):
    prepared, _, two = campaigns
    report = prepared.workdir / "report2.json"
    public = tmp_path / "public.json"
    lab_cli("export", "--report", report, "--fixture", prepared.inputs.fixture, "--output", public)
    assert json.loads(public.read_text())["statistics"] == two["statistics"]
    summary = (tmp_path / "public.md").read_text()
    assert "| cluster interval | p | p (Holm) | detectable ± | W/L/T |" in summary
    assert "this cohort can detect effects of about ±" in summary
    out = lab_cli("audit", "--report", report, "--fixture", prepared.inputs.fixture,
                  "--relations", prepared.inputs.relations, "--protocol", prepared.inputs.protocol,
                  "--generation", prepared.inputs.generation)
    assert "ok plan" in out.stdout and "all checks hold" in out.stdout


def run_directory(prepared, report: dict, where) -> object:
    """The run directory `lab pool` reads: report.json with fixture, relations, generation beside it."""
    where.mkdir()
    for name in ("fixture", "relations", "generation"):
        shutil.copyfile(getattr(prepared.inputs, name), where / f"{name}.json")
    (where / "report.json").write_text(json.dumps(report))
    return where


def one_dataset_suite(prepared, tmp_path) -> object:
    return shared_suite(prepared.inputs.protocol, tmp_path)


def test_a_one_dataset_suite_pools_the_audited_report(campaigns, tmp_path):
    prepared, one, _ = campaigns
    suite = one_dataset_suite(prepared, tmp_path)
    run = run_directory(prepared, one, tmp_path / "run")
    out = lab_cli("pool", "--suite", suite, "--runs", run, "--output-dir", tmp_path / "pooled")
    written = [tmp_path / "pooled" / f"pooled.{ext}" for ext in ("json", "md", "html")]
    assert out.stdout.split() == [str(p) for p in written]
    pooled = json.loads(written[0].read_text())
    # with one dataset, equal weight and the protocol's own seed, the pooled row is the report's
    # confirmatory nDCG@10 contrast: the same interval, p and detectable effect
    primary = next(c for c in one["statistics"]["contrasts"] if c["label"] == "confirmatory" and c["metric"] == "ndcg@10")
    assert pooled["pooled"]["interval"] == primary["interval"]
    assert pooled["pooled"]["p_value"] == primary["p_value"]
    assert pooled["pooled"]["detectable_effect"] == pytest.approx(primary["detectable_effect"], rel=1e-12)
    assert pooled["per_dataset"][0]["cluster"] == {k: v for k, v in primary["cluster"].items() if k != "p_value_holm"}
    assert "the pooled cohort can detect effects of about ±" in written[1].read_text()
    html = written[2].read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html and "pooled (equal weights, queries)" in html


def test_pool_refuses_a_report_that_fails_its_audit(campaigns, tmp_path):
    prepared, one, _ = campaigns
    suite = one_dataset_suite(prepared, tmp_path)
    edited = json.loads(json.dumps(one))
    edited["rows"][0]["metrics"]["ndcg@10"] = 1.0 - edited["rows"][0]["metrics"]["ndcg@10"]
    run = run_directory(prepared, edited, tmp_path / "run")
    out = lab_cli("pool", "--suite", suite, "--runs", run, "--output-dir", tmp_path / "pooled", check=False)
    assert out.returncode == 2 and "fails its audit" in out.stderr and "metrics" in out.stderr
    assert not (tmp_path / "pooled").exists()


def test_demo_samples_ends_with_the_pooled_table_of_the_pool_command(campaigns, tmp_path, capsys):
    prepared, one, _ = campaigns
    suite = one_dataset_suite(prepared, tmp_path)
    run = run_directory(prepared, one, tmp_path / "run")
    results = [{"dataset": "synthetic", "ok": True, "run": run}]
    text, ok = demo.pool_step(suite, results, tmp_path / "pooled")
    printed = capsys.readouterr().out
    written = [tmp_path / "pooled" / f"pooled.{ext}" for ext in ("json", "md", "html")]
    assert ok and text == written[1].read_text() and printed.startswith(text)
    assert printed.splitlines()[-3:] == [f"wrote {p}" for p in written]
    assert "| pooled (equal weights, queries) |" in text
    # the very numbers the pool command writes for the same report (only the output differs)
    lab_cli("pool", "--suite", suite, "--runs", run, "--output-dir", tmp_path / "by-command")
    assert (tmp_path / "by-command" / "pooled.json").read_bytes() == written[0].read_bytes()


def test_demo_samples_skips_the_pool_when_a_campaign_failed_or_its_audit_fails(campaigns, tmp_path, capsys):
    prepared, one, _ = campaigns
    suite = one_dataset_suite(prepared, tmp_path)
    text, ok = demo.pool_step(suite, [{"dataset": "synthetic", "ok": False, "run": tmp_path}], tmp_path / "a")
    assert not ok and "synthetic failed" in text and not (tmp_path / "a").exists()
    edited = json.loads(json.dumps(one))
    edited["rows"][0]["metrics"]["ndcg@10"] = 1.0 - edited["rows"][0]["metrics"]["ndcg@10"]
    run = run_directory(prepared, edited, tmp_path / "run")
    text, ok = demo.pool_step(suite, [{"dataset": "synthetic", "ok": True, "run": run}], tmp_path / "b")
    assert not ok and text.startswith("Pooling refused:") and "fails its audit" in text
    assert not (tmp_path / "b").exists()
    text, ok = demo.pool_step(None, [], tmp_path / "c")
    assert ok and "no pooled table" in text and not (tmp_path / "c").exists()
