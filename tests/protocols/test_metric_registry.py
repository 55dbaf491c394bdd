"""The metric registry (protocols/metrics/): the report's columns, labels and the schema derive from
it, an unknown metric name is refused at load (exit 2, nothing written), and adding a metric is the
one file docs/extend-a-metric.md names (a toy metric added to a copy of the repository)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.numbers import metrics
from evaluator.views.tables import metric_label
from protocols import metrics as registry
from protocols.committed import committed_file
from protocols.schema import ProtocolError, validate_protocol
from tests.lab.test_extend_a_method import changed_files

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "extend-a-metric.md"
SYNTHETIC = committed_file("synthetic-v1.json")
COPIED = ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab", "scripts", "bench")
STEP = re.compile(r"^(\d+)\. \*\*`([^`]+)`\*\*( \(new\))?:", re.M)
COUNT = re.compile(r"^## The steps: (\d+) files?, (\d+) new$", re.M)
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def protocol(**evaluation) -> dict:
    value = json.loads(SYNTHETIC.read_text())
    value["evaluation"].update(evaluation)
    return value


def test_the_columns_and_labels_are_the_frozen_reports():
    # the names and labels every committed report and table holds (facts the registry must keep)
    assert metrics.METRIC_ORDER == ("ndcg@10", "judged_recall@10", "recall@2", "recall@5", "all_supports@10",
                                    "no_support@10", "chain_coverage@10", "full_chain_hit@10")
    assert [metric_label(n) for n in metrics.METRIC_ORDER] == [
        "nDCG@10", "judged R@10", "R@2", "R@5", "all supports@10", "no support@10", "chain cov@10", "full chain@10"]
    assert registry.names(protocol(k=5, recall_cutoffs=[1, 5])["evaluation"]) == [
        "ndcg@5", "judged_recall@5", "recall@1", "all_supports@5", "no_support@5", "chain_coverage@5",
        "full_chain_hit@5"]


@pytest.mark.parametrize("name", ["ndgc@10", "recall@3", "ndcg@5", "ndcg"])
def test_an_unknown_contrast_metric_is_refused_with_the_known_ones(name):
    value = protocol()
    value["evaluation"]["contrast_metrics"] = ["ndcg@10", name]
    with pytest.raises(ProtocolError) as refused:
        validate_protocol(value)
    assert str(refused.value) == (f"evaluation.contrast_metrics[1]: {name!r} is not a metric this evaluation "
                                  f"reports; known: {', '.join(metrics.METRIC_ORDER)}")


@pytest.mark.parametrize("asked, reason", [(["ndcg"], r"evaluation.metrics\[0\]: 'ndcg' is not a metric added to the "
                                                     r"standard ones; added: none \(every report holds the standard "),
                                           (["mrr"], "'mrr' is not a metric added"), ([], "must not be empty")])
def test_evaluation_metrics_names_only_added_metrics(asked, reason):
    with pytest.raises(ProtocolError, match=reason):
        validate_protocol(protocol(metrics=asked))


def _refused(args: list[str], cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "lab", *args], cwd=cwd, env={**ENV, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    return done.stderr


def test_import_and_evaluate_refuse_a_misspelt_metric_before_writing(tmp_path):
    bad = protocol(contrast_metrics=["ndgc@10"])
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    for name in ("fixture.json", "relations.json", "state.json", "generation.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "access.json").write_text(json.dumps({"base_url": "http://127.0.0.1:9", "token": "t", "scope": "s",
                                                      "pid": 1}))
    before = sorted(p.name for p in tmp_path.iterdir())
    message = "'ndgc@10' is not a metric this evaluation reports"
    assert message in _refused(["import", "--protocol", "bad.json", "--data-dir", ".", "--output", "out/s.json",
                                "--relations", "out/r.json"], tmp_path)
    assert message in _refused(["evaluate", "--protocol", "bad.json", "--fixture", "fixture.json",
                                "--relations", "relations.json", "--access-file", "access.json",
                                "--state", "state.json", "--generation", "generation.json",
                                "--plan", "out/plan.json", "--report", "out/report.json"], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def _copy(tmp_path: Path) -> Path:
    copy_ = tmp_path / "repo"
    for name in COPIED:
        shutil.copytree(REPO / name, copy_ / name, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return copy_


def test_protocol_show_refuses_a_declared_file_that_no_longer_validates(tmp_path):
    repo = _copy(tmp_path)
    path = repo / "protocols" / "frozen" / "datasets" / "musique-sample-v1.json"
    value = json.loads(path.read_text())
    value["evaluation"]["contrast_metrics"][0] = "ndgc@10"
    path.write_text(json.dumps(value, indent=2))
    done = subprocess.run([sys.executable, "-m", "lab", "protocol", "show", "musique-sample-v1"], cwd=repo,
                          env={**ENV, "PYTHONPATH": str(repo)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert "'ndgc@10' is not a metric this evaluation reports" in done.stderr


def test_adding_a_metric_is_the_one_documented_file(tmp_path):
    steps = [(path, bool(new)) for _, path, new in STEP.findall(PAGE.read_text())]
    assert tuple(map(int, COUNT.search(PAGE.read_text()).groups())) == (len(steps), sum(n for _, n in steps)) == (1, 1)
    repo = _copy(tmp_path)
    (path, _), = steps
    target = repo / path.replace("<metric>", "reciprocal_rank")
    shutil.copyfile(REPO / "tests" / "toy_metric" / "reciprocal_rank.py", target)
    assert changed_files(repo) == {"protocols/metrics/reciprocal_rank.py": True}
    done = subprocess.run([sys.executable, str(REPO / "tests" / "toy_metric" / "check.py"), str(SYNTHETIC)],
                          cwd=repo, env={**ENV, "PYTHONPATH": str(repo)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "toy metric ok" in done.stdout, done.stdout + done.stderr


def test_the_toy_metric_is_not_in_the_repository():
    assert "reciprocal_rank" not in registry.METRICS
    assert registry.STANDARD == tuple(registry.METRICS)  # every declared metric is in every report
