"""The ANN lane's agreement with exact cosine, per query (the ANN protocols' `ann_agreement`, docs/scale.md).

For each ANN method named by the analysis and each query: recall@k = |top k of the ANN page ∩
top k of the exact method's page| / |top k of the exact page|, and the extrapolated rank-biased
overlap of the two top-k lists (Webber, Moffat and Zobel 2010, eq. 32): with X_d the overlap of
the two depth-d prefixes, RBO_ext = X_k/k * p^k + (1 - p)/p * sum_{d=1..k} X_d/d * p^d, which is 1
for identical lists. Both use the rows' verified rankings only, so export and audit recompute
them from the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def recall_at(ann: Sequence[str], exact: Sequence[str], k: int) -> float:
    truth = set(exact[:k])
    return len(set(ann[:k]) & truth) / len(truth) if truth else 1.0


def rbo_ext(a: Sequence[str], b: Sequence[str], k: int, p: float) -> float:
    a, b = list(a[:k]), list(b[:k])
    depth = min(len(a), len(b))
    if depth == 0:
        return 1.0 if not a and not b else 0.0
    seen_a, seen_b, overlap, total = set(), set(), 0, 0.0
    for d in range(1, depth + 1):
        x, y = a[d - 1], b[d - 1]
        overlap += (x in seen_b) + (y in seen_a) + (x == y)
        seen_a.add(x)
        seen_b.add(y)
        total += overlap / d * p ** d
    return overlap / depth * p ** depth + (1 - p) / p * total


def derive_ann(rows: Sequence[Mapping], protocol: Mapping) -> dict | None:
    analysis = (protocol["evaluation"].get("exploratory_analyses") or {}).get("ann_agreement")
    if analysis is None:
        return None
    k, p = analysis["k"], analysis["rbo_p"]
    exact = {r["query_id"]: r["ranking"] for r in rows if r["method"] == analysis["exact_method"]}
    out: dict = {"label": analysis["label"], "k": k, "rbo_p": p, "exact_method": analysis["exact_method"],
                 "methods": {}}
    for method in analysis["methods"]:
        per_query = {}
        for row in sorted((r for r in rows if r["method"] == method), key=lambda r: r["query_id"]):
            truth = exact.get(row["query_id"])
            if truth is not None:
                per_query[row["query_id"]] = {"recall": recall_at(row["ranking"], truth, k),
                                              "rbo": rbo_ext(row["ranking"], truth, k, p)}
        n = len(per_query)
        out["methods"][method] = {
            "queries": n,
            "recall_mean": sum(v["recall"] for v in per_query.values()) / n if n else None,
            "recall_min": min((v["recall"] for v in per_query.values()), default=None),
            "rbo_mean": sum(v["rbo"] for v in per_query.values()) / n if n else None,
            "per_query": per_query,
        }
    return out
