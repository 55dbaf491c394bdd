"""Report additions of the rescue family, recomputed from report rows and the fixture alone.

`derive_rescue(rows, protocol, queries)` returns the `rescue` block (None when the
protocol declares no exploratory analyses): per rescue method the position of the first rescued
candidate, the rescued judged supports, the gate's hit rate with its reasons; the oracle bound
(labelled an upper bound); and the token-budget curve. evaluator/views/rescue_tables.py shows
it in the Markdown and HTML summaries. Sums run in sorted query-id order, so a recomputation gives identical floats. Document
texts (for token counts) are the hits' payload contents, which evaluate and export check against
the fixture, so the block needs nothing beyond the report.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from evaluator.derived import budget
from evaluator.derived.oracle import oracle_ranking
from evaluator.numbers import metrics

ORACLE_METRICS = ("ndcg@10", "judged_recall@10", "chain_coverage@10")
GATE_REASONS = ("relation_cue", "entity_heavy", "low_agreement", "low_confidence")


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _rows_of(rows: Sequence[Mapping], method: str) -> list[Mapping]:
    return sorted((r for r in rows if r["method"] == method), key=lambda r: r["query_id"])


def _rescued(row: Mapping) -> list[bool]:
    return [bool(hit.get("rescued")) for hit in row["page"]["hits"]]


def diagnostics(rows: Sequence[Mapping], queries: Mapping[str, Mapping]) -> dict:
    """First rescued rank, rescued judged supports and gate rates for one method's rows."""
    first, supports, base_missed, gate_fired, auto = [], 0, 0, 0, 0
    with_support = 0
    reasons = {name: 0 for name in GATE_REASONS}
    vetoed = 0
    for row in rows:
        judged = queries[row["query_id"]]["judgments"]
        flags = _rescued(row)
        ranks = [i for i, flag in enumerate(flags, start=1) if flag]
        if ranks:
            first.append(ranks[0])
        rescued_supports = [doc for doc, flag in zip(row["ranking"], flags) if flag and judged.get(doc, 0) > 0]
        supports += len(rescued_supports)
        with_support += bool(rescued_supports)
        base_block = {doc for doc, flag in zip(row["ranking"], flags) if not flag}
        base_missed += sum(1 for doc, g in judged.items() if g > 0 and doc not in base_block)
        gate = row["page"]["gate"]
        gate_fired += gate["fired"]
        auto += gate["auto_decision"]
        vetoed += gate["vetoed"]
        for name in gate["reasons"]:
            reasons[name] += 1
    n = len(rows)
    return {
        "queries": n,
        "queries_with_rescued": len(first),
        "first_rescued_rank_mean": _mean(first),
        "first_rescued_rank_min": min(first) if first else None,
        "rescued_judged_supports": supports,
        "queries_with_rescued_support": with_support,
        "supports_missing_from_base_block": base_missed,
        "gate": {
            "fired_rate": gate_fired / n if n else None,
            "auto_fire_rate": auto / n if n else None,
            "veto_rate": vetoed / n if n else None,
            "reason_rates": {name: count / n if n else None for name, count in reasons.items()},
        },
    }


def oracle_bound(rows: Sequence[Mapping], queries: Mapping[str, Mapping], evaluation: Mapping) -> dict:
    actual, bound = [], []
    for row in rows:
        query = queries[row["query_id"]]
        ranked = oracle_ranking(row["ranking"], _rescued(row), query["judgments"])
        args = (query["judgments"], query["evidence_chain"], evaluation["k"], evaluation["recall_cutoffs"])
        actual.append(metrics.query_metrics(row["ranking"], *args))
        bound.append(metrics.query_metrics(ranked, *args))
    mean_actual, mean_bound = metrics.mean_metrics(actual), metrics.mean_metrics(bound)
    return {"label": "upper_bound_uses_labels",
            "actual": {m: mean_actual.get(m) for m in ORACLE_METRICS},
            "oracle": {m: mean_bound.get(m) for m in ORACLE_METRICS}}


def budget_curve(rows: Sequence[Mapping], queries: Mapping[str, Mapping], spec: Mapping) -> dict:
    """variant -> selection -> budget -> mean outcome over the method's queries."""
    budgets = spec["budgets"]
    per: dict[str, dict[str, dict[int, list[dict]]]] = {}
    for row in rows:
        query = queries[row["query_id"]]
        flags = _rescued(row)
        texts = {doc: hit["payload"]["content"] for doc, hit in zip(row["ranking"], row["page"]["hits"])}
        variants = {"whole_page": list(row["ranking"]),
                    "base_block_only": [doc for doc, flag in zip(row["ranking"], flags) if not flag]}
        for variant in spec["variants"]:
            outcome = budget.budget_rows(variants[variant], texts, query["judgments"], query["evidence_chain"], budgets)
            for selection, by_budget in outcome.items():
                for b, values in by_budget.items():
                    per.setdefault(variant, {}).setdefault(selection, {}).setdefault(b, []).append(values)
    return {variant: {selection: {str(b): {key: _mean([v[key] for v in values]) for key in values[0]}
                                  for b, values in by_budget.items()}
                      for selection, by_budget in selections.items()}
            for variant, selections in per.items()}


def derive_rescue(rows: Sequence[Mapping], protocol: Mapping, queries: Mapping[str, Mapping]) -> dict | None:
    evaluation = protocol["evaluation"]
    analyses = evaluation.get("exploratory_analyses")
    if analyses is None:
        return None
    rescue_methods = sorted(m for m, spec in protocol["methods"].items() if spec["route"] == "rescue")
    present = {r["method"] for r in rows}
    out: dict = {"label": analyses["label"], "methods": {}, "oracle_bound": {}, "budget_curve": {}}
    for method in rescue_methods:
        if method in present:
            out["methods"][method] = diagnostics(_rows_of(rows, method), queries)
    for method in analyses["oracle_bound"]["methods"]:
        if method in present:
            out["oracle_bound"][method] = oracle_bound(_rows_of(rows, method), queries, evaluation)
    spec = analyses["budget_curve"]
    out["budget_curve"]["token_count"] = spec["token_count"]
    for method in spec["methods"]:
        if method in present:
            out["budget_curve"][method] = budget_curve(_rows_of(rows, method), queries, spec)
    return out

