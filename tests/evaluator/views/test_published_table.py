"""A campaign on a published cohort's twin shows the published figures beside the lab's own, labelled
"published, not re-run here", each row with its source, and every number bound to the public report.

The twin is a synthetic MuSiQue cohort in the HippoRAG layout whose protocol marks it as the twin of
HippoRAG's MuSiQue cohort (the real files are not on this machine); the whole pipeline runs on it
(import, embed, lab, prepare, evaluate, export, audit) through `lab run`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from protocols.new import new_protocol
from protocols.published import figures
from protocols.schema import validate_protocol
from tests.conftest import REPO
from tests.evaluator.views.test_public_html import Page, resolve
from tests.hipporag_fixtures import CORPUS, QUESTIONS, musique_twin

COHORT = "hipporag-musique-1000"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("published-twin")
    musique_twin(root / "data", questions=10)
    protocol = new_protocol(questions=root / "data" / QUESTIONS, corpus=root / "data" / CORPUS,
                            layout="hipporag_musique_v1", test="all", development=None, version="twin-v1")
    protocol["published_cohort"] = {"name": COHORT, "relation": "twin"}
    protocol["evaluation"]["repetitions"] = 1
    (root / "twin-v1.json").write_text(json.dumps(validate_protocol(protocol), indent=2))
    result = subprocess.run([sys.executable, "-m", "lab", "run", "--data-dir", str(root / "data"),
                             "--protocol", str(root / "twin-v1.json"), "--run-dir", str(root / "run")],
                            capture_output=True, text=True, timeout=900, cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]  # the audit is the run's last stage: exit 0 = clean
    return root / "run"


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_the_public_report_carries_the_published_rows_with_their_sources(run):
    public = json.loads((run / "public.json").read_text())
    published = public["published"]
    data = figures()
    expected = [row for row in data["rows"] if data["cohorts"][row["cohort"]]["dataset"] == "MuSiQue"]
    assert published["cohort"] == COHORT and published["relation"] == "twin"
    assert published["rows"] == expected and len(expected) == 9
    assert set(published["sources"]) == {"hipporag-table-2", "hipporag-2-table-3"}
    assert all(published["sources"][row["source"]] == data["sources"][row["source"]] for row in published["rows"])


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_the_markdown_shows_the_published_table_beside_the_lab_and_labels_it(run):
    markdown = (run / "public.md").read_text()
    assert f"## Published recall on {COHORT} (published, not re-run here)" in markdown
    assert "## This lab's R@2 and R@5 in the field's units (measured here)" in markdown
    assert markdown.index("## Methods") < markdown.index("published, not re-run here")
    assert "twin of hipporag-musique-1000" in markdown and "not comparable" in markdown
    for source in ("HippoRAG: Neurobiologically Inspired Long-Term Memory", "(HippoRAG 2). ICML 2025. Table 3"):
        assert source in markdown
    assert "| HippoRAG (Contriever) | the cohort this one twins | 11,656 | 41.0 | 52.1 | hipporag-table-2 |" in markdown
    assert "| HippoRAG 2 | the cohort this one twins | 11,656 | n/a | 74.7 | hipporag-2-table-3 |" in markdown


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_every_number_of_both_tables_in_the_page_is_bound_to_the_public_report(run):
    public = json.loads((run / "public.json").read_text())
    page = Page()
    page.feed((run / "public.html").read_text(encoding="utf-8"))
    tables = {t["id"]: t for t in page.tables}
    published = tables["table-published"]
    assert published["columns"] == ["method", "cohort", "passages", "R@2 (%)", "R@5 (%)", "source"]
    assert len(published["rows"]) == len(public["published"]["rows"])
    for i, row in enumerate(published["rows"]):
        paths = [p for cell in row for p in cell["paths"]]
        want = [f"/published/cohorts/{public['published']['rows'][i]['cohort']}/passages"]
        want += [f"/published/rows/{i}/{c}" for c in ("recall@2", "recall@5") if public["published"]["rows"][i][c] is not None]
        assert paths == want
    lab = tables["table-field-recall"]
    assert [row[0]["outside"] for row in lab["rows"]] == public["plan"]["methods"]
    numbers = [d for d in page.data if d["path"].startswith(("/published/", "/aggregates/methods/"))]
    assert len(numbers) > 40
    for d in numbers:
        value = resolve(public, d["path"])
        assert d["value"] == repr(value), d
        shown = d["text"].replace(",", "")
        if shown.endswith("%"):  # the lab's fractions, shown as the field's percentages
            assert abs(float(shown[:-1]) - 100 * value) <= 0.05 + 1e-9, d
        else:
            decimals = len(shown.split(".")[1]) if "." in shown else 0
            assert abs(float(shown) - value) <= 0.5 * 10 ** -decimals + 1e-12, d


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_the_twin_warmed_up_on_the_corpus_warmup_query(run):
    report = json.loads((run / "report.json").read_text())
    plan = json.loads((run / "plan.json").read_text())
    assert plan["warmup"]["query_id"] == "warmup" and "warmup" not in plan["queries"]
    assert {w["query_id"] for w in report["warmup"]} == {"warmup"}
    assert len(report["warmup"]) == len(plan["methods"])
