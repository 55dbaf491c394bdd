"""Judging like the field: every run file `lab judge` writes has scores strictly
decreasing with rank, so ir_measures re-scoring it gives the lab's figure; a judged run with equal
scores reports how many queries have ties and the primary metric under both tie orders, the
trec_eval one being what ir_measures computes from the tied file itself. (The exported runs are
re-scored with ir_measures in tests/lab/test_pipeline.py.)"""

from __future__ import annotations

import json
import math

import ir_measures
import pytest
from ir_measures import nDCG

from evaluator.judge.runs import trec_text
from tests.conftest import lab_cli
from tests.evaluation_fixtures import exported_runs


def _scores(path):
    by_query: dict[str, list[float]] = {}
    for line in path.read_text().splitlines():
        q, _, _, _, score, _ = line.split()
        by_query.setdefault(q, []).append(float(score))
    return by_query


def test_written_scores_decrease_strictly_even_when_the_given_ones_tie():
    text = trec_text({"q": ["a", "b", "c", "d"]}, {"q": [2.0, 2.0, 2.0, 1.0]}, "t")
    scores = [float(line.split()[4]) for line in text.splitlines()]
    assert [line.split()[2] for line in text.splitlines()] == ["a", "b", "c", "d"]
    assert all(x > y for x, y in zip(scores, scores[1:])) and scores[0] == 2.0 and scores[-1] == 1.0
    assert math.nextafter(2.0, -math.inf) == scores[1]


@pytest.mark.heavy  # an exported campaign
def test_a_tied_run_is_judged_in_the_labs_order_and_its_written_run_rescores_the_same(tmp_path_factory, tmp_path):
    run = exported_runs(tmp_path_factory)[0]
    report = json.loads(run.report.read_text())
    method = report["plan"]["methods"][0] if "methods" in report["plan"] else sorted(report["aggregates"]["methods"])[0]
    rankings: dict[str, list[str]] = {}
    for row in report["rows"]:
        if row["method"] == method and row["query_id"] not in rankings:
            rankings[row["query_id"]] = row["ranking"][:10]
    # every hit of a query scores the same but the first: ties wherever a query has three hits or more
    tied = tmp_path / "tied.run"
    tied.write_text("".join(f"{q} Q0 {doc} {rank} {2 if rank == 1 else 1} mine\n"
                            for q in sorted(rankings) for rank, doc in enumerate(rankings[q], start=1)))
    lab_cli("judge", "--run-dir", run.directory, "--run", tied, "--name", "mine", "--output-dir", tmp_path / "j")
    judged = json.loads((tmp_path / "j" / "judged.json").read_text())
    ties = judged["input"]["ties"]
    with_ties = sum(1 for r in rankings.values() if len(r) >= 3)
    assert ties["queries_with_ties"] == with_ties > 0 and ties["metric"] == "ndcg@10"
    qrels = list(ir_measures.read_trec_qrels(str(run.directory / "public.qrels")))
    field = ir_measures.calc_aggregate([nDCG @ 10], qrels, list(ir_measures.read_trec_run(str(tied))))[nDCG @ 10]
    written = tmp_path / "j" / "mine.run"
    rescored = ir_measures.calc_aggregate([nDCG @ 10], qrels, list(ir_measures.read_trec_run(str(written))))[nDCG @ 10]
    assert rescored == pytest.approx(judged["aggregates"]["methods"]["mine"]["ndcg@10"], abs=1e-9)
    assert rescored == pytest.approx(ties["lab_order"], abs=1e-9)
    assert field == pytest.approx(ties["trec_eval_order"], abs=1e-9)  # what trec_eval says of the tied file
    assert all(all(x > y for x, y in zip(s, s[1:])) for s in _scores(written).values())
    assert "in the lab's order / trec_eval's" in (tmp_path / "j" / "judged.md").read_text()
