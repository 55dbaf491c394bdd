"""View edition 2 (evaluator/views/edition.py): the answer asks its question and names the board's
Holm p of the same pair; a p rounding onto alpha shows its deciding digits; a board says why a lower
method can be told apart from the baseline when a higher one is not; quoted commands read as code in
the HTML; the category table and heatmap put methods in rows. Documents of earlier editions render
as they did (the committed example, edition 0, is checked byte for byte in test_example.py)."""

from __future__ import annotations

import copy

import pytest

from evaluator.views import figures, glance, leaderboard_views, plotting, summary, tables
from evaluator.views.tables import p_format
from tests.conftest import REPO

EXAMPLE = REPO / "docs" / "example" / "example.json"
QUESTION = {"candidate": "graph_hybrid_balanced", "baseline": "weighted_rrf_v2"}


@pytest.fixture()
def second():
    """The committed example's public report (the synthetic demo) drawn in edition 2."""
    from evaluator.export.example import decode

    document = decode(EXAMPLE.read_bytes())
    document["view_edition"] = 2
    document["leaderboard"] = {**document["leaderboard"], "view_edition": 2, "question": QUESTION}
    return document


@pytest.mark.parametrize("p, shown", [(0.05039496, "0.0504"), (0.0496, "0.0496"), (0.05, "0.050"), (0.003, "0.003"),
                                      (0.0500001, "0.0500001"), (1.0, "1.000")])
def test_a_p_is_shown_on_the_side_of_alpha_it_lies(p, shown):
    assert format(p, p_format(p, 0.05)) == shown


def test_the_answer_asks_its_question_and_names_the_boards_holm_p_of_the_same_pair(second):
    box = glance.answer_section(second)
    text = box.markdown()
    assert "> **Question: does graph_hybrid_balanced beat weighted_rrf_v2 on nDCG@10?**" in text
    pair = next(j for j, p in enumerate(second["leaderboard"]["pairs"])
                if {p["better"], p["worse"]} == {"graph_hybrid_balanced", "weighted_rrf_v2"})
    holm = second["leaderboard"]["pairs"][pair]["p_value_holm"]
    assert (f"On the leaderboard below, where every pair of its {second['leaderboard']['pairs_tested']} is tested "
            f"and Holm-adjusted together, this pair's p is {holm:.3f} (separated).") in text
    assert f'data-path="/leaderboard/pairs/{pair}/p_value_holm"' in box.html()  # bound like every number
    earlier = copy.deepcopy(second)
    earlier["view_edition"] = 1
    assert "Question:" not in glance.answer_section(earlier).markdown()
    assert "On the leaderboard below" not in glance.answer_section(earlier).markdown()


def test_a_holm_p_that_rounds_onto_alpha_shows_its_deciding_digits(second):
    board = tables.markdown(leaderboard_views.board_table(second, ("leaderboard",)))
    (semantic,) = [line for line in board.splitlines() if line.startswith("| semantic |")]
    assert "| no (0.0504) |" in semantic
    second["leaderboard"]["view_edition"] = 1
    board = tables.markdown(leaderboard_views.board_table(second, ("leaderboard",)))
    assert "| no (0.050) |" in board


def test_a_lower_method_told_apart_from_the_baseline_while_a_higher_one_is_not_is_explained(second):
    board = second["leaderboard"]
    assert leaderboard_views.baseline_order_note(board) == ""  # here the separated ones are the top three
    for pair in board["pairs"]:
        if {pair["better"], pair["worse"]} == {"graph_hybrid_balanced", "weighted_rrf_v2"}:
            pair["separated"] = False
    note = leaderboard_views.board_table(second, ("leaderboard",)).note
    assert ("graph_hybrid_entity is told apart from the baseline while graph_hybrid_balanced, ranked above it, is "
            "not: a pair is separated by how consistently the two differ query by query") in note


def test_quoted_commands_read_as_code_in_the_html():
    box = glance.Prose("answer", "Answer", ("x",), strong="better", note="Run `make demo-sample` then.",
                       warning="Real rows: `make demo-sample`.", question="does a beat b on R@5?", code=True)
    page = box.html()
    assert page.count("<code>make demo-sample</code>") == 2 and "`" not in page
    assert "<strong>Question: does a beat b on R@5?</strong>" in page
    assert "`make demo-sample`" in glance.Prose("answer", "Answer", ("x",), note="`make demo-sample`").html()


SIXTEEN = [f"method_{name}" for name in ("entity_walk", "linearrag", "walk", "hybrid_entity", "depth_zero", "rrf_v2",
                                         "hipporag_ner", "hybrid_balanced", "rrf_v1", "semantic", "ppr_names", "prf",
                                         "rocchio", "ppr_passages", "lexical_balanced", "lexical")]
CATEGORIES = {"2hop": 40, "3hop1": 19, "3hop2": 11, "4hop1": 11, "4hop2": 11, "4hop3": 8}


def sixteen_categories() -> dict:
    cells = {c: {m: {"queries": n, "recall@5": (i * 7 + j) % 10 / 10, "ndcg@10": (i * 3 + j) % 10 / 10}
                 for i, m in enumerate(SIXTEEN)} for j, (c, n) in enumerate(CATEGORIES.items())}
    return {"view_edition": 2, "plan": {"methods": SIXTEEN}, "evaluation": {"contrast_metrics": ["recall@5", "ndcg@10"]},
            "aggregates": {"categories": cells}}


def test_the_category_table_puts_methods_in_rows():
    table = summary.categories_table(sixteen_categories())
    assert table.columns == ["method", *(f"{c} ({n})" for c, n in CATEGORIES.items())]
    assert [row[0].text() for row in table.rows] == SIXTEEN


@pytest.mark.heavy  # a headless browser
def test_sixteen_methods_by_category_fit_1400_px_and_read(tmp_path):
    """The table within the window and the heatmap drawn at its own size (nothing scaled under 10 px)."""
    from evaluator.views import html
    from tests.browser import need_browser, render

    binary = need_browser()
    document = sixteen_categories()
    svg = plotting.svg(figures.category_heatmap(document), "category_heatmap")
    page = tmp_path / "categories.html"
    page.write_text(html.document("categories", [tables.html_table(summary.categories_table(document)),
                                                 html.figure("category_heatmap", svg,
                                                             figures.caption("category_heatmap", document))]))
    seen = render(binary, page, tmp_path / "profile", width=1400)
    assert seen["errors"] == [] and seen["broken"] == [] and seen["small"] == [], seen["small"]
    assert seen["scroll_width"] <= 1400 and seen["wider"] == [] and seen["scrolling"] == [], seen
