"""`lab judge`: an external run judged against a finished campaign under its own statistics.

A run the lab exported, fed back, reproduces its method exactly (delta 0, interval [0, 0]); a
reversed run loses; every refusal is counted and writes nothing; the campaign is only read."""

from __future__ import annotations

import hashlib
import json
import math
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import lab_cli
from tests.evaluation_fixtures import exported_runs

# heavy: judges runs of an exported campaign (the fast lane has tests/evaluator/test_external_runs.py)
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return exported_runs(tmp_path_factory)[0]


def baseline_of(run) -> str:
    return json.loads(run.protocol.read_text())["evaluation"]["primary_contrast"]["baseline"]


def trec_lines(run, method: str) -> list[list[str]]:
    return [line.split() for line in (run.directory / "public.runs" / f"{method}.run").read_text().splitlines()]


def write_run(path: Path, lines) -> Path:
    path.write_text("".join(" ".join(map(str, fields)) + "\n" for fields in lines))
    return path


def judge(run, run_file: Path, out: Path, name: str = "outside", check: bool = True):
    return lab_cli("judge", "--run-dir", run.directory, "--run", run_file, "--name", name, "--output-dir", out,
                   check=check)


def contrast(judged: dict, baseline: str, metric: str) -> dict:
    return next(c for c in judged["statistics"]["contrasts"] if c["baseline"] == baseline and c["metric"] == metric)


def test_an_exported_run_judged_reproduces_its_method_exactly(run, tmp_path):
    before = hashlib.sha256(run.report.read_bytes()).hexdigest()
    method = baseline_of(run)
    judge(run, run.directory / "public.runs" / f"{method}.run", tmp_path / "j")
    judged = json.loads((tmp_path / "j" / "judged.json").read_text())
    report = json.loads(run.report.read_text())
    assert judged["label"] == "external: no proofs, not verified"
    assert judged["input"]["missing_queries"] == 0 and judged["input"]["hits_beyond_depth"] == 0
    for metric in report["protocol"]["evaluation"]["contrast_metrics"]:
        c = contrast(judged, method, metric)
        assert c["mean_delta"] == 0.0 and c["interval"] == [0.0, 0.0], c
        assert c["cluster"]["interval"] == [0.0, 0.0] and c["p_value"] == 1.0
        assert (c["wins"], c["losses"]) == (0, 0)
    # the same rankings, row for row, and the same means as the campaign's own
    rows = {r["query_id"]: r for r in report["rows"] if r["method"] == method}
    for row in judged["rows"]:
        assert row["ranking"] == rows[row["query_id"]]["ranking"]
        assert row["metrics"] == rows[row["query_id"]]["metrics"]
    assert {k: v for k, v in judged["aggregates"]["methods"]["outside"].items()} == \
        report["aggregates"]["methods"][method]
    # every frozen method gets its contrast, under the campaign's seed, and one Holm family per metric
    stats = report["statistics"]
    assert judged["statistics"]["seed"] == stats["seed"] and judged["statistics"]["resamples"] == stats["resamples"]
    assert judged["statistics"]["clusters"]["clusters"] == stats["clusters"]["clusters"]
    assert {c["baseline"] for c in judged["statistics"]["contrasts"]} == set(report["plan"]["methods"])
    n = len(report["plan"]["methods"])
    assert all(c["holm_family"].endswith(f": {n} contrasts") for c in judged["statistics"]["contrasts"])
    # and its rankings written back as a run are the lab's run, byte for byte
    assert (tmp_path / "j" / "outside.run").read_text().replace(" outside\n", f" {method}\n") == \
        (run.directory / "public.runs" / f"{method}.run").read_text()
    assert hashlib.sha256(run.report.read_bytes()).hexdigest() == before  # the campaign is only read


def test_a_contrast_against_another_method_equals_the_reports_own(run, tmp_path):
    """The external run named after the primary candidate's rankings: its contrast against the
    primary baseline is the report's confirmatory contrast, number for number (same recipes)."""
    report = json.loads(run.report.read_text())
    primary = report["protocol"]["evaluation"]["primary_contrast"]
    judge(run, run.directory / "public.runs" / f"{primary['candidate']}.run", tmp_path / "j")
    judged = json.loads((tmp_path / "j" / "judged.json").read_text())
    for c in report["statistics"]["contrasts"]:
        if c["label"] != "confirmatory":
            continue
        mine = contrast(judged, primary["baseline"], c["metric"])
        for key in ("mean_delta", "interval", "p_value", "standard_error", "detectable_effect", "wins", "losses"):
            assert mine[key] == c[key], key
        assert mine["cluster"]["interval"] == c["cluster"]["interval"]


def test_a_reversed_run_loses_and_a_jsonl_run_judges_the_same(run, tmp_path):
    method = baseline_of(run)
    lines = trec_lines(run, method)
    reversed_ = [[q, "Q0", d, r, str(int(r)), "rev"] for q, _, d, r, _, _ in lines]  # score = rank: worst first
    judge(run, write_run(tmp_path / "rev.run", reversed_), tmp_path / "rev")
    judged = json.loads((tmp_path / "rev" / "judged.json").read_text())
    assert contrast(judged, method, "ndcg@10")["mean_delta"] < 0
    # the one-sentence summary ends with the verdict the public report's rule gives (reporting/verdicts.py)
    from evaluator.judge.judged_text import sentence
    from evaluator.numbers.verdicts import verdict

    primary = contrast(judged, judged["campaign"]["primary_contrast"]["baseline"], "ndcg@10")
    word = verdict(primary, judged["statistics"]["clusters"]["primary_interval"],
                   judged["statistics"]["randomization"]["permutations"])
    assert f"Verdict: {word}" in sentence(judged) and f"Verdict: {word}" in (tmp_path / "rev" / "judged.md").read_text()
    jsonl = tmp_path / "rev.jsonl"
    jsonl.write_text("".join(json.dumps({"query_id": q, "document_id": d, "score": int(s)}) + "\n"
                             for q, _, d, _, s, _ in reversed_))
    judge(run, jsonl, tmp_path / "rev-jsonl")
    again = json.loads((tmp_path / "rev-jsonl" / "judged.json").read_text())
    assert again["rows"] == judged["rows"] and again["statistics"] == judged["statistics"]


def test_equal_scores_order_by_document_id_and_missing_queries_are_empty(run, tmp_path):
    method = baseline_of(run)
    lines = trec_lines(run, method)
    first = lines[0][0]
    kept = [[q, "Q0", d, r, "1.0", "flat"] for q, _, d, r, _, _ in lines if q == first]
    judge(run, write_run(tmp_path / "flat.run", kept), tmp_path / "flat")
    judged = json.loads((tmp_path / "flat" / "judged.json").read_text())
    cohort = json.loads(run.report.read_text())["plan"]["queries"]
    assert judged["input"]["missing_queries"] == len(cohort) - 1
    rows = {r["query_id"]: r for r in judged["rows"]}
    assert rows[first]["ranking"] == sorted(d for _, _, d, _, _, _ in kept)
    assert all(rows[q]["ranking"] == [] for q in cohort if q != first)
    assert "queries with no ranking (judged empty) | " + str(len(cohort) - 1) in (tmp_path / "flat" / "judged.md").read_text()


@pytest.mark.parametrize("edit, message", [
    (lambda ls: ls + [["no-such-query", "Q0", ls[0][2], 1, 1.0, "x"], ["other-query", "Q0", ls[0][2], 1, 1.0, "x"]],
     "2 query ids not in the campaign's cohort"),
    (lambda ls: ls + [[ls[0][0], "Q0", "musique-not-a-document", 99, -5.0, "x"]], "1 document not in the corpus"),
    (lambda ls: ls + [ls[0][:4] + ["-9.0", "x"]], "1 duplicate document in one ranking"),
    (lambda ls: [ls[0][:4] + ["high", "x"], ls[1][:4] + ["nan", "x"], ls[2][:4] + ["inf", "x"]] + ls[3:],
     "3 non-numeric or non-finite scores"),
    (lambda ls: ls + [["just", "three", "fields"]], "1 malformed line "),
])
def test_every_refusal_is_counted_and_writes_nothing(run, tmp_path, edit, message):
    lines = trec_lines(run, baseline_of(run))
    ran = judge(run, write_run(tmp_path / "bad.run", edit(lines)), tmp_path / "out", check=False)
    assert ran.returncode == 2, ran
    assert message in ran.stderr, ran.stderr
    assert not (tmp_path / "out").exists()


def test_jsonl_refusals_name_booleans_and_strings_as_non_numeric(run, tmp_path):
    q, _, d, _, _, _ = trec_lines(run, baseline_of(run))[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query_id": q, "document_id": d, "score": True}) + "\n"
                   + json.dumps({"query_id": q, "document_id": d + "x", "score": "1.5"}) + "\n")
    ran = judge(run, bad, tmp_path / "out", check=False)
    assert ran.returncode == 2 and "1 document not in the corpus" in ran.stderr
    bad.write_text(json.dumps({"query_id": q, "document_id": d, "score": "1.5"}) + "\n")
    ran = judge(run, bad, tmp_path / "out", check=False)
    assert ran.returncode == 2 and "1 non-numeric or non-finite score" in ran.stderr


def test_the_command_refuses_an_existing_output_a_frozen_name_and_a_remote_retriever(run, tmp_path):
    method = baseline_of(run)
    good = run.directory / "public.runs" / f"{method}.run"
    (tmp_path / "exists").mkdir()
    ran = judge(run, good, tmp_path / "exists", check=False)
    assert ran.returncode == 2 and "refusing to overwrite" in ran.stderr
    ran = judge(run, good, tmp_path / "out", name=method, check=False)
    assert ran.returncode == 2 and "is a frozen method" in ran.stderr
    for url in ("http://example.org:8080/search", "http://localhost:8080/search", "https://127.0.0.1:8080/search",
                "http://127.0.0.1/search", "http://10.0.0.1:8080/search"):
        ran = lab_cli("judge", "--run-dir", run.directory, "--retriever", url, "--name", "x", "--output-dir",
                      tmp_path / "out", check=False)
        assert ran.returncode == 2 and "127.0.0.1" in ran.stderr, (url, ran.stderr)
    assert not (tmp_path / "out").exists()


class Data(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        if tag == "data":
            self.found.append(dict(attrs))


def test_the_judged_page_binds_every_number_to_judged_json(run, tmp_path):
    judge(run, run.directory / "public.runs" / f"{baseline_of(run)}.run", tmp_path / "j")
    judged = json.loads((tmp_path / "j" / "judged.json").read_text())
    page = Data()
    page.feed((tmp_path / "j" / "judged.html").read_text())
    assert len(page.found) > 50
    for d in page.found:
        value = judged
        for part in d["data-path"].split("/")[1:]:
            value = value[int(part)] if isinstance(value, list) else value[part]
        assert d["value"] == repr(value), d
    text = (tmp_path / "j" / "judged.md").read_text()
    assert text.count("external: no proofs, not verified") >= 2
    import csv

    rows = list(csv.reader((tmp_path / "j" / "judged.rows.csv").read_text().splitlines()))
    assert len(rows) == 1 + judged["campaign"]["queries"] and rows[0][:3] == ["query_id", "method", "label"]
    assert rows[1][2] == "external: no proofs, not verified"
    assert all(math.isfinite(float(x)) for x in rows[1][6:])
