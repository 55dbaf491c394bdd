"""Paired statistics of every contrast (docs/design.md §8, docs/reports.md "Statistics"): bootstrap intervals over queries and
over clusters of dependent queries, a sign-flip randomization test, Holm's adjustment of the
exploratory family, the detectable effect, and wins/losses/ties. docs/reports.md has the recipes.

Reproducing a query-level interval by hand, exactly:

1. Per-query values of the candidate and the baseline for one metric, both in sorted query-id order
   (Python `sorted()` on the id strings); delta[i] = candidate[i] - baseline[i] as float64.
2. `rng = numpy.random.Generator(numpy.random.PCG64(protocol_seed))`, i.e.
   `numpy.random.default_rng(protocol_seed)`: a fresh generator for every (contrast, metric), so
   every contrast uses the same resampled query sets and any one can be reproduced on its own.
3. `indices = rng.integers(0, n, size=(resamples, n))` in one call (int64, upper bound
   exclusive); row b holds the query positions of resample b.
4. `means = delta[indices].mean(axis=1)`.
5. Interval = `numpy.percentile(means, [100 * a / 2, 100 * (1 - a / 2)])` with the default
   (linear) method, a = 1 - confidence; with confidence 0.95 that is the 2.5th and 97.5th
   percentiles.

The cluster interval is the same recipe over K clusters (evaluator/numbers/query_clusters.py, ordered
by smallest query id): S_c = the sum of the deltas of cluster c (numpy sum in sorted id order),
m_c = its size; `indices = rng.integers(0, K, size=(resamples, K))`;
`means = S[indices].sum(axis=1) / m[indices].sum(axis=1)`. With every cluster a singleton, S is
delta, m is all ones, and every number equals the query-level one bit for bit.

The randomization test (paired sign flip, two-sided) over units u with values v_u (query level: the
deltas; cluster level: the cluster sums S_c), in the same order as above:
- T_obs = sum(v); a pattern s in {-1, +1}^U gives T_s = sum(s * v);
- a pattern is at least as extreme when |T_s| >= |T_obs| - 1e-9 * max(1, sum|v|) (float noise
  between two equal sums is a tie, as in wins/losses/ties);
- exact when 2^U <= permutations: every pattern b in 0..2^U-1 (unit u flipped when bit u of b is
  set), p = count / 2^U (the observed pattern b = 0 is one of them);
- otherwise Monte Carlo: `flips = numpy.random.default_rng(protocol_seed).integers(0, 2,
  size=(permutations, U), dtype=numpy.int8)` in one call, s = 1 - 2 * flips, and
  p = (1 + count) / (1 + permutations) (the observed statistic counts as one permutation, so p is
  never 0 and the test stays valid; Phipson and Smyth 2010).

Holm: within one family of m p-values sorted ascending (ties by their order in the report),
adjusted p_(i) = max over j <= i of min(1, (m - j + 1) * p_(j)).

Detectable effect at power 1 - beta and two-sided level alpha: (z_(1 - alpha/2) + z_(1 - beta)) * SE
with SE = sqrt(K / (K - 1) * sum_c (S_c - m_c * mean)^2) / n, the cluster-robust standard error; for
singletons (the query level) it is exactly s / sqrt(n), s the paired SD (ddof 1). With alpha 0.05
and power 0.8 the factor is 1.959964 + 0.841621 = 2.801585. No detectable effect (None) below two
units or when SE is 0 (every delta equal).

A method's own mean gets an interval by the same recipe applied to its per-query values instead
of deltas (`mean_interval`, `method_means`): the error bars of the report's metric figure.

Wins/losses/ties count queries with delta > tol, delta < -tol and |delta| <= tol (tol = 1e-12),
so float noise in two equal scores is a tie, not a win.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist

import numpy as np

RNG_DESCRIPTION = (
    "numpy.random.default_rng(protocol_seed) (PCG64), fresh per contrast and metric; "
    "indices = rng.integers(0, n, size=(resamples, n)); mean of delta[indices] per row; "
    "numpy.percentile linear at 100*(1-confidence)/2 and 100*(1+confidence)/2; "
    "deltas in sorted query-id order"
)
CLUSTER_RNG_DESCRIPTION = (
    "numpy.random.default_rng(protocol_seed), fresh per contrast and metric; clusters ordered by smallest "
    "query id; indices = rng.integers(0, K, size=(resamples, K)); per row sum(S[indices]) / sum(m[indices]) "
    "with S the cluster sums of the deltas and m the cluster sizes; numpy.percentile linear"
)
RANDOMIZATION_DESCRIPTION = (
    "paired sign flip, two-sided, statistic sum(s * v) over units (queries in sorted id order, or clusters); "
    "as extreme when |T_s| >= |T_obs| - 1e-9 * max(1, sum|v|); exact over all 2^U patterns when "
    "2^U <= permutations (p = count / 2^U), else flips = numpy.random.default_rng(protocol_seed).integers("
    "0, 2, size=(permutations, U), dtype=numpy.int8), s = 1 - 2 * flips, p = (1 + count) / (1 + permutations)"
)
DETECTABLE_DESCRIPTION = (
    "(z_(1-alpha/2) + z_power) * SE, SE = sqrt(K/(K-1) * sum_c (S_c - m_c * mean)^2) / n "
    "(= paired SD / sqrt(n) for queries); normal quantiles from Python's statistics.NormalDist"
)
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_CLUSTERS = {"rule": "auto", "primary_interval": "query"}
ALPHA = 0.05
POWER = 0.8
RELATIVE_TOLERANCE = 1e-9  # of sum |v|: a permuted sum this close to the observed one is a tie
_CHUNK = 2048  # rows of sign patterns evaluated at once (memory only; the result does not depend on it)


def paired_deltas(candidate: Mapping[str, float], baseline: Mapping[str, float]) -> tuple[list[str], np.ndarray]:
    """Query ids in sorted order and candidate - baseline per query; the query sets must match."""
    if set(candidate) != set(baseline):
        missing = sorted(set(candidate) ^ set(baseline))
        raise ValueError(f"paired comparison over different queries: {missing[:5]}")
    ids = sorted(candidate)
    deltas = np.array([candidate[q] - baseline[q] for q in ids], dtype=np.float64)
    return ids, deltas


def drawn_once(cache: dict | None, key: tuple, draw):
    """`draw()`, kept in `cache` under `key` (a dict the caller owns, shared by the contrasts and
    means of one report). Every draw here starts a fresh generator from the protocol seed, so the
    same key always gives the same array: keeping it changes no number, only how often it is drawn."""
    if cache is not None and key in cache:
        return cache[key]
    value = draw()
    if cache is not None:
        cache[key] = value
    return value


def resample_indices(seed: int, resamples: int, n: int, cache: dict | None = None) -> np.ndarray:
    """`default_rng(seed).integers(0, n, size=(resamples, n))`: the resampled positions of every
    bootstrap over n units (a full-dev report needs the same two matrices about 190 times)."""
    def draw() -> np.ndarray:
        indices = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
        indices.setflags(write=False)  # shared between calls: nobody may edit it
        return indices
    return drawn_once(cache, ("indices", seed, resamples, n), draw)


def bootstrap_interval(deltas: np.ndarray, seed: int, resamples: int, confidence: float,
                       cache: dict | None = None) -> tuple[float, float]:
    n = len(deltas)
    if n == 0:
        raise ValueError("bootstrap over no queries")
    means = deltas[resample_indices(seed, resamples, n, cache)].mean(axis=1)
    return _percentile_interval(means, confidence)


def cluster_bootstrap_interval(sums: np.ndarray, sizes: np.ndarray, seed: int, resamples: int,
                               confidence: float, cache: dict | None = None) -> tuple[float, float]:
    """Whole clusters resampled with replacement; the statistic is the mean delta per query."""
    k = len(sums)
    if k == 0:
        raise ValueError("bootstrap over no clusters")
    indices = resample_indices(seed, resamples, k, cache)
    means = sums[indices].sum(axis=1) / sizes[indices].sum(axis=1)
    return _percentile_interval(means, confidence)


def _percentile_interval(means: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1.0 - confidence
    low, high = np.percentile(means, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    return float(low), float(high)


def cluster_totals(ids: Sequence[str], deltas: np.ndarray, clusters: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """S_c (sum of the deltas of cluster c, in sorted id order) and m_c (its size), in cluster order."""
    position = {q: i for i, q in enumerate(ids)}
    covered = [q for members in clusters for q in members]
    if sorted(covered) != list(ids):
        raise ValueError("the clusters do not partition the contrast's queries")
    sums = np.array([deltas[[position[q] for q in sorted(members)]].sum() for members in clusters], dtype=np.float64)
    sizes = np.array([len(members) for members in clusters], dtype=np.float64)
    return sums, sizes


def sign_patterns(seed: int, permutations: int, units: int) -> tuple[np.ndarray, str]:
    """The sign patterns of the randomization test (int8 rows of +1/-1) and "exact" or "monte_carlo"."""
    if units < 1:
        raise ValueError("randomization test over no units")
    if units < 63 and 2 ** units <= permutations:
        patterns = np.arange(2 ** units, dtype=np.int64)[:, None]
        flips = ((patterns >> np.arange(units, dtype=np.int64)[None, :]) & 1).astype(np.int8)
        return (1 - 2 * flips).astype(np.int8), "exact"
    flips = np.random.default_rng(seed).integers(0, 2, size=(permutations, units), dtype=np.int8)
    return (1 - 2 * flips).astype(np.int8), "monte_carlo"


def sign_flip_p(values: np.ndarray, seed: int, permutations: int,
                patterns: tuple[np.ndarray, str] | None = None) -> tuple[float, str]:
    """Two-sided p of the paired sign-flip test over unit values (deltas or cluster sums)."""
    signs, method = patterns if patterns is not None else sign_patterns(seed, permutations, len(values))
    if signs.shape[1] != len(values):
        raise ValueError(f"sign patterns over {signs.shape[1]} units for {len(values)} values")
    observed = abs(float(values.sum()))
    threshold = observed - RELATIVE_TOLERANCE * max(1.0, float(np.abs(values).sum()))
    count = 0
    for start in range(0, len(signs), _CHUNK):
        # int8 signs times float64 values: numpy casts each sign to an exact +-1.0 inside the
        # multiply, the same products as converting the chunk first, without the converted copy
        permuted = (signs[start:start + _CHUNK] * values).sum(axis=1)
        count += int(np.sum(np.abs(permuted) >= threshold))
    if method == "exact":
        return count / len(signs), method
    return (1 + count) / (1 + len(signs)), method


def standard_error(sums: np.ndarray, sizes: np.ndarray) -> float | None:
    """Cluster-robust SE of the mean delta; with singletons exactly paired SD / sqrt(n). None below 2 units."""
    k = len(sums)
    if k < 2:
        return None
    n = float(sizes.sum())
    mean = math.fsum(sums.tolist()) / n
    residual = sums - sizes * mean
    return math.sqrt(k / (k - 1) * math.fsum((residual * residual).tolist())) / n


def detectable_factor(alpha: float = ALPHA, power: float = POWER) -> float:
    normal = NormalDist()
    return normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power)


def detectable_effect(se: float | None, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """Smallest |delta| a two-sided test at level alpha detects with the given power (normal
    approximation). None below two units, and None when the deltas do not vary at all (SE 0): the
    formula would print "±0.000", which no cohort can honestly claim."""
    return None if not se else detectable_factor(alpha, power) * se


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order (ties keep their input order)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def wins_losses_ties(deltas: np.ndarray, tolerance: float) -> dict[str, int]:
    return {
        "wins": int(np.sum(deltas > tolerance)),
        "losses": int(np.sum(deltas < -tolerance)),
        "ties": int(np.sum(np.abs(deltas) <= tolerance)),
    }


def unit_statistics(sums: np.ndarray, sizes: np.ndarray, seed: int, resamples: int, confidence: float,
                    permutations: int, patterns: dict | None = None) -> dict:
    """Interval, randomization p, SE and detectable effect over resampling units (clusters)."""
    cache = patterns if patterns is not None else {}
    signs = drawn_once(cache, ("signs", seed, permutations, len(sums)),
                       lambda: sign_patterns(seed, permutations, len(sums)))
    low, high = cluster_bootstrap_interval(sums, sizes, seed, resamples, confidence, cache)
    p_value, method = sign_flip_p(sums, seed, permutations, signs)
    se = standard_error(sums, sizes)
    return {"interval": [low, high], "p_value": p_value, "p_method": method, "standard_error": se,
            "detectable_effect": detectable_effect(se)}


def contrast(
    candidate: Mapping[str, float], baseline: Mapping[str, float], *, seed: int, resamples: int,
    confidence: float, tolerance: float, permutations: int = DEFAULT_PERMUTATIONS,
    clusters: Sequence[Sequence[str]] | None = None, patterns: dict | None = None,
) -> dict:
    """One paired comparison on one metric: mean delta, query-level interval, randomization p,
    detectable effect, wins/losses/ties; with `clusters`, the same over clusters under "cluster"."""
    ids, deltas = paired_deltas(candidate, baseline)
    cache = patterns if patterns is not None else {}
    low, high = bootstrap_interval(deltas, seed, resamples, confidence, cache)
    ones = np.ones(len(ids), dtype=np.float64)
    units = unit_statistics(deltas, ones, seed, resamples, confidence, permutations, cache)
    out = {
        "queries": len(ids),
        "candidate_mean": math.fsum(candidate[q] for q in ids) / len(ids),
        "baseline_mean": math.fsum(baseline[q] for q in ids) / len(ids),
        "mean_delta": math.fsum(deltas.tolist()) / len(ids),
        "interval": [low, high],
        **wins_losses_ties(deltas, tolerance),
        "p_value": units["p_value"],
        "p_method": units["p_method"],
        "standard_error": units["standard_error"],
        "detectable_effect": units["detectable_effect"],
    }
    if clusters is not None:
        sums, sizes = cluster_totals(ids, deltas, clusters)
        out["cluster"] = {"clusters": len(clusters), "largest": max(len(m) for m in clusters),
                          **unit_statistics(sums, sizes, seed, resamples, confidence, permutations, cache)}
    return out


def settings(evaluation: Mapping) -> dict:
    """The optional statistics fields of a protocol's evaluation block, with their defaults."""
    randomization = evaluation.get("randomization") or {}
    return {
        "permutations": randomization.get("permutations", DEFAULT_PERMUTATIONS),
        "clusters": {**DEFAULT_CLUSTERS, **(evaluation.get("clusters") or {})},
    }


def contrasts(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], evaluation: Mapping, seed: int,
              clusters: Sequence[Sequence[str]] | None = None, cache: dict | None = None) -> list[dict]:
    """The primary contrast (confirmatory) and the candidate against every other method (exploratory).

    `per_query[method][query_id][metric]`; `evaluation` is the protocol's `evaluation` block. Holm
    adjusts the exploratory contrasts of each metric as one family (query-level p and, with
    clusters, cluster-level p separately); a confirmatory contrast is its own family of one.
    """
    primary = evaluation["primary_contrast"]
    candidate = primary["candidate"]
    boot = evaluation["bootstrap"]
    if boot.get("order", "sorted_query_id") != "sorted_query_id":
        raise ValueError(f"unsupported bootstrap order {boot.get('order')!r}")
    permutations = settings(evaluation)["permutations"]
    others = [primary["baseline"]] + sorted(m for m in per_query if m not in (candidate, primary["baseline"]))
    patterns = cache if cache is not None else {}  # sign patterns and resampled indices, drawn once
    out = []
    for baseline in others:
        label = primary.get("label", "confirmatory") if baseline == primary["baseline"] else "exploratory"
        for metric in evaluation["contrast_metrics"]:
            values = {m: {q: row[metric] for q, row in per_query[m].items()} for m in (candidate, baseline)}
            out.append({
                "candidate": candidate, "baseline": baseline, "metric": metric, "label": label,
                **contrast(values[candidate], values[baseline], seed=seed, resamples=boot["resamples"],
                           confidence=boot["confidence"], tolerance=evaluation["tie_tolerance"],
                           permutations=permutations, clusters=clusters, patterns=patterns),
            })
    adjust_families(out)
    return out


def mean_interval(values: Mapping[str, float], *, seed: int, resamples: int, confidence: float,
                  cache: dict | None = None) -> dict:
    """Mean of one method's per-query values and its bootstrap percentile interval: the recipe of
    the contrasts applied to the values themselves (sorted query-id order, a fresh generator)."""
    ids = sorted(values)
    ordered = np.array([values[q] for q in ids], dtype=np.float64)
    low, high = bootstrap_interval(ordered, seed, resamples, confidence, cache)
    return {"queries": len(ids), "mean": math.fsum(ordered.tolist()) / len(ids), "interval": [low, high]}


def method_means(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], evaluation: Mapping, seed: int,
                 cache: dict | None = None) -> dict:
    """`means[method][metric]`: every per-query metric's mean with its interval, for every method."""
    boot = evaluation["bootstrap"]
    cache = cache if cache is not None else {}
    out: dict[str, dict] = {}
    for method in sorted(per_query):
        rows = per_query[method]
        names = list(next(iter(rows.values())))
        out[method] = {name: mean_interval({q: row[name] for q, row in rows.items()}, seed=seed,
                                           resamples=boot["resamples"], confidence=boot["confidence"],
                                           cache=cache)
                       for name in names}
    return out


def adjust_families(contrast_list: list[dict]) -> None:
    """Add `p_value_holm` and `holm_family` (and the same under `cluster`) to every contrast, in place."""
    families: dict[tuple[str, str], list[dict]] = {}
    for c in contrast_list:
        families.setdefault((c["label"], c["metric"]), []).append(c)
    for (label, metric), members in families.items():
        exploratory = label == "exploratory"
        for where in (lambda c: c, lambda c: c.get("cluster")):
            targets = [where(c) for c in members]
            if any(t is None for t in targets):
                continue
            adjusted = holm([t["p_value"] for t in targets]) if exploratory else [t["p_value"] for t in targets]
            for t, p in zip(targets, adjusted):
                t["p_value_holm"] = p
        for c in members:
            c["holm_family"] = (f"exploratory {metric}: {len(members)} contrasts" if exploratory
                                else f"{label} {metric}: not adjusted")


def per_query_table(rows: Sequence[Mapping]) -> dict[str, dict[str, dict[str, float]]]:
    """`per_query[method][query_id] = metrics` from report rows (one row per query and method)."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    for row in rows:
        by_query = table.setdefault(row["method"], {})
        if row["query_id"] in by_query:
            raise ValueError(f"two rows for query {row['query_id']} and method {row['method']}")
        by_query[row["query_id"]] = row["metrics"]
    return table
