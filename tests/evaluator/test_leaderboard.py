"""The leaderboard: letters that mean what they say, p-values an independent computation reproduces,
a cohort too small to tell, the Pareto front; then `lab leaderboard` on real campaigns (one report,
two reports of one protocol, a suite), its refusals, and an audit that catches a hand edit."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from evaluator.numbers import pooling, statistics
from evaluator.numbers.leaderboard import Stratum, board
from evaluator.numbers.letters import letters, share_a_letter, split_letters
from evaluator.views import leaderboard_views
from ground.canonical import digest
from tests.conftest import lab_cli
from tests.evaluation_fixtures import exported_runs, one_dataset_suite

SETTINGS = {"metric": "ndcg@10", "unit": "query", "weights": "equal", "alpha": 0.05, "power": 0.8, "seed": 7,
            "resamples": 500, "confidence": 0.95, "permutations": 2000, "adjustment": "holm over every pair of the board"}


def toy_stratum(name: str, queries: int, shifts: dict[str, float], seed: int, cluster_size: int = 1,
                costs: dict[str, float] | None = None) -> Stratum:
    """Methods whose per-query values are a shared base plus their shift plus noise on a 1/8 grid."""
    rng = np.random.default_rng(seed)
    ids = [f"{name}-q{i:03d}" for i in range(queries)]
    base = rng.integers(0, 9, size=queries) / 8
    values = {m: {q: float(min(1.0, max(0.0, b + shift + rng.integers(-2, 3) / 8))) for q, b in zip(ids, base)}
              for m, shift in shifts.items()}
    clusters = [ids[i:i + cluster_size] for i in range(0, queries, cluster_size)]
    categories = {q: f"{2 + i % 3}hop" for i, q in enumerate(ids)}
    timed = {m: {"http_ms": [(costs or {}).get(m, 1.0) + k / 100 for k in range(5)],
                 "retrieval_ms": [0.5] * 5} for m in shifts}
    return Stratum(name, values, categories, clusters, costs=timed)


# ------------------------------------------------------------------------------------------ letters


def test_methods_share_a_letter_exactly_when_no_test_separated_them():
    rng = np.random.default_rng(3)
    for trial in range(200):
        count = int(rng.integers(1, 9))
        names = [f"m{i}" for i in range(count)]
        pairs = [(a, b) for a, b in itertools.combinations(names, 2) if rng.random() < 0.4]
        shown = letters(names, pairs)
        assert shown[names[0]].startswith("a")
        for a, b in itertools.combinations(names, 2):
            separated = (a, b) in pairs
            assert share_a_letter(shown[a], shown[b]) is not separated, (trial, pairs, shown)
        assert letters(names, list(reversed(pairs))) == shown  # the order of the pairs changes nothing


def test_letters_past_z_keep_a_suffix_and_split_back():
    names = [f"m{i:02d}" for i in range(60)]
    everything = list(itertools.combinations(names, 2))
    shown = letters(names, everything)
    assert len({shown[n] for n in names}) == 60 and shown[names[-1]] == "h2"
    assert split_letters("ab2c") == ["a", "b2", "c"]


# ------------------------------------------------------------------------------------------ the numbers


def test_exact_p_values_equal_scipys_permutation_test_on_every_pair():
    stratum = toy_stratum("tiny", 11, {"a": 0.2, "b": 0.05, "c": 0.0, "d": -0.1}, seed=5)
    result = board([stratum], SETTINGS)  # 2^11 = 2048 patterns > 2000 permutations: Monte Carlo
    assert result["p_method"] == "monte_carlo"
    result = board([stratum], {**SETTINGS, "permutations": 4096})
    assert result["p_method"] == "exact"
    ids = stratum.ids
    for pair in result["pairs"]:
        x = np.array([stratum.values[pair["better"]][q] for q in ids])
        y = np.array([stratum.values[pair["worse"]][q] for q in ids])
        scipy_p = stats.permutation_test((x, y), lambda u, v: np.mean(u - v), permutation_type="samples",
                                         n_resamples=np.inf, alternative="two-sided").pvalue
        assert pair["p_value"] == pytest.approx(scipy_p, abs=1e-12), pair


def test_monte_carlo_p_values_means_and_intervals_are_the_reports_own_recipe():
    stratum = toy_stratum("one", 40, {"a": 0.1, "b": 0.0, "c": 0.02, "d": -0.05, "e": 0.1}, seed=9)
    result = board([stratum], SETTINGS)
    for pair in result["pairs"]:
        own = statistics.contrast(stratum.values[pair["better"]], stratum.values[pair["worse"]], seed=7,
                                  resamples=500, confidence=0.95, tolerance=1e-12, permutations=2000)
        assert pair["p_value"] == own["p_value"] and pair["mean_delta"] == own["mean_delta"]
    assert [p["p_value_holm"] for p in result["pairs"]] == statistics.holm([p["p_value"] for p in result["pairs"]])
    for row in result["methods"]:
        own = statistics.mean_interval(stratum.values[row["method"]], seed=7, resamples=500, confidence=0.95)
        assert row["mean"] == own["mean"] and row["interval"] == own["interval"]
    means = [row["mean"] for row in result["methods"]]
    assert means == sorted(means, reverse=True)
    for adjacent in result["adjacent"]:
        own = statistics.contrast(stratum.values[adjacent["better"]], stratum.values[adjacent["worse"]], seed=7,
                                  resamples=500, confidence=0.95, tolerance=1e-12, permutations=2000)
        assert adjacent["interval"] == own["interval"]
        assert adjacent["detectable_effect"] == pytest.approx(own["detectable_effect"], rel=1e-12)
        if adjacent["mean_delta"]:
            wanted = math.ceil(40 * (own["detectable_effect"] / abs(own["mean_delta"])) ** 2)
            assert adjacent["queries_to_separate"] == wanted
    shown = {row["method"]: row["letters"] for row in result["methods"]}
    for pair in result["pairs"]:
        assert pair["separated"] is (pair["p_value_holm"] <= 0.05)
        assert share_a_letter(shown[pair["better"]], shown[pair["worse"]]) is not pair["separated"]


@pytest.mark.parametrize("unit", ["query", "cluster"])
def test_a_pooled_board_is_the_pooled_contrast_of_each_pair(unit):
    shifts = {"a": 0.08, "b": 0.0, "c": 0.03}
    strata = [toy_stratum("musique", 21, shifts, 1, cluster_size=3), toy_stratum("hotpotqa", 13, shifts, 2),
              toy_stratum("2wiki", 29, shifts, 3, cluster_size=2)]
    settings = {**SETTINGS, "unit": unit}
    result = board(strata, settings)
    rule = {"unit": unit, "weights": "equal", "resamples": 500, "confidence": 0.95, "permutations": 2000}
    for pair in result["pairs"]:
        data = [pooling.DatasetDeltas(s.name, s.values[pair["better"]], s.values[pair["worse"]], s.clusters, "toy",
                                      1e-12) for s in strata]
        pooled = pooling.pooled_contrast(data, rule, 7)
        assert pair["p_value"] == pooled["p_value"] and pair["mean_delta"] == pooled["mean_delta"]
        adjacent = next((a for a in result["adjacent"] if (a["better"], a["worse"]) == (pair["better"], pair["worse"])), None)
        if adjacent is not None:
            assert adjacent["interval"] == pooled["interval"]
            assert adjacent["standard_error"] == pytest.approx(pooled["standard_error"], rel=1e-12)
    assert [s["weight"] for s in result["strata"]] == [1 / 3] * 3
    assert set(result["methods"][0]["per_dataset"]) == {"musique", "hotpotqa", "2wiki"}
    assert "musique: 2hop" in result["methods"][0]["per_category"]


def test_a_cohort_too_small_to_tell_says_so():
    # eight queries: 3 wins, 1 loss, 4 ties; with 4 non-zero deltas the smallest p is 2/16
    ids = [f"q{i}" for i in range(8)]
    a = dict(zip(ids, [0.5, 0.6, 0.7, 0.2, 0.5, 0.5, 0.5, 0.5]))
    b = dict(zip(ids, [0.3, 0.4, 0.5, 0.3, 0.5, 0.5, 0.5, 0.5]))
    stratum = Stratum("tiny", {"a": a, "b": b}, {}, [[q] for q in ids])
    result = board([stratum], {**SETTINGS, "permutations": 10_000})
    (pair,) = result["pairs"]
    assert result["p_method"] == "exact" and pair["smallest_p"] == 2 / 16 and pair["p_value"] == 0.25
    assert not pair["decidable"] and not result["decidable"]
    rule = leaderboard_views.reading_rule(result)
    assert "too small to tell any two methods apart" in rule and "0.125" in rule
    larger = board([toy_stratum("big", 40, {"a": 0.3, "b": 0.0}, 4)], SETTINGS)
    assert larger["decidable"] and larger["pairs"][0]["separated"]
    assert "too small" not in leaderboard_views.reading_rule(larger)


def test_the_pareto_front_holds_only_undominated_methods():
    costs = {"fast_good": 1.0, "slow_best": 5.0, "slow_worse": 6.0, "fast_worst": 0.5}
    stratum = toy_stratum("s", 30, {"fast_good": 0.1, "slow_best": 0.3, "slow_worse": 0.0, "fast_worst": -0.3}, 6,
                          costs=costs)
    result = board([stratum], SETTINGS)
    front = {row["method"] for row in result["methods"] if row["pareto"]}
    assert front == {"fast_good", "slow_best", "fast_worst"}
    row = next(r for r in result["methods"] if r["method"] == "slow_worse")
    assert row["cost"]["http_ms_p50"] == pytest.approx(6.02) and row["cost"]["jobs"] == 5


def test_the_board_is_the_same_bytes_every_time():
    strata = [toy_stratum("x", 25, {"a": 0.1, "b": 0.0, "c": 0.05}, 8)]
    assert digest(board(strata, SETTINGS)) == digest(board(strata, SETTINGS))


# ------------------------------------------------------------------------------------------ the command


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return exported_runs(tmp_path_factory)


def leaderboard(*args, check=True):
    return lab_cli("leaderboard", *args, check=check)


@pytest.mark.heavy  # two exported campaigns with the real model
def test_one_report_gives_a_board_its_audit_recomputes(runs, tmp_path):
    out = tmp_path / "board"
    ran = leaderboard("--runs", runs[0].directory, "--output-dir", out)
    names = ["leaderboard.json", "leaderboard.md", "leaderboard.html", "leaderboard.csv", "leaderboard.svg"]
    assert ran.stdout.split() == [str(out / n) for n in names]
    document = json.loads((out / "leaderboard.json").read_text())
    report = json.loads(runs[0].report.read_text())
    contrasts = {(c["candidate"], c["baseline"]): c for c in report["statistics"]["contrasts"] if c["metric"] == "ndcg@10"}
    checked = 0
    for pair in document["pairs"]:
        own = contrasts.get((pair["better"], pair["worse"])) or contrasts.get((pair["worse"], pair["better"]))
        if own is not None:
            assert pair["p_value"] == own["p_value"]
            checked += 1
    assert checked >= 2
    assert document["inputs"]["reports"][0]["private_report_digest"] == digest(report)
    html = (out / "leaderboard.html").read_text()
    assert "<svg" in html and 'id="fig-quality_cost"' in html and "<script" not in html
    assert (out / "leaderboard.csv").read_text().splitlines()[0].startswith("rank,method,letters,mean")
    audited = lab_cli("audit", "--leaderboard", out)
    assert "audit: all checks hold" in audited.stdout


@pytest.mark.heavy  # two exported campaigns with the real model
@pytest.mark.parametrize("edit", ["letters", "p_value"])
def test_the_audit_fails_on_a_hand_edited_letter_or_p_value(runs, tmp_path, edit):
    out = tmp_path / "board"
    leaderboard("--runs", runs[0].directory, "--output-dir", out)
    document = json.loads((out / "leaderboard.json").read_text())
    if edit == "letters":
        document["methods"][-1]["letters"] += "z"
        where = "/methods/"
    else:
        document["pairs"][0]["p_value"] = 0.001
        where = "/pairs/0/p_value"
    (out / "leaderboard.json").write_text(json.dumps(document))
    audited = lab_cli("audit", "--leaderboard", out, check=False)
    assert audited.returncode == 1 and "FAIL leaderboard.board" in audited.stdout and where in audited.stdout


@pytest.mark.heavy  # two exported campaigns with the real model
def test_the_audit_fails_on_an_edited_view(runs, tmp_path):
    out = tmp_path / "board"
    leaderboard("--runs", runs[0].directory, "--output-dir", out)
    (out / "leaderboard.md").write_text((out / "leaderboard.md").read_text().replace("| a |", "| b |", 1))
    audited = lab_cli("audit", "--leaderboard", out, check=False)
    assert audited.returncode == 1 and "FAIL leaderboard.markdown" in audited.stdout


@pytest.mark.heavy  # two exported campaigns with the real model
def test_two_reports_of_one_protocol_merge_into_one_board(runs, tmp_path):
    one = tmp_path / "one"
    both = tmp_path / "both"
    leaderboard("--runs", runs[0].directory, "--output-dir", one)
    leaderboard("--runs", runs[0].directory, runs[1].directory, "--output-dir", both)
    first, merged = (json.loads((d / "leaderboard.json").read_text()) for d in (one, both))
    # the rankings are identical, so every number but the cost is the one report's
    strip = lambda doc: [{k: v for k, v in row.items() if k not in ("cost", "pareto")} for row in doc["methods"]]  # noqa: E731
    assert strip(merged) == strip(first) and merged["pairs"] == first["pairs"]
    assert merged["methods"][0]["cost"]["jobs"] == 2 * first["methods"][0]["cost"]["jobs"]
    assert len(merged["inputs"]["reports"]) == 2


@pytest.mark.heavy  # two exported campaigns with the real model
def test_a_suite_pools_its_datasets(runs, tmp_path):
    suite = one_dataset_suite(runs[0].protocol, tmp_path)
    out = tmp_path / "board"
    leaderboard("--suite", suite, "--runs", runs[0].directory, "--output-dir", out)
    document = json.loads((out / "leaderboard.json").read_text())
    assert document["inputs"]["suite"]["suite_version"] == "suite-small"
    assert [s["name"] for s in document["strata"]] == ["synthetic"]
    assert "audit: all checks hold" in lab_cli("audit", "--leaderboard", out).stdout


@pytest.mark.heavy  # two exported campaigns with the real model
def test_refusals_write_nothing(runs, tmp_path):
    existing = tmp_path / "exists"
    existing.mkdir()
    ran = leaderboard("--runs", runs[0].directory, "--output-dir", existing, check=False)
    assert ran.returncode == 2 and "refusing to overwrite" in ran.stderr
    ran = leaderboard("--runs", runs[0].directory, "--metric", "ndcg@11", "--output-dir", tmp_path / "m", check=False)
    assert ran.returncode == 2 and "no metric 'ndcg@11'" in ran.stderr and not (tmp_path / "m").exists()
    ran = leaderboard("--runs", runs[0].directory, "--alpha", "1.5", "--output-dir", tmp_path / "a", check=False)
    assert ran.returncode == 2 and "--alpha" in ran.stderr and not (tmp_path / "a").exists()


@pytest.mark.heavy  # two exported campaigns with the real model
def test_the_public_report_carries_the_board_after_the_answer(runs):
    public = json.loads(runs[0].public.read_text())
    assert public["leaderboard"]["methods"][0]["rank"] == 1
    html = (runs[0].directory / "public.html").read_text()
    answer = html.index('class="answer"')
    assert answer < html.index('id="table-leaderboard"') < html.index('id="fig-quality_cost"')
    assert html.index('id="fig-quality_cost"') < html.index('id="table-leaderboard-adjacent"')


@pytest.mark.heavy  # two exported campaigns with the real model
def test_demo_samples_ends_with_the_suites_leaderboard(runs, tmp_path, capsys):
    from lab import demo

    suite = one_dataset_suite(runs[0].protocol, tmp_path)
    assert demo.board_step(suite, [{"dataset": "synthetic", "run": runs[0].directory}],
                           tmp_path / "board")
    assert f"wrote {tmp_path / 'board' / 'leaderboard.html'}" in capsys.readouterr().out
    leaderboard("--suite", suite, "--runs", runs[0].directory, "--output-dir", tmp_path / "cli")
    assert (tmp_path / "cli" / "leaderboard.json").read_bytes() == (tmp_path / "board" / "leaderboard.json").read_bytes()


@pytest.mark.heavy  # two exported campaigns with the real model
def test_the_figure_is_a_well_formed_svg_naming_every_method(runs, tmp_path):
    import xml.etree.ElementTree as ElementTree

    out = tmp_path / "board"
    leaderboard("--runs", runs[0].directory, "--output-dir", out)
    document = json.loads((out / "leaderboard.json").read_text())
    root = ElementTree.fromstring((out / "leaderboard.svg").read_bytes())
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert all(row["method"] in texts for row in document["methods"])
    inline = (out / "leaderboard.html").read_text()
    assert inline.count("<svg") == 1 and (out / "leaderboard.svg").read_text().split("\n", 1)[1] in inline


@pytest.mark.heavy  # two exported campaigns with the real model
def test_a_headless_browser_renders_the_figure(runs, tmp_path):
    from tests.browser import need_browser, render

    binary = need_browser()
    out = tmp_path / "board"
    leaderboard("--runs", runs[0].directory, "--output-dir", out)
    seen = render(binary, out / "leaderboard.html", tmp_path / "profile")
    assert seen["errors"] == [] and seen["resources"] == []
    (figure,) = seen["figures"]
    assert figure["id"] == "fig-quality_cost" and figure["width"] > 200 and figure["height"] > 100


def _earlier_edition(run, tmp_path, **edition):
    """A public report exported as an earlier edition (`public_outputs` flags), written with its
    files and audited (all checks hold); returns it and a function that audits an edited copy."""
    from evaluator.export.export import output_paths, public_outputs
    from ground.files import save

    report, fixture = (json.loads(p.read_text()) for p in (run.report, run.fixture))
    paths = output_paths(tmp_path / "public.json")
    public, files = public_outputs(report, fixture, paths, **edition)
    save(paths["public"], public)
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    args = [a if a != run.public else paths["public"] for a in run.audit_args()]
    assert "audit: all checks hold" in lab_cli("audit", *args).stdout

    def audited(edited) -> int:
        paths["public"].unlink()
        save(paths["public"], edited)
        return lab_cli("audit", *args, check=False).returncode

    return public, audited


@pytest.mark.heavy  # two exported campaigns with the real model
def test_a_public_report_exported_before_boards_still_audits(runs, tmp_path):
    """The audit derives a public report without a board when the file has none; the same file
    with a board it did not derive fails."""
    public, audited = _earlier_edition(runs[0], tmp_path, leaderboard=False)
    assert "leaderboard" not in public
    public["leaderboard"] = json.loads(runs[0].public.read_text())["leaderboard"]
    assert audited(public) == 1


@pytest.mark.heavy  # two exported campaigns with the real model
def test_a_public_report_whose_answer_box_predates_the_reachable_p_still_audits(runs, tmp_path):
    """Derived again with the rule of its day (and without `about.does`, which it predates too);
    the same box with the new rule's text but no smallest p (a half-edited file) fails."""
    from evaluator.numbers.verdicts import EARLIER_RULE, RULE

    public, audited = _earlier_edition(runs[0], tmp_path, limits=False, plain=False)
    assert public["glance"]["answer"]["rule"] == EARLIER_RULE and "smallest_p" not in public["glance"]["answer"]
    assert "does" not in public["about"]
    public["glance"]["answer"]["rule"] = RULE
    assert audited(public) == 1


# ------------------------------------------------------------------------- a board of 16 methods

SIXTEEN = ["graph_entity_walk", "linearrag_v1", "graph_walk", "graph_hybrid_entity", "graph_hybrid_depth_zero",
           "weighted_rrf_v2", "hipporag_ner", "graph_hybrid_balanced", "weighted_rrf_v1", "semantic", "graph_ppr_names",
           "prf_hybrid_v1", "cosine_rocchio_v1", "graph_ppr_passages", "graph_lexical_balanced", "lexical"]


def sixteen_board() -> dict:
    """The MuSiQue sample's sixteen method names, spread so that some pairs separate, drawn in
    edition 1 with linearrag_v1 − weighted_rrf_v2 as the question."""
    shifts = {m: 0.3 * (len(SIXTEEN) - i) / 16 for i, m in enumerate(SIXTEEN)}
    costs = {m: 2.0 + (i % 5) * 0.3 for i, m in enumerate(SIXTEEN)}
    document = board([toy_stratum("musique", 67, shifts, 3, costs=costs)], {**SETTINGS, "permutations": 20000})
    return {**document, "view_edition": 1, "question": {"candidate": "linearrag_v1", "baseline": "weighted_rrf_v2"}}


def test_sixteen_methods_say_in_words_which_the_data_cannot_tell_from_the_best_and_from_the_baseline():
    document = sixteen_board()
    table = leaderboard_views.board_table(document)
    best, baseline = table.columns.index("told apart from the best? (Holm p)"), \
        table.columns.index("told apart from the baseline? (Holm p)")
    for row, method in zip(table.rows, document["methods"]):
        name = method["method"]
        for column, other in ((best, document["methods"][0]["method"]), (baseline, "weighted_rrf_v2")):
            text = row[column].text()
            if name == other:
                assert text in ("best", "baseline")
                continue
            pair = next(p for p in document["pairs"] if {p["better"], p["worse"]} == {name, other})
            assert text.startswith("yes" if pair["separated"] else "no") and f"{pair['p_value_holm']:.3f}" in text
            assert share_a_letter(method["letters"], next(r["letters"] for r in document["methods"]
                                                          if r["method"] == other)) != pair["separated"]
    marked = [row[0].text() for row in table.rows if "(" in row[0].text()]
    assert marked == ["linearrag_v1 (question)", "weighted_rrf_v2 (baseline)"]


def test_twenty_four_methods_each_have_their_own_colour_and_marker_and_no_label_overlaps():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from evaluator.views import plotting

    assert len({plotting.series_style(i)[:2] for i in range(24)}) == 24
    names = [f"method_{i:02d}" for i in range(24)]
    shifts = {m: 0.01 * (i % 6) for i, m in enumerate(names)}  # clustered: labels compete for room
    costs = {m: 2.0 + (i % 3) * 0.01 for i, m in enumerate(names)}
    document = {**board([toy_stratum("d", 40, shifts, 5, costs=costs)], SETTINGS), "view_edition": 1}
    fig = leaderboard_views.cost_figure(document)
    renderer = FigureCanvasAgg(fig).get_renderer()
    (ax,) = fig.axes
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert boxes, "some rank numbers have room beside their point"
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert all(any(entry.startswith(f"{row['rank']} {row['method']}") for entry in legend)
               for row in document["methods"])


@pytest.mark.heavy  # a headless browser, twice
@pytest.mark.parametrize("width", [800, 1400])
def test_a_sixteen_method_board_reads_in_a_browser_at(width, tmp_path):
    """Both tables within the window (no sideways scroll), no word broken, nothing under 10 px."""
    from evaluator.views import plotting
    from tests.browser import need_browser, render

    binary = need_browser()
    document = sixteen_board()
    page = tmp_path / "board.html"
    page.write_text(leaderboard_views.page("sixteen", document,
                                           plotting.svg(leaderboard_views.cost_figure(document), "quality_cost")))
    seen = render(binary, page, tmp_path / "profile", width=width)
    assert seen["errors"] == [] and seen["broken"] == [] and seen["small"] == []
    assert seen["scroll_width"] <= width and seen["scrolling"] == [], seen
    assert not [w for w in seen["wider"] if w.startswith("table-")], seen["wider"]
