"""Secondary contrasts of a suite (docs/suites.md): validated like the primary, pooled with the
same recipe and seed (so a secondary equals the same contrast pooled as a primary), rendered
beside the primary, and absent from the output of a suite that declares none."""

from __future__ import annotations

import copy

import pytest

from evaluator.numbers import pooling
from evaluator.pool.pooled_page import pooled_html
from evaluator.views.contrast_text import pooled_markdown
from protocols.suite import SuiteError, pinned_protocols, validate_suite
from tests.evaluator.numbers.test_pooling import CONTRAST, SAMPLE_DIGEST, SAMPLE_PROTOCOL, suite_value, toy_datasets

SECONDARY = {"candidate": CONTRAST["candidate"], "baseline": "lexical", "metric": "ndcg@10", "label": "secondary"}


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.update(secondary_contrasts={}), "secondary_contrasts: expected a list"),
    (lambda s: s["secondary_contrasts"][0].update(label="confirmatory"),
     "secondary_contrasts[0].label: 'confirmatory' is not one of"),
    (lambda s: s["secondary_contrasts"][0].update(baseline=SECONDARY["candidate"]),
     "secondary_contrasts[0].baseline: must differ"),
    (lambda s: s["secondary_contrasts"][0].pop("metric"), "secondary_contrasts[0].metric: missing field"),
])
def test_secondary_refusals_name_the_field(edit, message):
    value = suite_value(SAMPLE_DIGEST) | {"secondary_contrasts": [dict(SECONDARY)]}
    validate_suite(copy.deepcopy(value))
    edit(value)
    with pytest.raises(SuiteError) as caught:
        validate_suite(value)
    assert str(caught.value).startswith(message), str(caught.value)


def test_pinned_protocols_hold_the_secondary_methods(tmp_path):
    (tmp_path / "musique-sample-v1.json").write_bytes(SAMPLE_PROTOCOL.read_bytes())
    value = suite_value(SAMPLE_DIGEST) | {"secondary_contrasts": [dict(SECONDARY)]}
    assert list(pinned_protocols(value, tmp_path / "suite.json")) == ["musique"]
    value["secondary_contrasts"][0]["baseline"] = "graph_walk"
    with pytest.raises(SuiteError, match="'graph_walk' is not a method"):
        pinned_protocols(value, tmp_path / "suite.json")


def test_a_secondary_is_pooled_as_the_same_contrast_would_be_as_primary():
    datasets = toy_datasets()
    suite = suite_value(SAMPLE_DIGEST)
    suite["pooling"]["unit"] = "cluster"
    plain = pooling.pool(suite, datasets, {})
    assert "secondary_contrasts" not in plain
    # the toy reports hold two methods: declare the primary's contrast again as the secondary
    again = dict(CONTRAST, label="secondary")
    both = pooling.pool(suite | {"secondary_contrasts": [again]}, datasets, {}, [datasets])
    (secondary,) = both["secondary_contrasts"]
    assert secondary["contrast"] == again
    assert secondary["pooled"] == plain["pooled"] and secondary["per_dataset"] == plain["per_dataset"]
    text = pooled_markdown(both)
    assert f"## Secondary: {CONTRAST['candidate']} − {CONTRAST['baseline']}" in text
    assert "(secondary)" in text and "Secondary:" in pooled_html(both)


def test_each_secondary_pooled_row_shows_its_own_other_unit_interval():
    """The secondary's pooled row carried the primary's other-unit interval in parentheses (and
    pooled.json had no `pooled_other_unit` for it): each secondary now computes, stores and shows its own."""
    from dataclasses import replace

    from evaluator.views.contrast_text import interval_text, pooled_rows, secondary_views

    datasets = toy_datasets()
    # a secondary that is a different contrast: baseline − candidate, so every delta changes sign
    swapped = [replace(d, candidate=d.baseline, baseline=d.candidate) for d in datasets]
    reverse = {"candidate": CONTRAST["baseline"], "baseline": CONTRAST["candidate"], "metric": "ndcg@10",
               "label": "secondary"}
    for unit in ("query", "cluster"):
        suite = suite_value(SAMPLE_DIGEST)
        suite["pooling"]["unit"] = unit
        other = "cluster" if unit == "query" else "query"
        result = pooling.pool(suite | {"secondary_contrasts": [reverse]}, datasets, {}, [swapped])
        (secondary,) = result["secondary_contrasts"]
        expected = {"unit": other, **pooling.pooled_contrast(swapped, {**suite["pooling"], "unit": other}, suite["seed"])}
        assert secondary["pooled_other_unit"] == expected
        assert secondary["pooled_other_unit"]["interval"] != result["pooled_other_unit"]["interval"]
        column = -3 if other == "cluster" else -4  # the "cluster interval" / "interval" column of the pooled row
        (view,) = secondary_views(result)
        assert pooled_rows(view)[-1][column] == f"({interval_text(expected['interval'])})"
        assert pooled_rows(result)[-1][column] == f"({interval_text(result['pooled_other_unit']['interval'])})"
        secondary_table = pooled_markdown(result).split("## Secondary:")[1]
        assert f"({interval_text(expected['interval'])})" in secondary_table
        assert f"({interval_text(result['pooled_other_unit']['interval'])})" not in secondary_table
        assert f"({interval_text(expected['interval'])})" in pooled_html(result).split("Secondary:")[1]


def test_the_pooled_page_draws_each_contrast_and_keeps_headings_out_of_tables(tmp_path):
    """pooled.html: a forest figure per contrast (each dataset's interval and the pool's, every
    number of the table drawn), each heading an h2 outside the tables; in a real browser it reads
    cleanly at 1,400 px (no broken word, no label under 10 px, nothing wider than the page)."""
    import re

    from tests.browser import need_browser, render

    datasets = toy_datasets()
    suite = suite_value(SAMPLE_DIGEST)
    both = pooling.pool(suite | {"secondary_contrasts": [dict(CONTRAST, label="secondary")]}, datasets, {}, [datasets])
    page = pooled_html(both)
    assert re.findall(r'<figure id="fig-([\w-]+)">\s*<svg', page) == ["primary", "secondary-0"]
    assert "colspan" not in page and page.count("<h2>") == 3
    for table in re.findall(r"<table>.*?</table>", page, flags=re.S):
        assert "<h2>" not in table and "Secondary" not in table
    path = tmp_path / "pooled.html"
    path.write_text(page)
    seen = render(need_browser(), path, tmp_path / "profile", width=1400, height=900)
    assert seen["errors"] == [] and seen["resources"] == []
    assert [f["id"] for f in seen["figures"]] == ["fig-primary", "fig-secondary-0"]
    assert seen["broken"] == [] and seen["small"] == [] and seen["wider"] == []
