"""The loopback retriever contract end to end: the example adapter (examples/bm25_retriever.py,
bm25s over the corpus `lab export --with-corpus` writes) started as a real process on 127.0.0.1 and
judged by `lab judge --retriever`; its failures are recorded, not hidden."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from protocols.committed import committed_file
from tests.conftest import REPO, lab_cli
from tests.evaluation_fixtures import exported_runs

pytest.importorskip("bm25s")
# heavy: an exported campaign and a real adapter process
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return exported_runs(tmp_path_factory)[0]


@pytest.fixture(scope="module")
def corpus(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("with-corpus") / "public.json"
    lab_cli("export", "--report", run.report, "--fixture", run.fixture, "--output", out, "--with-corpus")
    return out.parent / "public.text" / "corpus.jsonl"


@pytest.fixture(scope="module")
def adapter(corpus):
    process = subprocess.Popen([sys.executable, str(REPO / "examples" / "bm25_retriever.py"), "--corpus", str(corpus),
                                "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:"), (line, process.stderr.read() if process.poll() else "")
        yield line.split("listening on ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_corpus_file_is_the_fixtures_corpus_with_its_licence(run, corpus):
    fixture = json.loads(run.fixture.read_text())
    lines = [json.loads(line) for line in corpus.read_text().splitlines()]
    assert [d["id"] for d in lines] == sorted(d["id"] for d in fixture["source"]["documents"])
    by_id = {d["id"]: d for d in fixture["source"]["documents"]}
    assert all(d["text"] == by_id[d["id"]]["text"] and d["title"] == by_id[d["id"]]["title"] for d in lines)
    folder = corpus.parent
    licence = (folder / "LICENSE.md").read_text()
    assert fixture["source"]["dataset"]["license"] in licence and fixture["source"]["dataset"]["attribution"] in licence
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    cohort = json.loads(run.report.read_text())["plan"]["queries"]
    assert [q["id"] for q in queries] == sorted(cohort)
    assert [line.split("\t")[0] for line in (folder / "queries.tsv").read_text().splitlines()] == sorted(cohort)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert sorted(manifest["files"]) == sorted(p.name for p in folder.iterdir() if p.name != "manifest.json")
    # the public report itself holds no text: no question and no passage appears in it
    public = (corpus.parent.parent / "public.json").read_text() + (corpus.parent.parent / "public.md").read_text()
    assert not any(q["text"] in public for q in queries)


def test_the_example_adapter_is_judged_end_to_end(run, adapter, tmp_path):
    ran = lab_cli("judge", "--run-dir", run.directory, "--retriever", adapter, "--name", "bm25s", "--output-dir",
                  tmp_path / "j", "--send-vector")
    judged = json.loads((tmp_path / "j" / "judged.json").read_text())
    cohort = judged["campaign"]["queries"]
    assert judged["input"]["kind"] == "retriever" and judged["input"]["query_vector"] is True
    assert judged["retriever"]["asked"] == cohort and judged["retriever"]["failures"] == 0
    assert judged["retriever"]["latency_ms"]["n"] == cohort and judged["retriever"]["latency_ms"]["p50"] > 0
    assert sum(1 for r in judged["rows"] if r["ranking"]) > cohort // 2
    # BM25 over the same texts retrieves much of what the lab's own lexical method does
    assert judged["aggregates"]["methods"]["bm25s"]["judged_recall@10"] > 0.3
    assert "judged bm25s" in ran.stderr
    assert (tmp_path / "j" / "bm25s.run").read_text().count("\n") == sum(len(r["ranking"]) for r in judged["rows"])


def test_a_retriever_that_fails_is_recorded_as_failures(run, adapter, tmp_path):
    wrong = adapter.rsplit("/", 1)[0] + "/nowhere"  # the adapter answers 404 there
    ran = lab_cli("judge", "--run-dir", run.directory, "--retriever", wrong, "--name", "broken", "--output-dir",
                  tmp_path / "j", check=False)
    assert ran.returncode == 1 and "a failed judgment" in ran.stderr, ran.stderr  # any failure fails by default
    judged = json.loads((tmp_path / "j" / "judged.json").read_text())
    cohort = judged["campaign"]["queries"]
    assert judged["retriever"]["failures"] == cohort and judged["retriever"]["failures_by_kind"] == {"http 404": cohort}
    assert judged["retriever"]["status"] == "failed" and judged["retriever"]["max_failed_share"] == 0
    assert all(r["ranking"] == [] for r in judged["rows"]) and judged["input"]["missing_queries"] == cohort
    # a declared share above what failed: judged (exit 0), the failures still counted
    lab_cli("judge", "--run-dir", run.directory, "--retriever", wrong, "--name", "broken", "--output-dir",
            tmp_path / "k", "--max-failed-share", "1")
    assert json.loads((tmp_path / "k" / "judged.json").read_text())["retriever"]["status"] == "judged"


def test_a_retriever_with_nothing_listening_is_refused_before_anything_is_written(run, tmp_path):
    import socket

    with socket.socket() as probe:  # a port nothing listens on: bound here, closed before the judge asks
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ran = lab_cli("judge", "--run-dir", run.directory, "--retriever", f"http://127.0.0.1:{port}/search",
                  "--name", "absent", "--output-dir", tmp_path / "j", check=False)
    assert ran.returncode == 2, ran.stderr
    assert "nothing answers" in ran.stderr and "nothing written" in ran.stderr
    assert not (tmp_path / "j").exists()


@pytest.mark.parametrize("value, message", [
    ("bm25=http://example.org:8765/search", "only 127.0.0.1"),
    ("bm25=http://0.0.0.0:8765/search", "only 127.0.0.1"),
    ("just-a-name", "give NAME=URL"),
])
def test_lab_run_refuses_an_external_method_off_loopback_before_anything_runs(tmp_path, value, message):
    out = tmp_path / "run"
    ran = lab_cli("run", "--protocol", committed_file("synthetic-v1.json"), "--run-dir", out, "--external", value,
                  check=False)
    assert ran.returncode == 2 and message in ran.stderr, ran.stderr
    assert not out.exists()
