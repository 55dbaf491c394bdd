"""The answer box quotes the p its verdict rule reads, in the tables' wording."""

from __future__ import annotations

from evaluator.rendering.glance import answer, answer_section, verdict


def public_with(contrast: dict) -> dict:
    """A public report reduced to what the answer box reads: one confirmatory contrast."""
    base = {"label": "confirmatory", "metric": "ndcg@10", "candidate": "graph", "baseline": "lexical",
            "queries": 40, "mean_delta": 0.04, "interval": [0.01, 0.07], "detectable_effect": 0.03}
    public = {"evaluation": {"contrast_metrics": ["ndcg@10"]},
              "statistics": {"confidence": 0.95, "contrasts": [{**base, **contrast}]}}
    public["glance"] = {"answer": answer(public)}
    return public


def text(public: dict) -> str:
    return answer_section(public).markdown()


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
    assert verdict(public["statistics"]["contrasts"][0], "query") == "no reliable difference"
