"""The shared HippoRAG MuSiQue sample end to end (import, embed, prepare, evaluate, export, audit) under
its own protocol, against the same 100 questions imported from musique-sample's train file: the
corpus is the same 1,890 passages, so every method's ranking of every question must be the same
(docs/hipporag.md, "The shared sample, measured"). Two full campaigns: the slow lane (`make test-long`).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lab.cli import main as lab
from protocols.committed import committed_file
from tests.conftest import REPO, SHARED_DATA, require_shared

pytestmark = pytest.mark.slow


def campaign(data, protocol, run_dir):
    result = subprocess.run([sys.executable, "-m", "lab", "run", "--data-dir", str(data), "--protocol",
                             str(protocol), "--run-dir", str(run_dir)], capture_output=True, text=True, timeout=3600,
                            cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]  # the run's last stage is the audit: exit 0 = clean
    return run_dir


def rankings(run) -> dict:
    report = json.loads((run / "report.json").read_text())
    return {(row["query_id"], row["method"]): row["ranking"] for row in report["rows"]}


def test_the_hipporag_sample_ranks_as_musique_samples_train_rows(tmp_path):
    require_shared(SHARED_DATA / "hipporag-musique-sample")
    rows_protocol = tmp_path / "musique-sample-train-v1.json"
    assert lab(["protocol", "new", "--questions", str(SHARED_DATA / "musique-sample" / "musique_sample_train.jsonl"),
                "--layout", "musique_v1", "--test", "all", "--output", str(rows_protocol)]) == 0
    layout = campaign(SHARED_DATA / "hipporag-musique-sample", committed_file("hipporag-musique-sample-v1.json"),
                      tmp_path / "layout")
    rows = campaign(SHARED_DATA / "musique-sample", rows_protocol, tmp_path / "rows")
    a, b = rankings(layout), rankings(rows)
    assert len(a) == 100 * 9 and a.keys() == b.keys()
    differing = sorted(key for key in a if a[key] != b[key])
    assert not differing, f"{len(differing)} rankings differ, first {differing[:3]}"
    public_a, public_b = (json.loads((run / "public.json").read_text()) for run in (layout, rows))
    assert public_a["aggregates"] == public_b["aggregates"]
    summary = {m: {k: v for k, v in agg.items() if k in ("queries", "ndcg@10", "recall@2", "recall@5")}
               for m, agg in public_a["aggregates"]["methods"].items()}
    print(json.dumps(summary, indent=1))
