"""Paired bootstrap: reproducible from the documented recipe, correct on known cases."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from evaluator.numbers import statistics

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


# ---------------------------------------------------------------- randomization test


def brute_force_p(values: list[float]) -> Fraction:
    """Two-sided sign-flip p over all 2^n patterns, in exact rational arithmetic."""
    fractions = [Fraction(v) for v in values]  # every float is a dyadic rational: scale to integers
    scale = max(f.denominator for f in fractions)
    exact = [int(f * scale) for f in fractions]
    observed = abs(sum(exact))
    patterns = 0
    extreme = 0
    for signs in itertools.product((1, -1), repeat=len(exact)):
        patterns += 1
        extreme += abs(sum(s * v for s, v in zip(signs, exact))) >= observed
    return Fraction(extreme, patterns)


@pytest.mark.parametrize("n", [1, 2, 5, 9, 13])
def test_sign_flip_p_is_the_exact_enumeration_when_it_fits(n):
    rng = np.random.default_rng(n)
    # dyadic values (exact in floats) with repeats and zeros, so ties are real ties; plus a random arm
    dyadic = rng.integers(-8, 9, size=n) / 16.0
    noisy = rng.normal(0.02, 0.2, size=n)
    for values in (dyadic, noisy):
        p, method = statistics.sign_flip_p(values, seed=4, permutations=10_000)
        assert method == "exact"  # 2^13 = 8,192 <= 10,000
        assert p == float(brute_force_p(values.tolist()))


def test_sign_flip_p_of_all_zero_deltas_is_one():
    assert statistics.sign_flip_p(np.zeros(20), seed=1, permutations=10_000) == (1.0, "monte_carlo")
    assert statistics.sign_flip_p(np.zeros(4), seed=1, permutations=10_000) == (1.0, "exact")


def test_sign_flip_monte_carlo_follows_the_recipe_and_agrees_with_enumeration():
    rng = np.random.default_rng(99)
    values = rng.integers(-6, 9, size=16) / 8.0  # 2^16 = 65,536 patterns > 10,000: Monte Carlo
    p, method = statistics.sign_flip_p(values, seed=20260921, permutations=10_000)
    assert method == "monte_carlo"
    # the documented recipe, written out independently
    flips = np.random.default_rng(20260921).integers(0, 2, size=(10_000, 16), dtype=np.int8)
    permuted = ((1 - 2 * flips.astype(np.int64)) * values).sum(axis=1)
    tolerance = 1e-9 * max(1.0, np.abs(values).sum())
    count = int(np.sum(np.abs(permuted) >= abs(values.sum()) - tolerance))
    assert p == (1 + count) / (1 + 10_000)
    exact = float(brute_force_p(values.tolist()))
    assert abs(p - exact) <= 4.5 * (exact * (1 - exact) / 10_000) ** 0.5 + 2 / 10_000


def test_sign_flip_p_detects_a_clear_effect():
    deltas = np.full(40, 0.05) + np.random.default_rng(3).normal(0, 0.01, size=40)
    p, _ = statistics.sign_flip_p(deltas, seed=0, permutations=10_000)
    assert p == 1 / 10_001  # no flipped pattern reaches the observed sum: the smallest p possible


# ---------------------------------------------------------------- Holm


def test_holm_against_a_hand_example():
    # sorted: 0.005 x4 = 0.02; 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04 -> max(0.06, 0.04) = 0.06
    assert statistics.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert statistics.holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert statistics.holm([0.2]) == [0.2]
    assert statistics.holm([]) == []


def test_contrasts_adjust_each_exploratory_metric_family_and_leave_the_confirmatory_alone():
    per_query = {
        m: {f"q{i:02d}": {"ndcg@10": ((i * k) % 7) / 7, "all_supports@10": float((i + k) % 2)} for i in range(30)}
        for k, m in enumerate(["g", "h", "a", "b", "c"], start=1)
    }
    out = statistics.contrasts(per_query, EVALUATION, seed=11)
    for c in out:
        assert 0 < c["p_value"] <= c["p_value_holm"] <= 1
    confirmatory = [c for c in out if c["label"] == "confirmatory"]
    assert all(c["p_value_holm"] == c["p_value"] and "not adjusted" in c["holm_family"] for c in confirmatory)
    for metric in EVALUATION["contrast_metrics"]:
        family = [c for c in out if c["label"] == "exploratory" and c["metric"] == metric]
        assert [c["baseline"] for c in family] == ["a", "b", "c"]
        assert [c["p_value_holm"] for c in family] == statistics.holm([c["p_value"] for c in family])
        assert all(c["holm_family"] == f"exploratory {metric}: 3 contrasts" for c in family)


# ---------------------------------------------------------------- clusters and detectable effect


def test_all_singleton_clusters_give_exactly_the_query_level_numbers():
    rng = np.random.default_rng(8)
    for n in (9, 67):  # exact enumeration and Monte Carlo
        cand = {f"q{i:03d}": float(v) for i, v in enumerate(rng.random(n))}
        base = {f"q{i:03d}": float(v) for i, v in enumerate(rng.random(n))}
        singletons = [[q] for q in sorted(cand)]
        result = statistics.contrast(cand, base, seed=17, resamples=2000, confidence=0.95, tolerance=1e-12,
                                     clusters=singletons)
        cluster = result["cluster"]
        assert (cluster["clusters"], cluster["largest"]) == (n, 1)
        for key in ("interval", "p_value", "p_method", "standard_error", "detectable_effect"):
            assert cluster[key] == result[key], key  # bit for bit, not approximately


def test_cluster_bootstrap_resamples_whole_clusters_by_the_recipe():
    cand = {f"q{i}": v for i, v in enumerate([0.9, 0.8, 0.1, 0.4, 0.7, 0.3, 0.6])}
    base = {f"q{i}": v for i, v in enumerate([0.5, 0.5, 0.5, 0.2, 0.1, 0.6, 0.2])}
    clusters = [["q0", "q1", "q4"], ["q2"], ["q3", "q5"], ["q6"]]
    result = statistics.contrast(cand, base, seed=5, resamples=1000, confidence=0.9, tolerance=1e-12,
                                 clusters=clusters)
    deltas = {q: cand[q] - base[q] for q in cand}
    sums = np.array([sum(deltas[q] for q in members) for members in clusters])
    sizes = np.array([len(m) for m in clusters], dtype=float)
    idx = np.random.default_rng(5).integers(0, 4, size=(1000, 4))
    means = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    assert result["cluster"]["interval"] == pytest.approx(list(np.percentile(means, [5, 95])), abs=1e-12)
    assert result["cluster"]["p_method"] == "exact"  # 2^4 patterns of whole clusters
    assert result["cluster"]["p_value"] == float(brute_force_p(sums.tolist()))
    with pytest.raises(ValueError, match="partition"):
        statistics.contrast(cand, base, seed=5, resamples=10, confidence=0.9, tolerance=1e-12, clusters=[["q0"]])


def test_detectable_effect_is_the_normal_power_formula():
    assert statistics.detectable_factor() == pytest.approx(1.959964 + 0.841621, abs=1e-6)
    deltas = np.random.default_rng(2).normal(0.0, 0.1, size=50)
    se = statistics.standard_error(deltas, np.ones(50))
    assert se == pytest.approx(deltas.std(ddof=1) / np.sqrt(50), rel=1e-12)
    assert statistics.detectable_effect(se) == pytest.approx(2.801585 * deltas.std(ddof=1) / np.sqrt(50), rel=1e-6)
    # a cluster of perfectly correlated queries counts once: doubling every query leaves SE of the
    # cluster mean where the 50 queries had it, while the query level would shrink it by sqrt(2)
    doubled_sums, sizes = 2 * deltas, np.full(50, 2.0)
    assert statistics.standard_error(doubled_sums, sizes) == pytest.approx(se, rel=1e-12)
    assert statistics.standard_error(deltas[:1], np.ones(1)) is None
    # every delta equal: SE 0, and no cohort can claim to detect "±0.000"
    assert statistics.standard_error(np.full(9, 0.25), np.ones(9)) == 0.0
    assert statistics.detectable_effect(0.0) is None and statistics.detectable_effect(None) is None


def test_shared_draws_give_the_fresh_generator_numbers_bit_for_bit():
    """The report's cache of resampled indices only saves drawing them again: every interval, p and
    mean equals the one a fresh generator per call gives, and the shared matrix cannot be edited."""
    rng = np.random.default_rng(11)
    cand = {f"q{i:03d}": float(v) for i, v in enumerate(rng.random(60))}
    base = {f"q{i:03d}": float(v) for i, v in enumerate(rng.random(60))}
    clusters = [[f"q{i:03d}", f"q{i + 1:03d}"] for i in range(0, 60, 2)]
    drawn: dict = {}
    for _ in range(2):  # the second call reads every matrix from the cache
        shared = statistics.contrast(cand, base, seed=5, resamples=300, confidence=0.95, tolerance=1e-12,
                                     permutations=500, clusters=clusters, patterns=drawn)
        fresh = statistics.contrast(cand, base, seed=5, resamples=300, confidence=0.95, tolerance=1e-12,
                                    permutations=500, clusters=clusters)
        assert shared == fresh
    assert statistics.mean_interval(cand, seed=5, resamples=300, confidence=0.95, cache=drawn) == \
        statistics.mean_interval(cand, seed=5, resamples=300, confidence=0.95)
    matrix = drawn[("indices", 5, 300, 60)]
    assert np.array_equal(matrix, np.random.default_rng(5).integers(0, 60, size=(300, 60)))
    with pytest.raises(ValueError):
        matrix[0, 0] = 1
