"""Paired bootstrap: reproducible from the documented recipe, correct on known cases."""

from __future__ import annotations

import numpy as np
import pytest

from evaluator.reporting import statistics

EVALUATION = {
    "primary_contrast": {"candidate": "g", "baseline": "h", "label": "confirmatory"},
    "bootstrap": {"resamples": 2000, "confidence": 0.95, "order": "sorted_query_id"},
    "tie_tolerance": 1e-12,
    "contrast_metrics": ["ndcg@10", "all_supports@10"],
}


def test_interval_follows_the_documented_recipe_by_hand():
    rng = np.random.default_rng(123)
    cand = {f"q{i:02d}": float(v) for i, v in enumerate(rng.random(25))}
    base = {f"q{i:02d}": float(v) for i, v in enumerate(rng.random(25))}
    result = statistics.contrast(cand, base, seed=7, resamples=2000, confidence=0.95, tolerance=1e-12)
    # the recipe of the module docstring, written out independently
    ids = sorted(cand)
    deltas = np.array([cand[q] - base[q] for q in ids])
    gen = np.random.Generator(np.random.PCG64(7))
    idx = gen.integers(0, len(ids), size=(2000, len(ids)))
    means = np.array([deltas[row].sum() / len(ids) for row in idx])
    low, high = np.sort(means)[[int(0.025 * 1999), int(np.ceil(0.975 * 1999))]]
    assert result["interval"][0] == pytest.approx(np.percentile(means, 2.5), abs=1e-12)
    assert result["interval"][1] == pytest.approx(np.percentile(means, 97.5), abs=1e-12)
    assert low <= result["interval"][0] <= result["interval"][1] <= high + 1e-12
    assert result["mean_delta"] == pytest.approx(deltas.mean())


def test_same_seed_same_interval_other_seed_other_interval():
    cand = {f"q{i}": float(i % 3) / 2 for i in range(40)}
    base = {f"q{i}": float(i % 5) / 4 for i in range(40)}
    a = statistics.contrast(cand, base, seed=1, resamples=500, confidence=0.95, tolerance=1e-12)
    b = statistics.contrast(dict(reversed(list(cand.items()))), base, seed=1, resamples=500, confidence=0.95, tolerance=1e-12)
    c = statistics.contrast(cand, base, seed=2, resamples=500, confidence=0.95, tolerance=1e-12)
    assert a == b  # insertion order of the inputs does not matter: deltas are in sorted id order
    assert a["interval"] != c["interval"]


def test_wins_losses_ties_use_the_tolerance():
    cand = {"a": 0.3, "b": 0.1 + 0.2, "c": 0.5, "d": 0.0}
    base = {"a": 0.3, "b": 0.3, "c": 0.4, "d": 0.1}
    result = statistics.contrast(cand, base, seed=0, resamples=100, confidence=0.95, tolerance=1e-12)
    # 0.1 + 0.2 - 0.3 is 5.5e-17 in floats: a tie, not a win
    assert (result["wins"], result["losses"], result["ties"]) == (1, 1, 2)


def test_identical_methods_give_a_zero_interval():
    same = {f"q{i}": i / 10 for i in range(10)}
    result = statistics.contrast(same, dict(same), seed=3, resamples=200, confidence=0.95, tolerance=1e-12)
    assert result["interval"] == [0.0, 0.0] and result["ties"] == 10


def test_different_query_sets_are_refused():
    with pytest.raises(ValueError, match="different queries"):
        statistics.contrast({"a": 1.0}, {"b": 1.0}, seed=0, resamples=10, confidence=0.95, tolerance=1e-12)


def test_contrasts_label_primary_confirmatory_and_the_rest_exploratory():
    per_query = {
        m: {f"q{i}": {"ndcg@10": (i * k) % 7 / 7, "all_supports@10": float((i + k) % 2)} for i in range(12)}
        for k, m in enumerate(["g", "h", "a", "b"], start=1)
    }
    out = statistics.contrasts(per_query, EVALUATION, seed=20260921)
    assert [(c["baseline"], c["metric"], c["label"]) for c in out] == [
        ("h", "ndcg@10", "confirmatory"), ("h", "all_supports@10", "confirmatory"),
        ("a", "ndcg@10", "exploratory"), ("a", "all_supports@10", "exploratory"),
        ("b", "ndcg@10", "exploratory"), ("b", "all_supports@10", "exploratory"),
    ]
    assert all(c["candidate"] == "g" and c["queries"] == 12 for c in out)
    assert out == statistics.contrasts(per_query, EVALUATION, seed=20260921)
