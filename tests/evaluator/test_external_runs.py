"""Reading external runs (evaluator/judge/runs.py) on toy input: the tie rule, the depth cut,
missing queries, and every refusal counted; and the loopback rule of the retriever URL."""

from __future__ import annotations

import json

import pytest

from evaluator.judge.retriever import NotLoopback, check_url
from evaluator.judge.runs import RunRefused, read_run, trec_text

COHORT = ["q1", "q2", "q3"]
DOCUMENTS = {"d1", "d2", "d3", "d4"}


def run_file(tmp_path, text: str, name: str = "r.run"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_equal_scores_break_on_document_id_and_rankings_are_cut_at_depth(tmp_path):
    path = run_file(tmp_path, "q1 Q0 d3 1 2.0 x\nq1 Q0 d2 2 2.0 x\nq1 Q0 d4 3 5 x\nq1 Q0 d1 9 -1e3 x\nq2 Q0 d1 1 1 x\n")
    fmt, ranked = read_run(path, COHORT, DOCUMENTS, depth=3)
    assert fmt == "trec"
    assert ranked.rankings == {"q1": ["d4", "d2", "d3"], "q2": ["d1"], "q3": []}
    assert ranked.missing == ["q3"] and ranked.beyond_depth == 1 and ranked.hits == 5
    assert trec_text({"q2": ["d1"]}, None, "t") == "q2 Q0 d1 1 1 t\n"


def test_a_jsonl_run_reads_like_the_trec_run(tmp_path):
    lines = [{"query_id": "q1", "document_id": d, "score": s} for d, s in (("d3", 2.0), ("d2", 2.0), ("d4", 5))]
    path = run_file(tmp_path, "".join(json.dumps(x) + "\n" for x in lines), "r.jsonl")
    fmt, ranked = read_run(path, COHORT, DOCUMENTS, depth=10)
    assert fmt == "jsonl" and ranked.rankings["q1"] == ["d4", "d2", "d3"]


@pytest.mark.parametrize("text, counted", [
    ("qX Q0 d1 1 1 x\nqY Q0 d1 1 1 x\n", "2 query ids not in the campaign's cohort"),
    ("q1 Q0 dX 1 1 x\n", "1 document not in the corpus"),
    ("q1 Q0 d1 1 1 x\nq1 Q0 d1 2 0 x\n", "1 duplicate document in one ranking"),
    ("q1 Q0 d1 1 one x\nq1 Q0 d2 2 nan x\nq1 Q0 d3 3 -inf x\n", "3 non-numeric or non-finite scores"),
    ("q1 Q0 d1 1\n", "1 malformed line "),
    ("", "1 empty run file"),
])
def test_every_refusal_is_counted(tmp_path, text, counted):
    with pytest.raises(RunRefused) as caught:
        read_run(run_file(tmp_path, text), COHORT, DOCUMENTS, depth=10)
    assert counted in str(caught.value)


def test_several_refusals_are_reported_together(tmp_path):
    text = "qX Q0 d1 1 1 x\nq1 Q0 dX 1 1 x\nq1 Q0 d1 1 true x\n"
    with pytest.raises(RunRefused) as caught:
        read_run(run_file(tmp_path, text), COHORT, DOCUMENTS, depth=10)
    message = str(caught.value)
    assert "1 query id not in" in message and "1 document not in" in message and "1 non-numeric" in message


@pytest.mark.parametrize("url", ["http://127.0.0.1:8765/search", "http://127.0.0.1:1/"])
def test_loopback_urls_are_accepted(url):
    assert check_url(url) == url


@pytest.mark.parametrize("url", ["http://localhost:8765/search", "http://10.1.2.3:8765/", "https://127.0.0.1:8765/",
                                 "http://127.0.0.1/search", "http://user:pw@127.0.0.1:8765/", "ftp://127.0.0.1:21/",
                                 "http://127.0.0.1.example.org:80/"])
def test_any_other_url_is_refused(url):
    with pytest.raises(NotLoopback):
        check_url(url)
