"""The leaderboard: every method ranked, grouped by what the data can separate, priced by its latency.

Reproducing a board by hand (docs/leaderboard.md):

1. Strata: one per dataset (a single report, or the reports of one protocol merged, is one
   stratum; a suite gives one per dataset, in the suite's order), with weight w_d ("equal": 1/D;
   "query_count": n_d / sum n). Per stratum the units are queries (sorted id order) or the
   protocol's clusters (ordered by smallest query id): S = the unit's sum of a per-query vector,
   m = its size.
2. A method's mean = sum_d w_d * mean_d (math.fsum within a stratum); its interval: one fresh
   `numpy.random.default_rng(seed)` per method, per stratum in order `indices =
   rng.integers(0, K_d, size=(resamples, K_d))`, resampled = sum_d w_d * S[indices].sum(1) /
   m[indices].sum(1), numpy.percentile linear. With one stratum of queries this is the report's
   own `statistics.mean_interval`.
3. Ranking: mean descending, then method name.
4. Every pair (a above b): per-query deltas a - b, unit sums S; the sign-flip statistic over the
   units of all strata concatenated, values v = S (one stratum) or v = w_d * S / n_d (several: the
   pooled contrast's values, evaluator/numbers/pooling.py); the patterns of
   statistics.sign_patterns(seed, permutations, U) shared by every pair; p as
   statistics.sign_flip_p. With one stratum the p of a declared contrast is the report's.
5. Holm across every pair of the board (one family); a pair is separated when its adjusted p is at
   most alpha. Letters: evaluator/numbers/letters.py over the separated pairs.
6. Adjacent pairs (rank i and i + 1): the delta's interval by the recipe of 2 on the deltas, the
   standard error sqrt(sum_d w_d^2 SE_d^2) (statistics.standard_error), the detectable effect
   (z_(1 - alpha/2) + z_power) * SE and the queries that would separate the observed delta at that
   power: ceil(N * (detectable / |delta|)^2), N the board's queries (none when delta is 0).
7. The smallest p a pair can reach: 2 / 2^(units with a non-zero value) for the exact test (1 when
   all are zero), 1 / (1 + permutations) for Monte Carlo. No Holm-adjusted p of the board can fall
   below the number of pairs times the smallest of these, nor below the pair's own; a pair whose
   larger bound exceeds alpha cannot be separated by this cohort whatever its data ("decidable"
   false), and a board where no pair is decidable says the cohort is too small to tell, instead
   of reading "no difference".
8. Cost: the p50 of the HTTP time and of the server's retrieval time over every timed job of the
   method (all reports, all repetitions), metrics.percentile; the Pareto front on (HTTP p50 lower,
   mean higher): a method is on it when no other is at least as good on both and better on one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluator.numbers import metrics, statistics
from evaluator.numbers.letters import letters
from evaluator.numbers.pooling import size_weights
from evaluator.numbers.verdicts import smallest_p

LEADERBOARD_FORMAT = "graph_evaluation_leaderboard_v1"
ALPHA = statistics.ALPHA
POWER = statistics.POWER
_CHUNK = 1024  # sign patterns multiplied at once (memory only; the counts do not depend on it)


@dataclass(frozen=True)
class Stratum:
    """One dataset's side of a board: every method's per-query value of the metric."""

    name: str
    values: dict[str, dict[str, float]]  # method -> query id -> value
    categories: dict[str, str]  # query id -> its category (hops, question type)
    clusters: list[list[str]]  # the protocol's clusters (singletons under the query unit)
    weight: float = 1.0
    costs: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # method -> {"http_ms", "retrieval_ms"}

    @property
    def ids(self) -> list[str]:
        return sorted(next(iter(self.values.values())))


@dataclass(frozen=True)
class _Units:
    """A stratum's units: cluster positions (in sorted id order) and sizes."""

    members: list[list[int]]
    sizes: np.ndarray

    def sums(self, vectors: np.ndarray) -> np.ndarray:
        """Unit sums of each column of `vectors` (queries x columns), added in id order as
        statistics.cluster_totals adds them, so a sum is the same float whichever code made it."""
        if len(self.members) == len(vectors) and all(m == [i] for i, m in enumerate(self.members)):
            return vectors.copy()  # the query unit: every query its own unit
        out = np.empty((len(self.members), vectors.shape[1]), dtype=np.float64)
        for u, positions in enumerate(self.members):
            if len(positions) == 1:
                out[u] = vectors[positions[0]]
            elif len(positions) < 8:  # numpy sums short vectors left to right
                total = vectors[positions[0]].copy()
                for p in positions[1:]:
                    total = total + vectors[p]
                out[u] = total
            else:
                out[u] = [vectors[positions, c].sum() for c in range(vectors.shape[1])]
        return out


def _units(stratum: Stratum, unit: str) -> _Units:
    ids = stratum.ids
    if unit == "query":
        return _Units([[i] for i in range(len(ids))], np.ones(len(ids), dtype=np.float64))
    if unit != "cluster":
        raise ValueError(f"unknown unit {unit!r}")
    position = {q: i for i, q in enumerate(ids)}
    members = [[position[q] for q in sorted(cluster)] for cluster in stratum.clusters]
    if sorted(p for m in members for p in m) != list(range(len(ids))):
        raise ValueError(f"stratum {stratum.name}: the clusters do not partition its queries")
    return _Units(members, np.array([len(m) for m in members], dtype=np.float64))


def _matrix(stratum: Stratum, methods: Sequence[str]) -> np.ndarray:
    ids = stratum.ids
    return np.array([[stratum.values[m][q] for m in methods] for q in ids], dtype=np.float64).reshape(len(ids), len(methods))


def _resampled(strata_units: Sequence[tuple[np.ndarray, _Units]], weights: Sequence[float], seed: int,
               resamples: int, confidence: float) -> list[float]:
    """The stratified bootstrap interval of sum_d w_d * mean_d over (unit sums, units) per stratum."""
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples, dtype=np.float64)
    for weight, (sums, units) in zip(weights, strata_units):
        indices = rng.integers(0, len(sums), size=(resamples, len(sums)))
        means = sums[indices].sum(axis=1) / units.sizes[indices].sum(axis=1)
        total = means if len(strata_units) == 1 else total + weight * means
    alpha = 1.0 - confidence
    low, high = np.percentile(total, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    return [float(low), float(high)]


def _mean(strata: Sequence[Stratum], weights: Sequence[float], vectors: Sequence[np.ndarray]) -> float:
    means = [math.fsum(v.tolist()) / len(v) for v in vectors]
    return means[0] if len(strata) == 1 else math.fsum(w * m for w, m in zip(weights, means))


def _sign_flip(values: np.ndarray, signs: np.ndarray, method: str) -> list[float]:
    """statistics.sign_flip_p for every column of `values` (units x pairs) at once, same patterns."""
    observed = np.abs(values.sum(axis=0))
    threshold = observed - statistics.RELATIVE_TOLERANCE * np.maximum(1.0, np.abs(values).sum(axis=0))
    counts = np.zeros(values.shape[1], dtype=np.int64)
    for start in range(0, len(signs), _CHUNK):
        permuted = signs[start:start + _CHUNK].astype(np.float64) @ values
        counts += (np.abs(permuted) >= threshold).sum(axis=0)
    if method == "exact":
        return [int(c) / len(signs) for c in counts]
    return [(1 + int(c)) / (1 + len(signs)) for c in counts]


def _smallest_p(values: np.ndarray, method: str, permutations: int) -> float:
    return smallest_p(method, int(np.count_nonzero(values)), permutations)


def _pareto(rows: Sequence[Mapping]) -> set[str]:
    front = set()
    for row in rows:
        cost, mean = row["cost"]["http_ms_p50"], row["mean"]
        if cost is None:
            continue
        dominated = any(other is not row and other["cost"]["http_ms_p50"] is not None
                        and other["mean"] >= mean and other["cost"]["http_ms_p50"] <= cost
                        and (other["mean"] > mean or other["cost"]["http_ms_p50"] < cost) for other in rows)
        if not dominated:
            front.add(row["method"])
    return front


def _cost(strata: Sequence[Stratum], method: str) -> dict:
    out = {}
    for key in ("http_ms", "retrieval_ms"):
        values = [v for s in strata for v in s.costs.get(method, {}).get(key, [])]
        out[f"{key}_p50"] = metrics.percentile(values, 0.5) if values else None
    out["jobs"] = sum(len(s.costs.get(method, {}).get("http_ms", [])) for s in strata)
    return out


def _category_means(strata: Sequence[Stratum], method: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in strata:
        groups: dict[str, list[float]] = {}
        for q in s.ids:
            if s.categories.get(q):
                groups.setdefault(s.categories[q], []).append(s.values[method][q])
        for name, values in sorted(groups.items()):
            out[name if len(strata) == 1 else f"{s.name}: {name}"] = math.fsum(values) / len(values)
    return out


def board(strata: Sequence[Stratum], settings: Mapping) -> dict:
    """The whole board from its strata and settings (metric, unit, weights, alpha, power, seed,
    resamples, confidence, permutations): rows best first, every pair, the adjacent pairs."""
    if not strata:
        raise ValueError("a leaderboard needs at least one stratum")
    methods = sorted(set.intersection(*(set(s.values) for s in strata)))
    if len(methods) < 2:
        raise ValueError(f"a leaderboard needs two methods measured on every dataset, found {methods}")
    left_out = sorted(set().union(*(set(s.values) for s in strata)) - set(methods))
    weights = size_weights([len(s.ids) for s in strata], settings["weights"])
    seed, resamples, confidence = settings["seed"], settings["resamples"], settings["confidence"]
    units = [_units(s, settings["unit"]) for s in strata]
    matrices = [_matrix(s, methods) for s in strata]
    means = {m: _mean(strata, weights, [x[:, i] for x in matrices]) for i, m in enumerate(methods)}
    ranked = sorted(methods, key=lambda m: (-means[m], m))
    order = [methods.index(m) for m in ranked]
    matrices = [x[:, order] for x in matrices]
    rows: list[dict[str, Any]] = []
    for i, method in enumerate(ranked):
        parts = [(u.sums(x[:, [i]])[:, 0], u) for x, u in zip(matrices, units)]
        rows.append({"rank": i + 1, "method": method, "mean": means[method],
                     "interval": _resampled(parts, weights, seed, resamples, confidence),
                     "per_dataset": ({s.name: math.fsum(x[:, i].tolist()) / len(x) for s, x in zip(strata, matrices)}
                                     if len(strata) > 1 else {}),
                     "per_category": _category_means(strata, method), "cost": _cost(strata, method)})
    pairs, pair_values = _pairs(ranked, matrices, units, weights, len(strata))
    total_units = pair_values.shape[0]
    signs, p_method = statistics.sign_patterns(seed, settings["permutations"], total_units)
    raw = _sign_flip(pair_values, signs, p_method)
    adjusted = statistics.holm(raw)
    alpha = settings["alpha"]
    smallest = [_smallest_p(column, p_method, settings["permutations"]) for column in pair_values.T]
    floor = min(1.0, len(pairs) * min(smallest))  # no Holm-adjusted p of this board can go below it
    for pair, p, holm_p, least in zip(pairs, raw, adjusted, smallest):
        pair.update(p_value=p, p_value_holm=holm_p, separated=holm_p <= alpha, smallest_p=least,
                    decidable=max(floor, least) <= alpha)
    separated = [(p["better"], p["worse"]) for p in pairs if p["separated"]]
    groups = letters(ranked, separated)
    front = _pareto(rows)
    for row in rows:
        row["letters"] = groups[row["method"]]
        row["pareto"] = row["method"] in front
    queries = sum(len(s.ids) for s in strata)
    return {
        "format": LEADERBOARD_FORMAT,
        "settings": dict(settings),
        "strata": [{"name": s.name, "queries": len(s.ids), "units": len(u.members), "weight": w}
                   for s, u, w in zip(strata, units, weights)],
        "queries": queries,
        "units": total_units,
        "p_method": p_method,
        "pairs_tested": len(pairs),
        "decidable": any(p["decidable"] for p in pairs),
        "left_out": left_out,
        "methods": rows,
        "pairs": pairs,
        "adjacent": [_adjacent(ranked, i, matrices, units, weights, settings, queries, pairs)
                     for i in range(len(ranked) - 1)],
    }


def _pairs(ranked: Sequence[str], matrices: Sequence[np.ndarray], units: Sequence[_Units],
           weights: Sequence[float], strata_count: int) -> tuple[list[dict], np.ndarray]:
    """Every pair (better above worse) and its unit values (units of all strata x pairs)."""
    index = [(i, j) for i in range(len(ranked)) for j in range(i + 1, len(ranked))]
    pairs: list[dict[str, Any]] = [{"better": ranked[i], "worse": ranked[j]} for i, j in index]
    first = np.array([i for i, _ in index], dtype=np.int64)
    second = np.array([j for _, j in index], dtype=np.int64)
    blocks = []
    for x, u, w in zip(matrices, units, weights):
        sums = u.sums(x[:, first] - x[:, second])
        blocks.append(sums if strata_count == 1 else w * sums / len(x))
    for pair, (i, j) in zip(pairs, index):
        means = [math.fsum((x[:, i] - x[:, j]).tolist()) / len(x) for x in matrices]
        pair["mean_delta"] = means[0] if strata_count == 1 else math.fsum(w * m for w, m in zip(weights, means))
    return pairs, np.concatenate(blocks, axis=0)


def _adjacent(ranked: Sequence[str], i: int, matrices: Sequence[np.ndarray], units: Sequence[_Units],
              weights: Sequence[float], settings: Mapping, queries: int, pairs: Sequence[Mapping]) -> dict:
    pair = next(p for p in pairs if p["better"] == ranked[i] and p["worse"] == ranked[i + 1])
    parts = [(u.sums(x[:, [i]] - x[:, [i + 1]])[:, 0], u) for x, u in zip(matrices, units)]
    errors = [statistics.standard_error(sums, u.sizes) for sums, u in parts]
    known = [e for e in errors if e is not None]
    se: float | None
    if len(known) < len(errors):
        se = None
    elif len(parts) == 1:
        se = known[0]
    else:
        se = math.sqrt(math.fsum((w * e) ** 2 for w, e in zip(weights, known)))
    detectable = statistics.detectable_effect(se, settings["alpha"], settings["power"])
    delta = pair["mean_delta"]
    needed = (math.ceil(queries * (detectable / abs(delta)) ** 2)
              if detectable is not None and delta != 0 else None)
    return {"better": pair["better"], "worse": pair["worse"], "mean_delta": delta,
            "interval": _resampled(parts, weights, settings["seed"], settings["resamples"], settings["confidence"]),
            "p_value": pair["p_value"], "p_value_holm": pair["p_value_holm"], "separated": pair["separated"],
            "standard_error": se, "detectable_effect": detectable, "queries_to_separate": needed}
