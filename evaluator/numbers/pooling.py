"""The pooled primary contrast of a suite: a stratified paired bootstrap across datasets.

Reproducing the pooled numbers by hand (docs/suites.md):

1. Per dataset d, in the suite's order: the per-query deltas (candidate - baseline on the suite's
   metric) in sorted query-id order, and the units the suite resamples: queries (S = delta, m = 1)
   or the dataset's clusters (S_c = sum of the deltas of cluster c, m_c = its size; clusters by
   the rule of the dataset's protocol, ordered by smallest query id), K_d units over n_d queries.
2. Weights: "equal" w_d = 1 / D; "query_count" w_d = n_d / sum of n.
3. Pooled delta = sum_d w_d * mean_d, mean_d = math.fsum(deltas) / n_d.
4. Bootstrap: ONE `rng = numpy.random.default_rng(suite seed)`; for each dataset in suite order,
   `indices = rng.integers(0, K_d, size=(resamples, K_d))` and `means_d = S[indices].sum(axis=1) /
   m[indices].sum(axis=1)`; pooled = w_1 * means_1 + w_2 * means_2 + ... (in suite order);
   interval = numpy.percentile(pooled, [100 * a / 2, 100 * (1 - a / 2)]), a = 1 - confidence.
5. Randomization: every unit of every dataset, concatenated in suite order, with value
   v = w_d * S / n_d; the paired sign-flip test of evaluator/numbers/statistics.py on v (exact
   over 2^U patterns when that is at most the permutations, else Monte Carlo with the suite seed).
6. Detectable effect: (z_0.975 + z_0.8) * sqrt(sum_d w_d^2 * SE_d^2), SE_d the dataset's
   standard error over its units (statistics.standard_error).

Each dataset's own row is the single-report recipe (statistics.contrast) with the suite's seed,
resamples, confidence and permutations: its query interval, cluster interval, p and detectable
effect, so the first dataset's bootstrap draws are also the pooled bootstrap's first draws.
The pooled row is also computed with the unit the suite did not declare (`pooled_other_unit`),
shown beside it and never read as the result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluator.numbers import query_clusters as clustering
from evaluator.numbers import statistics

POOLED_FORMAT = "graph_evaluation_pooled_v1"


@dataclass(frozen=True)
class DatasetDeltas:
    """One dataset's side of the pooled contrast."""

    name: str
    candidate: dict[str, float]  # query id -> the candidate's value of the metric
    baseline: dict[str, float]
    clusters: list[list[str]]
    cluster_rule: str
    tie_tolerance: float


def dataset_deltas(name: str, report: Mapping, source: Mapping, contrast: Mapping) -> DatasetDeltas:
    """The suite contrast's per-query values from a (verified) report, and the dataset's clusters
    under its protocol's rule (the same clusters as the report's own statistics block)."""
    protocol = report["protocol"]
    values: dict[str, dict[str, float]] = {contrast["candidate"]: {}, contrast["baseline"]: {}}
    for row in report["rows"]:
        if row["method"] in values:
            values[row["method"]][row["query_id"]] = row["metrics"][contrast["metric"]]
    ids = sorted(report["plan"]["queries"])
    for method, by_query in values.items():
        if sorted(by_query) != ids:
            raise ValueError(f"dataset {name}: method {method} has no row for some planned query")
    declared = statistics.settings(protocol["evaluation"])["clusters"]["rule"]
    rule = clustering.resolve_rule(declared, ids)
    queries = {q["id"]: q for q in source["queries"]}
    titles = {d["id"]: d["title"] for d in source["documents"]}
    return DatasetDeltas(name, values[contrast["candidate"]], values[contrast["baseline"]],
                         clustering.build_clusters(rule, ids, queries, titles), rule,
                         protocol["evaluation"]["tie_tolerance"])


def weights(datasets: Sequence[DatasetDeltas], rule: str) -> list[float]:
    return size_weights([len(d.candidate) for d in datasets], rule)


def size_weights(sizes: Sequence[int], rule: str) -> list[float]:
    """Dataset weights by the suite's rule: "equal" 1/D, "query_count" n_d / sum n."""
    if rule == "equal":
        return [1.0 / len(sizes)] * len(sizes)
    if rule == "query_count":
        total = sum(sizes)
        return [n / total for n in sizes]
    raise ValueError(f"unknown weighting {rule!r}")


def units(data: DatasetDeltas, unit: str) -> tuple[np.ndarray, np.ndarray]:
    ids, deltas = statistics.paired_deltas(data.candidate, data.baseline)
    if unit == "query":
        return deltas, np.ones(len(ids), dtype=np.float64)
    if unit == "cluster":
        return statistics.cluster_totals(ids, deltas, data.clusters)
    raise ValueError(f"unknown unit {unit!r}")


def pooled_contrast(datasets: Sequence[DatasetDeltas], pooling: Mapping, seed: int) -> dict:
    """Delta, interval, randomization p, SE and detectable effect of the pooled contrast."""
    w = weights(datasets, pooling["weights"])
    parts = [units(d, pooling["unit"]) for d in datasets]
    sizes_n = [float(m.sum()) for _, m in parts]
    means = [math.fsum(statistics.paired_deltas(d.candidate, d.baseline)[1].tolist()) / len(d.candidate)
             for d in datasets]
    rng = np.random.default_rng(seed)
    pooled = np.zeros(pooling["resamples"], dtype=np.float64)
    for weight, (sums, sizes) in zip(w, parts):
        indices = rng.integers(0, len(sums), size=(pooling["resamples"], len(sums)))
        pooled = pooled + weight * (sums[indices].sum(axis=1) / sizes[indices].sum(axis=1))
    alpha = 1.0 - pooling["confidence"]
    low, high = np.percentile(pooled, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    values = np.concatenate([weight * sums / n for weight, (sums, _), n in zip(w, parts, sizes_n)])
    p_value, method = statistics.sign_flip_p(values, seed, pooling["permutations"])
    errors = [statistics.standard_error(sums, sizes) for sums, sizes in parts]
    known = [e for e in errors if e is not None]
    se = math.sqrt(math.fsum((wd * e) ** 2 for wd, e in zip(w, known))) if len(known) == len(errors) else None
    return {
        "datasets": len(datasets),
        "queries": sum(len(d.candidate) for d in datasets),
        "units": sum(len(s) for s, _ in parts),
        "weights": dict(zip((d.name for d in datasets), w)),
        "mean_delta": math.fsum(wd * m for wd, m in zip(w, means)),
        "interval": [float(low), float(high)],
        "p_value": p_value,
        "p_method": method,
        "standard_error": se,
        "detectable_effect": statistics.detectable_effect(se),
    }


def dataset_row(data: DatasetDeltas, pooling: Mapping, seed: int, weight: float) -> dict:
    row = statistics.contrast(data.candidate, data.baseline, seed=seed, resamples=pooling["resamples"],
                              confidence=pooling["confidence"], tolerance=data.tie_tolerance,
                              permutations=pooling["permutations"], clusters=data.clusters)
    return {"dataset": data.name, "weight": weight, "cluster_rule": data.cluster_rule, **row}


def pool(suite: Mapping, datasets: Sequence[DatasetDeltas], reports: Mapping[str, Mapping],
         secondary: Sequence[Sequence[DatasetDeltas]] = ()) -> dict:
    """The whole pooled result: the suite's declaration, one row per dataset and the pooled row;
    then the same for each secondary contrast the suite declares (`secondary`: its datasets, in
    the suite's order of `secondary_contrasts`), with the same seed."""
    pooling, seed = suite["pooling"], suite["seed"]
    w = weights(datasets, pooling["weights"])
    other = next(u for u in ("query", "cluster") if u != pooling["unit"])
    result = {
        "format": POOLED_FORMAT,
        "suite_version": suite["suite_version"],
        "title": suite["title"],
        "primary_contrast": suite["primary_contrast"],
        "pooling": pooling,
        "seed": seed,
        "recipe": {"bootstrap": "stratified: one numpy.random.default_rng(seed); per dataset in suite order "
                                "rng.integers(0, K_d, size=(resamples, K_d)) over its units; pooled = sum_d w_d "
                                "* resampled mean_d; numpy.percentile linear",
                   "randomization": statistics.RANDOMIZATION_DESCRIPTION + "; units of all datasets in suite "
                                    "order, v = w_d * S / n_d",
                   "detectable_effect": "(z_0.975 + z_0.8) * sqrt(sum_d w_d^2 SE_d^2)",
                   "dataset_rows": "statistics.contrast with the suite seed (the single-report recipe)"},
        "reports": {name: dict(value) for name, value in reports.items()},
        "per_dataset": [dataset_row(d, pooling, seed, wd) for d, wd in zip(datasets, w)],
        "pooled": pooled_contrast(datasets, pooling, seed),
        # the unit the suite did not declare, by the same recipe and seed: shown beside the declared
        # interval as every dataset row shows both, never the one the suite is read by
        "pooled_other_unit": {"unit": other,
                              **pooled_contrast(datasets, {**pooling, "unit": other}, seed)},
    }
    if "secondary_contrasts" in suite:  # absent: the pooled file of a suite without them is unchanged
        result["secondary_contrasts"] = [
            {"contrast": contrast,
             "per_dataset": [dataset_row(d, pooling, seed, wd) for d, wd in zip(data, weights(data, pooling["weights"]))],
             "pooled": pooled_contrast(data, pooling, seed),
             # its own other-unit row: the primary's would print another contrast's interval
             "pooled_other_unit": {"unit": other, **pooled_contrast(data, {**pooling, "unit": other}, seed)}}
            for contrast, data in zip(suite["secondary_contrasts"], secondary, strict=True)]
    return result
