"""The rescue section's tables in the Markdown and HTML summaries, from the `rescue` block that
evaluator/derived/rescue.py derives (kept apart so the computation room imports no rendering)."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.derived.rescue import GATE_REASONS, ORACLE_METRICS
from evaluator.views.tables import Table, joined, metric_label, num


def tables(document: Mapping) -> list[Table]:
    """The rescue section's tables (exploratory; the oracle is an upper bound) of a public report."""
    path = ("rescue",)
    block = document.get("rescue")
    if not block:
        return []
    diagnostics_table = Table("rescue", "Rescue family (exploratory)",
                              ["method", "queries with rescued", "first rescued rank (mean)", "rescued judged supports",
                               "gate fired", *(name.replace("_", " ") for name in GATE_REASONS), "vetoed"])
    for method in block["methods"]:
        at: tuple = (*path, "methods", method)
        diagnostics_table.add(method, joined(num(document, *at, "queries_with_rescued", fmt="d"),
                                             num(document, *at, "queries", fmt="d"), sep="/"),
                              num(document, *at, "first_rescued_rank_mean", fmt=".1f"),
                              num(document, *at, "rescued_judged_supports", fmt="d"),
                              num(document, *at, "gate", "fired_rate"),
                              *(num(document, *at, "gate", "reason_rates", name) for name in GATE_REASONS),
                              num(document, *at, "gate", "veto_rate"))
    oracle = Table("rescue-oracle", "Rescue oracle bound (UPPER BOUND: uses the labels; not a method)",
                   ["method", *(f"{metric_label(m)} {side}" for m in ORACLE_METRICS for side in ("actual", "oracle"))])
    for method in block["oracle_bound"]:
        at = (*path, "oracle_bound", method)
        oracle.add(method, *(num(document, *at, side, m) for m in ORACLE_METRICS for side in ("actual", "oracle")))
    curve = Table("rescue-budget", "Rescue token budget curve",
                  ["method", "variant", "selection", "budget", "evidence recall", "chain coverage", "tokens spent"],
                  note=f"Tokens = {block['budget_curve'].get('token_count')}; means over the method's queries.")
    for method, variants in block["budget_curve"].items():
        if method == "token_count":
            continue
        for variant, selections in variants.items():
            for selection, by_budget in selections.items():
                for budget_name in by_budget:
                    at = (*path, "budget_curve", method, variant, selection, budget_name)
                    curve.add(method, variant, selection, budget_name, num(document, *at, "evidence_recall"),
                              num(document, *at, "chain_coverage"), num(document, *at, "tokens_spent", fmt=".0f"))
    return [diagnostics_table, oracle, curve]
