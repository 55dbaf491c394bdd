"""Evaluation depth: how many documents each method returns and each ranking is judged to.

A protocol that declares no `evaluation.depth` is judged to `evaluation.k` (every protocol frozen
before depth existed, whose methods return k documents). A deeper protocol declares `depth` (at most
the lab's search limit, 100) with recall cutoffs up to it, and gets the recall-at-k curve.
"""

from __future__ import annotations

from collections.abc import Mapping


def evaluation_depth(evaluation: Mapping) -> int:
    return int(evaluation.get("depth", evaluation["k"]))


CAPTION = ("Recall at every cutoff k = 1..depth, one line per method (mean over queries of relevant documents "
           "in the top k / relevant documents); the primary pair with its 95% bootstrap band (the protocol's seed "
           "and resamples, per cutoff).")


def declared(public: Mapping) -> bool:
    return "depth" in public["evaluation"]


def recall_at(ranking, relevant: set, k: int) -> float:
    return len(relevant.intersection(ranking[:k])) / len(relevant) if relevant else 0.0


def recall_curve(public: Mapping, fixture: Mapping) -> dict:
    """`recall_curve` of the public report (deep protocols only): per method the mean recall@k for
    k = 1..depth over the cohort in sorted id order (math.fsum), and for the primary pair the band:
    per k, the percentile bootstrap interval of that method's mean (recipe 1 of docs/reports.md: a
    fresh numpy.random.default_rng(protocol seed) per method and cutoff, as for `statistics.means`)."""
    import math

    import numpy as np

    from evaluator.numbers import statistics

    depth = evaluation_depth(public["evaluation"])
    judgments = {q["id"]: {d for d, g in q["judgments"].items() if g > 0} for q in fixture["source"]["queries"]}
    table: dict[str, dict[str, list[float]]] = {}
    for row in public["rows"]:
        relevant = judgments[row["query_id"]]
        table.setdefault(row["method"], {})[row["query_id"]] = [recall_at(row["ranking"], relevant, k)
                                                                 for k in range(1, depth + 1)]
    evaluation = public["evaluation"]
    seed, boot = public["plan"]["seed"], evaluation["bootstrap"]
    primary = evaluation["primary_contrast"]
    curves, bands = {}, {}
    for method in public["plan"]["methods"]:
        ids = sorted(table[method])
        values = np.array([table[method][q] for q in ids], dtype=np.float64)  # queries x depth
        curves[method] = [math.fsum(values[:, k].tolist()) / len(ids) for k in range(depth)]
        if method in (primary["candidate"], primary["baseline"]):
            pairs = [statistics.bootstrap_interval(values[:, k], seed, boot["resamples"], boot["confidence"])
                     for k in range(depth)]
            bands[method] = {"low": [float(low) for low, _ in pairs], "high": [float(high) for _, high in pairs]}
    return {"depth": depth, "cutoffs": list(range(1, depth + 1)), "methods": curves, "band": bands,
            "recipe": "mean over queries of |relevant in top k| / |relevant|; band: percentile bootstrap of the "
                      "method's mean per cutoff, fresh numpy.random.default_rng(protocol_seed) each"}

