"""Stop reasons explained where shown; the paired-comparison guide after its table, short."""

from __future__ import annotations

import pytest

from evaluator.views import summary, tables
from tests.conftest import REPO

EXAMPLE = REPO / "docs" / "example" / "example.json"


@pytest.fixture(scope="module")
def example():
    """The committed example's public report (docs/example/example.json: the synthetic demo)."""
    from evaluator.export.example import decode

    return decode(EXAMPLE.read_bytes())


def test_the_work_table_says_what_a_stop_is_and_what_1_000_means(example):
    shown = tables.markdown(summary.work_table(example))
    assert "any stop" in shown
    assert "A stop is the rule that ended a query's graph walk or path search" in shown
    assert "1.000 means every query's walk or path search ended by one" in shown


def test_the_paired_comparison_guide_follows_its_table_and_is_short(example):
    shown = tables.markdown(summary.contrasts_table(example))
    table_end = shown.rindex("|")
    guide = shown.index("Delta is candidate − baseline")
    assert guide > table_end, "the reading guide comes after the table's last row"
    assert shown.index("this cohort can detect effects of about ±") > table_end
    assert "permutations" not in shown and "resamples" not in shown  # generator detail stays in `statistics`
    words = len(shown[table_end:].split())
    assert words < 140, words
    page = tables.html_table(summary.contrasts_table(example))
    assert page.index("</table>") < page.index("Delta is candidate − baseline")
