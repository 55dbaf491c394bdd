"""Per-query retrieval metrics at a cutoff, their aggregates, and latency percentiles (docs/design.md §8).

Every function takes explicit inputs (a ranking of document ids, the query's judgments and evidence
chain) and returns plain floats, so export and audit can recompute a report's numbers from nothing
but the report and the fixture.

Definitions (k = 10 unless the protocol says otherwise):
- ndcg@k: DCG = sum over ranks r <= k of (2^grade - 1) / log2(r + 1); the ideal DCG sorts the
  judged grades descending; an unjudged document has grade 0; 0 when the ideal is 0.
- judged_recall@c: relevant documents (grade > 0) in the top c / all relevant documents.
- all_supports@k: 1 when every relevant document is in the top k, else 0.
- no_support@k: 1 when no relevant document is in the top k, else 0.
- chain_coverage@k: fraction of evidence-chain slots whose document is in the top k.
- full_chain_hit@k: 1 when every chain slot is covered, else 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

METRIC_ORDER = (
    "ndcg@10", "judged_recall@10", "recall@2", "recall@5", "all_supports@10", "no_support@10",
    "chain_coverage@10", "full_chain_hit@10",
)


def dcg(grades: Iterable[int]) -> float:
    return sum((2.0 ** g - 1.0) / math.log2(rank + 1) for rank, g in enumerate(grades, start=1))


def ndcg(ranking: Sequence[str], judgments: Mapping[str, int], k: int) -> float:
    ideal = dcg(sorted((g for g in judgments.values() if g > 0), reverse=True)[:k])
    if ideal == 0.0:
        return 0.0
    return dcg(judgments.get(doc, 0) for doc in ranking[:k]) / ideal


def relevant(judgments: Mapping[str, int]) -> set[str]:
    return {doc for doc, grade in judgments.items() if grade > 0}


def recall(ranking: Sequence[str], judgments: Mapping[str, int], cutoff: int) -> float:
    wanted = relevant(judgments)
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranking[:cutoff])) / len(wanted)


def all_supports(ranking: Sequence[str], judgments: Mapping[str, int], k: int) -> float:
    wanted = relevant(judgments)
    return 1.0 if wanted and wanted.issubset(ranking[:k]) else 0.0


def no_support(ranking: Sequence[str], judgments: Mapping[str, int], k: int) -> float:
    return 0.0 if relevant(judgments).intersection(ranking[:k]) else 1.0


def chain_coverage(ranking: Sequence[str], chain: Sequence[str], k: int) -> float:
    if not chain:
        return 0.0
    top = set(ranking[:k])
    return sum(1 for doc in chain if doc in top) / len(chain)


def full_chain_hit(ranking: Sequence[str], chain: Sequence[str], k: int) -> float:
    return 1.0 if chain and set(chain).issubset(ranking[:k]) else 0.0


def query_metrics(
    ranking: Sequence[str], judgments: Mapping[str, int], chain: Sequence[str],
    k: int = 10, recall_cutoffs: Sequence[int] = (2, 5, 10),
) -> dict[str, float]:
    """Every per-query metric of the report, keyed `name@cutoff`."""
    if len(set(ranking)) != len(ranking):
        raise ValueError("a ranking lists a document twice")
    out = {f"ndcg@{k}": ndcg(ranking, judgments, k), f"judged_recall@{k}": recall(ranking, judgments, k)}
    for cutoff in recall_cutoffs:
        if cutoff != k:
            out[f"recall@{cutoff}"] = recall(ranking, judgments, cutoff)
    out[f"all_supports@{k}"] = all_supports(ranking, judgments, k)
    out[f"no_support@{k}"] = no_support(ranking, judgments, k)
    out[f"chain_coverage@{k}"] = chain_coverage(ranking, chain, k)
    out[f"full_chain_hit@{k}"] = full_chain_hit(ranking, chain, k)
    return out


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
