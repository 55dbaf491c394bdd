"""The exported pictures: one self-contained HTML page, SVG figures beside the Markdown, same bytes
every time, and (when a headless browser is installed) a page that renders."""

from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.browser import need_browser, render
from tests.conftest import REPO, lab_cli
from tests.evaluation_fixtures import exported_runs

# heavy: renders the page of two exported campaigns; runs in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy

FIGURES = ["quality_cost", "metric_bars", "forest", "category_heatmap", "category_bars", "latency", "work_cuts"]  # no budget curve: not a rescue protocol


class Page(HTMLParser):
    """What the tests need of the page: figures, their SVGs, every <data> number, cells, ids, refs."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.figures: dict[str, int] = {}  # figure id -> number of <svg> inside
        self.data: list[dict] = []
        self.cells: list[dict] = []  # every <td>: class and the text outside <data>
        self.tables: list[dict] = []  # id of the section, column headings, rows of cells (text, paths)
        self.ids: list[str] = []
        self.tags: set[str] = set()
        self.refs: list[str] = []
        self._figure = None
        self._data = None
        self._cell = None
        self._table = None
        self._row = None
        self._heading = None
        self._section = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        self.stack.append(tag)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        for name in ("href", "xlink:href", "src", "srcset", "action", "poster", "data"):
            if name in attrs and tag != "data":
                self.refs.append(attrs[name])
        if "style" in attrs:
            self.refs.extend(re.findall(r"url\(([^)]*)\)", attrs["style"]))
        if tag == "section":
            self._section = attrs.get("id")
        if tag == "figure":
            self._figure = attrs.get("id")
            self.figures[self._figure] = 0
        if tag == "svg" and self._figure is not None:
            self.figures[self._figure] += 1
        if tag == "table":
            self._table = {"id": self._section, "columns": [], "rows": []}
            self.tables.append(self._table)
        if tag == "tr" and self._table is not None:
            self._row = []
        if tag == "th" and self._row is not None and "thead" in self.stack:
            self._heading = ""
        if tag in ("td", "th") and self._row is not None and "tbody" in self.stack:
            self._cell = {"class": attrs.get("class"), "outside": "", "paths": [], "tag": tag}
        if tag == "data":
            self._data = {"value": attrs.get("value"), "path": attrs.get("data-path"), "text": "",
                          "in_table": "table" in self.stack}

    def handle_endtag(self, tag):
        if tag == "data" and self._data is not None:
            self.data.append(self._data)
            if self._cell is not None:
                self._cell["paths"].append(self._data["path"])
            self._data = None
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append(self._cell)
            self._row.append(self._cell)
            self._cell = None
        if tag == "th" and self._heading is not None:
            self._table["columns"].append(self._heading)
            self._heading = None
        if tag == "tr" and self._row is not None:
            if self._row:
                self._table["rows"].append(self._row)
            self._row = None
        if tag == "figure":
            self._figure = None
        while self.stack and self.stack.pop() != tag:
            pass

    def handle_data(self, data):
        if self._data is not None:
            self._data["text"] += data
        elif self._cell is not None:
            self._cell["outside"] += data
        if self._heading is not None:
            self._heading += data


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return exported_runs(tmp_path_factory)[0]


@pytest.fixture(scope="module")
def page(run):
    parsed = Page()
    parsed.feed((run.directory / "public.html").read_text(encoding="utf-8"))
    return parsed


def resolve(document, pointer: str):
    value = document
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def test_the_page_is_one_file_with_every_figure_inline(run, page):
    public = json.loads(run.public.read_text())
    data = (run.directory / "public.html").read_bytes()
    assert public["outputs"]["html"] == hashlib.sha256(data).hexdigest()
    assert list(page.figures) == [f"fig-{name}" for name in FIGURES]
    assert all(count == 1 for count in page.figures.values()), page.figures
    assert sorted(public["outputs"]["figures"]) == sorted(FIGURES)
    # nothing to fetch and nothing to run: no script, stylesheet link, image, frame or external reference
    assert not page.tags & {"script", "link", "img", "iframe", "object", "embed", "base"}
    assert all(ref.startswith("#") for ref in page.refs), [r for r in page.refs if not r.startswith("#")]
    text = data.decode("utf-8")
    assert "@import" not in text and "url(http" not in text and "javascript:" not in text
    assert len(page.ids) == len(set(page.ids)), "two elements share an id"


def test_every_number_in_the_tables_is_the_public_reports(run, page):
    public = json.loads(run.public.read_text())
    numbers = [d for d in page.data if d["in_table"]]
    assert len(numbers) > 300
    for d in numbers:
        value = resolve(public, d["path"])
        assert d["value"] == repr(value), d
        shown = d["text"].replace(",", "")
        decimals = len(shown.split(".")[1]) if "." in shown else 0
        assert abs(float(shown) - value) <= 0.5 * 10 ** -decimals + 1e-12, d
    # a number cell holds bound numbers and punctuation only, never a free-standing figure
    for cell in page.cells:
        if cell["class"] == "num":
            assert not re.search(r"\d", cell["outside"]), cell
    # and the columns mean what their headings say
    methods = next(t for t in page.tables if t["id"] == "table-methods")
    column = methods["columns"].index("nDCG@10")
    for row in methods["rows"]:
        method = row[0]["outside"]
        assert row[column]["paths"] == [f"/aggregates/methods/{method}/ndcg@10"]
    contrasts = next(t for t in page.tables if t["id"] == "table-contrasts")
    delta = contrasts["columns"].index("delta")
    assert [r[delta]["paths"][0] for r in contrasts["rows"]] == \
           [f"/statistics/contrasts/{i}/mean_delta" for i in range(len(public["statistics"]["contrasts"]))]


def test_every_contrast_row_shows_both_intervals_p_holm_p_and_the_detectable_effect(run, page):
    """The statistics on the page (docs/reports.md "Statistics"): each contrast of the page carries its bootstrap interval, cluster interval, raw and
    Holm p and detectable effect, each cell bound to that contrast's number in the public report
    (query level: the frozen protocols' primary interval); the Markdown has the same columns."""
    public = json.loads(run.public.read_text())
    contrasts = next(t for t in page.tables if t["id"] == "table-contrasts")
    expected = {"95% interval": ["interval/0", "interval/1"],
                "cluster interval": ["cluster/interval/0", "cluster/interval/1"],
                "p": ["p_value"], "p (Holm)": ["p_value_holm"], "detectable ±": ["detectable_effect"]}
    columns = {heading: contrasts["columns"].index(heading) for heading in expected}
    stats = public["statistics"]
    assert len(contrasts["rows"]) == len(stats["contrasts"]) > 0
    for i, row in enumerate(contrasts["rows"]):
        for heading, parts in expected.items():
            cell = row[columns[heading]]
            if heading == "detectable ±" and stats["contrasts"][i]["detectable_effect"] is None:
                assert cell["paths"] == [] and "n/a" in cell["outside"], (i, cell)
                continue
            assert cell["paths"] == [f"/statistics/contrasts/{i}/{part}" for part in parts], (i, heading, cell)
    markdown = (run.directory / "public.md").read_text(encoding="utf-8")
    assert "| 95% interval | cluster interval | p | p (Holm) | detectable ± |" in markdown
    assert "this cohort can detect effects of about ±" in markdown


def test_the_markdown_links_each_figure_written_beside_it(run, page):
    public = json.loads(run.public.read_text())
    markdown = (run.directory / "public.md").read_text()
    html_text = (run.directory / "public.html").read_text()
    for name in FIGURES:
        path = run.directory / "public.figures" / f"{name}.svg"
        assert f"](public.figures/{name}.svg)" in markdown
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == public["outputs"]["figures"][name]
        svg = data.decode("utf-8")
        assert svg.startswith("<?xml") and svg.split("\n", 1)[1] in html_text  # the same SVG, inline
    assert "| graph_hybrid_balanced |" in markdown and "confirmatory" in markdown


def test_two_exports_of_one_report_are_byte_identical(run, tmp_path):
    lab_cli("export", "--report", run.report, "--fixture", run.fixture, "--generation", run.generation, "--output",
            tmp_path / "public.json")
    def outputs(directory: Path) -> dict:
        found = [p for top in directory.glob("public*") for p in ([top] if top.is_file() else top.rglob("*"))]
        return {p.relative_to(directory): p.read_bytes() for p in found if p.is_file()}

    first, second = outputs(run.directory), outputs(tmp_path)
    assert sorted(first) == sorted(second) and len(first) > 10
    assert [name for name in first if first[name] != second[name]] == []


def test_a_headless_browser_renders_every_figure(run, tmp_path):
    binary = need_browser()
    import io

    from PIL import Image

    seen = render(binary, run.directory / "public.html", tmp_path / "profile")
    assert seen["errors"] == []
    assert seen["resources"] == []  # nothing fetched
    assert seen["text"] > 1000
    assert [f["id"] for f in seen["figures"]] == [f"fig-{name}" for name in FIGURES]
    for fig in seen["figures"]:
        assert fig["svg"] and fig["width"] > 200 and fig["height"] > 100, fig
    for name, png in [("page", seen["screenshot"]), *seen["figure_shots"].items()]:
        image = Image.open(io.BytesIO(png)).convert("L")
        histogram = image.histogram()
        ink = sum(histogram[:200]) / (image.width * image.height)  # share of clearly non-white pixels
        assert ink > 0.01, f"{name} renders blank"


def test_the_flat_rows_load_into_pandas_with_no_reshaping(run):
    """public.rows.csv and .jsonl: one row per (query, method) with every metric, the same table
    from either file, each value the public report's exactly (pandas, pinned in the test extras)."""
    import pandas

    public = json.loads(run.public.read_text())
    csv_rows = pandas.read_csv(run.directory / "public.rows.csv")
    json_rows = pandas.read_json(run.directory / "public.rows.jsonl", lines=True)
    metrics = list(public["rows"][0]["metrics"])
    assert list(csv_rows.columns) == ["query_id", "method", "category", "hop", "retrieved", *metrics]
    assert list(json_rows.columns) == list(csv_rows.columns)
    assert len(csv_rows) == len(public["rows"]) == len(json_rows)
    pandas.testing.assert_frame_equal(csv_rows, json_rows, check_dtype=False)  # read_json narrows 1.0 to 1
    rows = {(r["query_id"], r["method"]): r for r in public["rows"]}
    for record in csv_rows.to_dict("records"):
        row = rows[(record["query_id"], record["method"])]
        assert record["retrieved"] == len(row["ranking"]) and record["category"] == row["category"]
        assert all(record[m] == row["metrics"][m] for m in metrics)
    # the mean of a column is the report's aggregate
    means = csv_rows.groupby("method")[metrics[0]].mean()
    for method, value in means.items():
        assert abs(value - public["aggregates"]["methods"][method][metrics[0]]) < 1e-12
    digests = public["outputs"]["rows"]
    assert digests["csv"] == hashlib.sha256((run.directory / "public.rows.csv").read_bytes()).hexdigest()
    assert digests["jsonl"] == hashlib.sha256((run.directory / "public.rows.jsonl").read_bytes()).hexdigest()


def test_the_answer_box_comes_first_and_binds_its_numbers(run, page):
    """The answer box leads both pages; its verdict follows the documented rule from the numbers it
    shows, each a <data> bound to the confirmatory contrast; wins and losses bind their cells."""
    from evaluator.numbers.verdicts import VERDICTS, verdict

    public = json.loads(run.public.read_text())
    box = public["glance"]["answer"]
    contrast = public["statistics"]["contrasts"][box["contrast"]]
    assert contrast["label"] == "confirmatory" and contrast["metric"] == public["evaluation"]["contrast_metrics"][0]
    permutations = public["statistics"]["randomization"]["permutations"]
    assert box["verdict"] in VERDICTS and box["verdict"] == verdict(contrast, box["unit"], permutations)
    html_text = (run.directory / "public.html").read_text()
    assert html_text.index('<section id="answer"') < html_text.index('<section id="table-identity"')
    markdown = (run.directory / "public.md").read_text()
    assert markdown.index("## Answer") < markdown.index("## Campaign")
    assert f"**{box['verdict']}.**" in markdown
    bound = [d for d in page.data if not d["in_table"]]
    assert {d["path"] for d in bound} >= {f"/statistics/contrasts/{box['contrast']}/mean_delta",
                                          f"/statistics/contrasts/{box['contrast']}/interval/0"}
    for d in bound:
        assert d["value"] == repr(resolve(public, d["path"])), d
    table = next((t for t in page.tables if t["id"] == "table-wins-losses"), None)
    questions = public["glance"]["wins_losses"]["questions"]
    if questions:
        delta = table["columns"].index("delta")
        assert [r[delta]["paths"] for r in table["rows"]] == \
               [[f"/glance/wins_losses/questions/{j}/delta"] for j in range(len(questions))]
        for q in questions:
            rows = public["rows"]
            assert q["delta"] == rows[q["candidate_row"]]["metrics"][public["glance"]["wins_losses"]["metric"]] - \
                rows[q["baseline_row"]]["metrics"][public["glance"]["wins_losses"]["metric"]]
    # ids and ranks only: no question text or gold title anywhere in the public report or its pages
    source = json.loads(run.fixture.read_text())["source"]
    shown = run.public.read_text() + markdown + html_text
    assert not any(q["question"] in shown for q in source["queries"])
    gold = {d for q in source["queries"] for d, g in q["judgments"].items() if g > 0}
    assert not any(d["title"] in shown for d in source["documents"] if d["id"] in gold and len(d["title"]) > 12)


@pytest.mark.parametrize("numbers, unit, expected", [
    ({"interval": [0.01, 0.05], "p_value": 0.01, "detectable_effect": 0.03}, "query", "better"),
    ({"interval": [-0.05, -0.01], "p_value": 0.01, "detectable_effect": 0.03}, "query", "worse"),
    ({"interval": [0.01, 0.05], "p_value": 0.07, "detectable_effect": 0.03}, "query", "no reliable difference"),
    ({"interval": [-0.02, 0.02], "p_value": 0.5, "detectable_effect": 0.03}, "query", "no reliable difference"),
    ({"interval": [-0.1, 0.1], "p_value": 0.5, "detectable_effect": 0.09}, "query", "cohort too small to tell"),
    ({"interval": [0.0, 0.0], "p_value": 1.0, "detectable_effect": None}, "query", "no reliable difference"),
])
def test_the_verdict_rule(numbers, unit, expected):
    from evaluator.numbers.verdicts import verdict

    counts = {"wins": 20, "losses": 14, "ties": 6, "p_method": "monte_carlo"}
    assert verdict({"queries": 40, **counts, **numbers}, unit, 10000) == expected
    assert verdict({"queries": 1, **counts, **numbers, "p_value": 1.0}, unit, 10000) == "cohort too small to tell"


@pytest.mark.parametrize("width", [1400, 800])
def test_the_example_page_reads_cleanly_at_1400_and_800_px(tmp_path, width):
    """docs/example/public.html (the demo's public page) in a real browser: no word of any table
    laid out over two lines, no figure label or page text drawn under 10 px, and the page no wider
    than the viewport. At 1,400 px nothing scrolls sideways either; at 800 px a wide table or figure
    scrolls inside its own section (docs/reports.md, "Reading the page"). The screenshot is written
    to tmp_path/public-WIDTH.png for a person to look at."""
    binary = need_browser()
    seen = render(binary, REPO / "docs" / "example" / "public.html", tmp_path / "profile", width=width, height=900)
    (tmp_path / f"public-{width}.png").write_bytes(seen["screenshot"])
    assert seen["viewport"] == width
    assert seen["broken"] == [], seen["broken"]
    assert seen["small"] == [], seen["small"]
    assert seen["scroll_width"] <= seen["viewport"], seen["wider"]
    if width >= 1280:
        assert seen["wider"] == [] and seen["scrolling"] == [], (seen["wider"], seen["scrolling"])


def test_the_checks_see_a_broken_word_and_a_small_label(tmp_path):
    """The page checks above can fail: a narrow cell that must break a long word, and a 6 px label."""
    binary = need_browser()
    page = tmp_path / "bad.html"
    page.write_text("<html><body><table id='t'><tr><td style='width:3em;overflow-wrap:anywhere'>"
                    "graph_hybrid_balanced</td></tr></table><svg width='200' height='50'><text x='5' y='20' "
                    "style='font-size:6px'>tiny</text></svg></body></html>")
    seen = render(binary, page, tmp_path / "profile", width=800, height=600)
    assert seen["broken"] == ["t: graph_hybrid_balanced"] and seen["small"] == [": tiny 6.0px"]


def test_the_method_table_counts_what_the_encoder_truncated(run, tmp_path):
    """Export with the generation file the report binds: `encoder` counts the truncated passages and
    cohort questions from its per-input flags, shown on the rows of the methods that read vectors;
    an edited count fails the audit, and a generation file the report does not bind is refused."""
    from evaluator.export.export import encoder_counts
    from ground.files import save

    generation = json.loads(run.generation.read_text())
    public_path = tmp_path / "public.json"
    done = lab_cli("export", "--report", run.report, "--fixture", run.fixture, "--generation", run.generation,
                   "--output", public_path)
    assert done.returncode == 0
    public = json.loads(public_path.read_text())
    assert public["encoder"] == encoder_counts(generation, public["plan"]["queries"])
    assert public["encoder"]["documents"] == len(generation["documents"])
    markdown = (tmp_path / "public.md").read_text()
    header = next(line for line in markdown.splitlines() if line.startswith("| method | queries |"))
    assert header.endswith("| truncated passages / questions |")
    counts = f"{public['encoder']['documents_truncated']} / {public['encoder']['queries_truncated']}"
    section = markdown.split("## Methods\n", 1)[1].split("\n## ", 1)[0]
    rows = {line.split(" | ")[0][2:]: line for line in section.splitlines() if line.startswith("| ")}
    assert rows["lexical"].endswith("| – |") and rows["semantic"].endswith(f"| {counts} |")
    args = [a if a != run.public else public_path for a in run.audit_args()]
    assert "audit: all checks hold" in lab_cli("audit", *args).stdout
    public["encoder"]["documents_truncated"] += 1
    public_path.unlink()
    save(public_path, public)
    assert lab_cli("audit", *args, check=False).returncode == 1
    bad = dict(generation, threads=generation["threads"] + 1)
    save(tmp_path / "other-generation.json", bad)
    refused = lab_cli("export", "--report", run.report, "--fixture", run.fixture, "--generation",
                      tmp_path / "other-generation.json", "--output", tmp_path / "again" / "public.json", check=False)
    assert refused.returncode == 2 and "is not the one report" in refused.stderr
