"""Paired bootstrap of per-query deltas, and wins/losses/ties (DESIGN §8).

Reproducing an interval by hand, exactly:

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

A method's own mean gets an interval by the same recipe applied to its per-query values instead
of deltas (`mean_interval`, `method_means`): the error bars of the report's metric figure.

Wins/losses/ties count queries with delta > tol, delta < -tol and |delta| <= tol (tol = 1e-12),
so float noise in two equal scores is a tie, not a win.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

RNG_DESCRIPTION = (
    "numpy.random.default_rng(protocol_seed) (PCG64), fresh per contrast and metric; "
    "indices = rng.integers(0, n, size=(resamples, n)); mean of delta[indices] per row; "
    "numpy.percentile linear at 100*(1-confidence)/2 and 100*(1+confidence)/2; "
    "deltas in sorted query-id order"
)


def paired_deltas(candidate: Mapping[str, float], baseline: Mapping[str, float]) -> tuple[list[str], np.ndarray]:
    """Query ids in sorted order and candidate - baseline per query; the query sets must match."""
    if set(candidate) != set(baseline):
        missing = sorted(set(candidate) ^ set(baseline))
        raise ValueError(f"paired comparison over different queries: {missing[:5]}")
    ids = sorted(candidate)
    deltas = np.array([candidate[q] - baseline[q] for q in ids], dtype=np.float64)
    return ids, deltas


def bootstrap_interval(deltas: np.ndarray, seed: int, resamples: int, confidence: float) -> tuple[float, float]:
    n = len(deltas)
    if n == 0:
        raise ValueError("bootstrap over no queries")
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n, size=(resamples, n))
    means = deltas[indices].mean(axis=1)
    alpha = 1.0 - confidence
    low, high = np.percentile(means, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    return float(low), float(high)


def wins_losses_ties(deltas: np.ndarray, tolerance: float) -> dict[str, int]:
    return {
        "wins": int(np.sum(deltas > tolerance)),
        "losses": int(np.sum(deltas < -tolerance)),
        "ties": int(np.sum(np.abs(deltas) <= tolerance)),
    }


def contrast(
    candidate: Mapping[str, float], baseline: Mapping[str, float], *, seed: int, resamples: int,
    confidence: float, tolerance: float,
) -> dict:
    """One paired comparison on one metric: mean delta, interval, wins/losses/ties."""
    ids, deltas = paired_deltas(candidate, baseline)
    low, high = bootstrap_interval(deltas, seed, resamples, confidence)
    return {
        "queries": len(ids),
        "candidate_mean": math.fsum(candidate[q] for q in ids) / len(ids),
        "baseline_mean": math.fsum(baseline[q] for q in ids) / len(ids),
        "mean_delta": math.fsum(deltas.tolist()) / len(ids),
        "interval": [low, high],
        **wins_losses_ties(deltas, tolerance),
    }


def contrasts(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], evaluation: Mapping, seed: int) -> list[dict]:
    """The primary contrast (confirmatory) and the candidate against every other method (exploratory).

    `per_query[method][query_id][metric]`; `evaluation` is the protocol's `evaluation` block.
    """
    primary = evaluation["primary_contrast"]
    candidate = primary["candidate"]
    boot = evaluation["bootstrap"]
    if boot.get("order", "sorted_query_id") != "sorted_query_id":
        raise ValueError(f"unsupported bootstrap order {boot.get('order')!r}")
    others = [primary["baseline"]] + sorted(m for m in per_query if m not in (candidate, primary["baseline"]))
    out = []
    for baseline in others:
        label = primary.get("label", "confirmatory") if baseline == primary["baseline"] else "exploratory"
        for metric in evaluation["contrast_metrics"]:
            values = {m: {q: row[metric] for q, row in per_query[m].items()} for m in (candidate, baseline)}
            out.append({
                "candidate": candidate, "baseline": baseline, "metric": metric, "label": label,
                **contrast(values[candidate], values[baseline], seed=seed, resamples=boot["resamples"],
                           confidence=boot["confidence"], tolerance=evaluation["tie_tolerance"]),
            })
    return out


def mean_interval(values: Mapping[str, float], *, seed: int, resamples: int, confidence: float) -> dict:
    """Mean of one method's per-query values and its bootstrap percentile interval: the recipe of
    the contrasts applied to the values themselves (sorted query-id order, a fresh generator)."""
    ids = sorted(values)
    ordered = np.array([values[q] for q in ids], dtype=np.float64)
    low, high = bootstrap_interval(ordered, seed, resamples, confidence)
    return {"queries": len(ids), "mean": math.fsum(ordered.tolist()) / len(ids), "interval": [low, high]}


def method_means(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], evaluation: Mapping, seed: int) -> dict:
    """`means[method][metric]`: every per-query metric's mean with its interval, for every method."""
    boot = evaluation["bootstrap"]
    out: dict[str, dict] = {}
    for method in sorted(per_query):
        rows = per_query[method]
        names = list(next(iter(rows.values())))
        out[method] = {name: mean_interval({q: row[name] for q, row in rows.items()}, seed=seed,
                                           resamples=boot["resamples"], confidence=boot["confidence"])
                       for name in names}
    return out


def per_query_table(rows: Sequence[Mapping]) -> dict[str, dict[str, dict[str, float]]]:
    """`per_query[method][query_id] = metrics` from report rows (one row per query and method)."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    for row in rows:
        by_query = table.setdefault(row["method"], {})
        if row["query_id"] in by_query:
            raise ValueError(f"two rows for query {row['query_id']} and method {row['method']}")
        by_query[row["query_id"]] = row["metrics"]
    return table
