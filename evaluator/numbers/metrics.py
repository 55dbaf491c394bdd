"""Per-query retrieval metrics at a cutoff, their aggregates, and latency percentiles (docs/design.md §8).

Every function takes explicit inputs (a ranking of document ids, the query's judgments and evidence
chain) and returns plain floats, so export and audit can recompute a report's numbers from nothing
but the report and the fixture. Each metric is declared once, with its definition, in its own
module of protocols/metrics/ (the registry); `query_metrics` reads them in the registry's order.
The per-metric functions are named here too, for the analyses that call one directly.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from protocols import metrics as registry
from protocols.metrics.all_supports import all_supports
from protocols.metrics.chain_coverage import chain_coverage
from protocols.metrics.full_chain_hit import full_chain_hit
from protocols.metrics.judged_recall import recall, relevant
from protocols.metrics.ndcg import dcg, ndcg
from protocols.metrics.no_support import no_support

__all__ = ["METRIC_ORDER", "aggregate", "all_supports", "chain_coverage", "dcg", "full_chain_hit",
           "latency_summary", "mean_metrics", "ndcg", "no_support", "percentile", "query_metrics", "recall",
           "relevant"]

# the columns of a protocol at k = 10 with recall cutoffs 2, 5, 10 (every v1 protocol), as derived
METRIC_ORDER = tuple(name for name, _, _ in registry.reported(10, (2, 5, 10)))


def query_metrics(
    ranking: Sequence[str], judgments: Mapping[str, int], chain: Sequence[str],
    k: int = 10, recall_cutoffs: Sequence[int] = (2, 5, 10), requested: Iterable[str] = (),
) -> dict[str, float]:
    """Every per-query metric of the report, keyed `name@cutoff`, in the registry's column order:
    the standard metrics and the `requested` ones (the protocol's `evaluation.metrics`)."""
    if len(set(ranking)) != len(ranking):
        raise ValueError("a ranking lists a document twice")
    return {name: metric.value(ranking, judgments, chain, cutoff)
            for name, metric, cutoff in registry.reported(k, recall_cutoffs, requested)}


def mean_metrics(per_query: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Arithmetic mean of each metric, summed in the order given (callers pass sorted query ids)."""
    if not per_query:
        return {}
    names = list(per_query[0])
    return {name: math.fsum(row[name] for row in per_query) / len(per_query) for name in names}


def aggregate(rows: Sequence[Mapping]) -> dict:
    """Means per method and per (category, method) from report rows.

    Each row holds `query_id`, `category`, `method` and `metrics`. Rows are grouped in sorted
    query-id order so the float sums are reproducible.
    """
    ordered = sorted(rows, key=lambda r: (r["method"], r["query_id"]))
    by_method: dict[str, list] = {}
    by_category: dict[str, dict[str, list]] = {}
    for row in ordered:
        by_method.setdefault(row["method"], []).append(row["metrics"])
        by_category.setdefault(row["category"], {}).setdefault(row["method"], []).append(row["metrics"])
    return {
        "methods": {m: {"queries": len(v), **mean_metrics(v)} for m, v in sorted(by_method.items())},
        "categories": {
            c: {m: {"queries": len(v), **mean_metrics(v)} for m, v in sorted(per.items())}
            for c, per in sorted(by_category.items())
        },
    }


def percentile(values: Sequence[float], p: float) -> float:
    """Linear interpolation at position (n - 1) * p of the sorted values (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"percentile fraction must be in [0, 1], got {p}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * p
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    fraction = position - low
    return ordered[low] + (ordered[high] - ordered[low]) * fraction


def latency_summary(values: Sequence[float]) -> dict[str, float]:
    return {"n": len(values), "p50": percentile(values, 0.5), "p95": percentile(values, 0.95),
            "mean": math.fsum(values) / len(values), "max": max(values)}
