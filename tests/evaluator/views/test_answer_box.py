"""The answer box quotes the p its verdict rule reads, in the tables' wording."""

from __future__ import annotations

import numpy as np
import pytest

from evaluator.numbers import statistics
from evaluator.numbers.verdicts import disagreement, reachable_p, verdict
from evaluator.views.glance import answer, answer_section


def public_with(contrast: dict) -> dict:
    """A public report reduced to what the answer box reads: one confirmatory contrast."""
    base = {"label": "confirmatory", "metric": "ndcg@10", "candidate": "graph", "baseline": "lexical",
            "queries": 40, "mean_delta": 0.04, "interval": [0.01, 0.07], "detectable_effect": 0.03,
            "wins": 30, "losses": 6, "ties": 4, "p_method": "monte_carlo"}
    public = {"evaluation": {"contrast_metrics": ["ndcg@10"]},
              "statistics": {"confidence": 0.95, "randomization": {"permutations": 10000},
                             "contrasts": [{**base, **contrast}]}}
    public["glance"] = {"answer": answer(public)}
    return public


def text(public: dict) -> str:
    section = answer_section(public)
    assert section is not None, "the report has an answer section"
    return section.markdown()


def test_a_tiny_p_reads_p_below_one_thousandth():
    public = public_with({"p_value": 0.0001, "p_value_holm": 0.0001, "holm_family": "confirmatory ndcg@10: not adjusted"})
    shown = text(public)
    assert "p < 0.001" in shown and "0.0001" not in shown and "p = <" not in shown


def test_an_uncorrected_contrast_quotes_its_raw_p():
    public = public_with({"p_value": 0.043, "p_value_holm": 0.043, "holm_family": "confirmatory ndcg@10: not adjusted"})
    assert "p = 0.043" in text(public) and "Holm" not in text(public)
    assert public["glance"]["answer"]["verdict"] == "better"


def test_a_contrast_in_a_corrected_family_quotes_and_judges_by_holm_p_named_so():
    contrast = {"p_value": 0.043, "p_value_holm": 0.172, "holm_family": "confirmatory ndcg@10: 4 contrasts"}
    public = public_with(contrast)
    shown = text(public)
    assert "Holm p (confirmatory ndcg@10: 4 contrasts) = 0.172" in shown and "0.043" not in shown
    # the verdict reads the same p: 0.172 is not below 0.05, the detectable effect 0.03 is small enough
    assert public["glance"]["answer"]["verdict"] == "no reliable difference"
    assert verdict(public["statistics"]["contrasts"][0], "query", 10000) == "no reliable difference"


def constructed(deltas: list[float]) -> dict:
    """A contrast computed by the report's own code over paired deltas (baseline 0.5 everywhere)."""
    ids = [f"q{i:02d}" for i in range(len(deltas))]
    base = {q: 0.5 for q in ids}
    cand = {q: 0.5 + d for q, d in zip(ids, deltas)}
    out = statistics.contrast(cand, base, seed=7, resamples=2000, confidence=0.95, tolerance=1e-12,
                              permutations=10000)
    return {**out, "label": "confirmatory", "metric": "ndcg@10", "candidate": "graph", "baseline": "lexical",
            "holm_family": "confirmatory ndcg@10: not adjusted", "p_value_holm": out["p_value"]}


def test_eight_questions_with_four_nonzero_deltas_cannot_decide_and_say_so():
    """3 wins, 1 loss, 4 ties: exact p 0.25, and no outcome could have gone below 2/2^4 = 0.125."""
    c = constructed([0.03, 0.02, 0.02, -0.01, 0, 0, 0, 0])
    assert (c["wins"], c["losses"], c["ties"], c["p_method"]) == (3, 1, 4, "exact")
    assert c["p_value"] == 0.25 and c["detectable_effect"] < 0.05  # the earlier rule said "no reliable difference"
    assert verdict(c, "query") == "no reliable difference"
    assert reachable_p(c, "query", 10000) == 0.125
    assert verdict(c, "query", 10000) == "cohort too small to tell"
    public = {"evaluation": {"contrast_metrics": ["ndcg@10"]},
              "statistics": {"confidence": 0.95, "randomization": {"permutations": 10000}, "contrasts": [c]}}
    public["glance"] = {"answer": answer(public)}
    assert public["glance"]["answer"]["smallest_p"] == 0.125
    assert "**cohort too small to tell.**" in text(public)
    assert "the smallest p the test can reach on this cohort is 0.125" in text(public)


def test_the_reachable_bound_is_the_test_s_own_floor():
    """Every sign pattern of a four-unit cohort: none gets a p below the bound, one-signed ones reach it."""
    for bits in range(16):
        deltas = np.array([(0.1 + i / 100) * (1 if bits >> i & 1 else -1) for i in range(4)])
        p, method = statistics.sign_flip_p(deltas, 0, 10000)
        assert method == "exact" and p >= 2.0 ** (1 - 4)
    assert statistics.sign_flip_p(np.array([0.1, 0.2, 0.3, 0.4]), 0, 10000)[0] == 0.125  # and it is reached


def test_an_interval_that_excludes_zero_against_a_test_that_does_not_is_explained_in_one_line():
    """Four large losses and one tiny win: the percentile interval sits below 0, the exact test's
    p is 0.125 (Holm 0.875 in a family of seven); the verdict follows the rule and says why."""
    c = constructed([-0.3, -0.2, -0.25, -0.31, 0.01])
    c["p_value_holm"], c["holm_family"] = min(1.0, 7 * c["p_value"]), "external − every frozen method: 7 contrasts"
    assert c["interval"][1] < 0 and c["p_value"] >= 0.05
    assert verdict(c, "query", 10000) == "cohort too small to tell"
    why = disagreement(c, "query", 10000)
    assert why.startswith("The interval excludes 0 but Holm p = ") and "no direction is called" in why
    public = {"evaluation": {"contrast_metrics": ["ndcg@10"]},
              "statistics": {"confidence": 0.95, "randomization": {"permutations": 10000}, "contrasts": [c]}}
    public["glance"] = {"answer": answer(public)}
    assert why in text(public) and why.count("\n") == 0


@pytest.mark.parametrize("deltas", [[0.01 * (i % 7 + 1) for i in range(30)], [0.0] * 10 + [0.02, -0.02] * 10])
def test_agreeing_interval_and_test_need_no_line(deltas):
    assert disagreement(constructed(deltas), "query", 10000) is None


def test_the_box_on_the_synthetic_corpus_opens_with_the_warning_before_the_verdict():
    """The demo's corpus (synthetic-v1 pins exactly `lab synth`'s files) says it shows the machinery,
    as prominently as the verdict and before it, and names the real-data run and the held-out
    result; a report of real rows, or one drawn before edition 1, has no such line."""
    from evaluator.views.about import SYNTHETIC_NOTE, data_note, synthetic
    from protocols.committed import committed_file
    from protocols.schema import load_protocol

    protocol = load_protocol(committed_file("synthetic-v1.json"))
    assert synthetic(protocol) and data_note(protocol) == SYNTHETIC_NOTE
    public = {**public_with({"p_value": 0.001, "p_value_holm": 0.001, "holm_family": "confirmatory ndcg@10: not adjusted"}),
              "about": {"data": SYNTHETIC_NOTE}, "view_edition": 1}
    shown = text(public)
    box = [line for line in shown.splitlines() if line.startswith(">")]
    assert box[0] == ("> **Synthetic corpus: this shows the machinery, not a finding. Real rows: `make demo-sample`; "
                      "the result on held-out questions: README.md, \"What it answers\".**")
    assert box[-1].startswith("> **better.**")
    html = answer_section(public).html()
    assert html.index("Synthetic corpus") < html.index("better.")
    assert "Synthetic" not in text({**public, "about": {"data": "MuSiQue-Ans v1.0, licence CC BY 4.0"}})
    assert "Synthetic" not in text({**public, "view_edition": 0})


def test_the_places_the_warning_points_to_exist():
    from tests.conftest import REPO

    assert "demo-sample:" in (REPO / "Makefile").read_text(encoding="utf-8")
    assert "## What it answers" in (REPO / "README.md").read_text(encoding="utf-8")
