"""`lab judge`: an external method judged against a finished campaign as one more method.

The campaign's private report is read, never written, and must pass every check export requires
(complete, bound to its fixture, every number recomputed, sealed). The external rankings (a run
file, or the answers of a loopback retriever) get the report's own per-query metrics, and every
contrast "external − frozen method" on each contrast metric is computed by the campaign's own
statistics: its seed, resamples, confidence, tie tolerance, permutations and clusters. Holm
adjusts, per metric, the contrasts of the external method against every frozen method as one
family (query-level and cluster-level p separately); the judged report declares the family.

Nothing external carries a proof: the method is labelled LABEL wherever it appears.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluator.derived.depth import evaluation_depth
from evaluator.derived.report import row_metrics
from evaluator.export.export import require_consistent
from evaluator.judge.runs import TIE_RULE, TREC_EVAL_TIE_RULE, Rankings
from evaluator.numbers import query_clusters as clustering
from evaluator.numbers import statistics
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.files import load_json
from ground.run_dir import RunDir

JUDGED_FORMAT = "graph_evaluation_judged_v1"
LABEL = "external: no proofs, not verified"
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class JudgeRefused(RefusedInput):
    """A campaign that cannot be judged against, or a name that cannot label an external method."""


@dataclass(frozen=True)
class Campaign:
    """A finished campaign, checked: its report, fixture, cohort and the frozen per-query values."""

    report: dict
    fixture: dict
    paths: dict[str, Path]

    @property
    def protocol(self) -> dict:
        return self.report["protocol"]

    @property
    def evaluation(self) -> dict:
        return self.protocol["evaluation"]

    @property
    def cohort(self) -> list[str]:
        return sorted(self.report["plan"]["queries"])

    @property
    def queries(self) -> dict[str, dict]:
        return {q["id"]: q for q in self.fixture["source"]["queries"]}

    @property
    def documents(self) -> dict[str, dict]:
        return {d["id"]: d for d in self.fixture["source"]["documents"]}

    @property
    def depth(self) -> int:
        return evaluation_depth(self.evaluation)

    @property
    def methods(self) -> list[str]:
        return list(self.report["plan"]["methods"])


def load_campaign(run_dir: Path, report: Path | None = None, fixture: Path | None = None) -> Campaign:
    """The run directory's private report and fixture, refused unless export would accept them."""
    run = RunDir(Path(run_dir))
    paths = {"report": Path(report or run.report), "fixture": Path(fixture or run.fixture)}
    value = load_json(paths["report"], "report")
    fix = load_json(paths["fixture"], "fixture")
    require_consistent(value, fix, paths["report"], JudgeRefused, "judge against")
    return Campaign(value, fix, paths)


def check_name(name: str, campaign: Campaign) -> None:
    if not name or len(name) > 64 or not set(name) <= NAME_CHARS:
        raise JudgeRefused(f"--name {name!r}: 1 to 64 characters of letters, digits, '_', '.', '-'")
    if name in campaign.methods:
        raise JudgeRefused(f"--name {name!r} is a frozen method of this campaign; name the external method otherwise")


def per_query_frozen(report: Mapping) -> dict[str, dict[str, dict[str, float]]]:
    return statistics.per_query_table(report["rows"])


def external_rows(campaign: Campaign, rankings: Mapping[str, Sequence[str]]) -> list[dict]:
    queries = campaign.queries
    return [{"query_id": q, "category": queries[q]["category"], "hop": queries[q]["hop"],
             "ranking": list(rankings[q]), "metrics": row_metrics(rankings[q], queries[q], campaign.evaluation)}
            for q in campaign.cohort]


def holm_by_metric(contrasts: list[dict], methods: int) -> None:
    """Holm within each metric over the external-vs-frozen contrasts, query and cluster level apart."""
    for metric in dict.fromkeys(c["metric"] for c in contrasts):
        members = [c for c in contrasts if c["metric"] == metric]
        for where in (lambda c: c, lambda c: c.get("cluster")):
            targets = [where(c) for c in members]
            if any(t is None for t in targets):
                continue
            for t, p in zip(targets, statistics.holm([t["p_value"] for t in targets])):
                t["p_value_holm"] = p
        for c in members:
            c["holm_family"] = f"external − every frozen method, {metric}: {len(members)} contrasts"


def judged_statistics(campaign: Campaign, name: str, rows: Sequence[Mapping]) -> dict:
    """Every contrast external − frozen method, by the campaign's own recipes and settings."""
    evaluation, seed = campaign.evaluation, campaign.protocol["protocol_seed"]
    options = statistics.settings(evaluation)
    rule = clustering.resolve_rule(options["clusters"]["rule"], campaign.cohort)
    titles = {d["id"]: d["title"] for d in campaign.fixture["source"]["documents"]}
    groups = clustering.build_clusters(rule, campaign.cohort, campaign.queries, titles)
    frozen = per_query_frozen(campaign.report)
    mine = {r["query_id"]: r["metrics"] for r in rows}
    boot = evaluation["bootstrap"]
    patterns: dict = {}
    contrasts = []
    for method in campaign.methods:
        for metric in evaluation["contrast_metrics"]:
            contrasts.append({
                "candidate": name, "baseline": method, "metric": metric, "label": "external",
                **statistics.contrast({q: m[metric] for q, m in mine.items()},
                                      {q: m[metric] for q, m in frozen[method].items()},
                                      seed=seed, resamples=boot["resamples"], confidence=boot["confidence"],
                                      tolerance=evaluation["tie_tolerance"], permutations=options["permutations"],
                                      clusters=groups, patterns=patterns)})
    holm_by_metric(contrasts, len(campaign.methods))
    return {
        "rng": statistics.RNG_DESCRIPTION, "seed": seed, "resamples": boot["resamples"],
        "confidence": boot["confidence"], "tie_tolerance": evaluation["tie_tolerance"],
        "randomization": {"permutations": options["permutations"], "alternative": "two-sided",
                          "recipe": statistics.RANDOMIZATION_DESCRIPTION},
        "multiplicity": {"method": "holm",
                         "families": f"per metric: the external method against every frozen method "
                                     f"({len(campaign.methods)} contrasts; query-level and cluster-level p "
                                     f"separately); nothing else is in the family"},
        "detectable_effect": {"alpha": statistics.ALPHA, "power": statistics.POWER,
                              "factor": statistics.detectable_factor(), "recipe": statistics.DETECTABLE_DESCRIPTION},
        "clusters": {"rule": rule, "declared_rule": options["clusters"]["rule"],
                     "primary_interval": options["clusters"]["primary_interval"],
                     "recipe": statistics.CLUSTER_RNG_DESCRIPTION, **clustering.structure(groups)},
        "contrasts": contrasts,
        "means": {metric: statistics.mean_interval(mine_values(mine, metric), seed=seed, resamples=boot["resamples"],
                                                   confidence=boot["confidence"])
                  for metric in evaluation["contrast_metrics"]},
    }


def mine_values(mine: Mapping[str, Mapping[str, float]], metric: str) -> dict[str, float]:
    return {q: m[metric] for q, m in mine.items()}


def means(rows: Sequence[Mapping]) -> dict:
    names = list(rows[0]["metrics"]) if rows else []
    ordered = sorted(rows, key=lambda r: r["query_id"])
    return {"queries": len(rows), **{n: math.fsum(r["metrics"][n] for r in ordered) / len(rows) for n in names}}


def judge(campaign: Campaign, name: str, ranked: Rankings, given: Mapping) -> dict:
    """The judged report: the external method's rows, means and contrasts with the campaign's
    methods; `given` describes where the rankings came from (kept as the report's `input`)."""
    rows = external_rows(campaign, ranked.rankings)
    report = campaign.report
    metric = campaign.evaluation["contrast_metrics"][0]
    ties = {"queries_with_ties": len(ranked.trec_eval_order), "metric": metric,
            "lab_order": means(rows)[metric] if rows else None,
            "trec_eval_order": means(external_rows(campaign, {**ranked.rankings, **ranked.trec_eval_order}))[metric]
            if rows else None, "trec_eval_rule": TREC_EVAL_TIE_RULE}
    return {
        "format": JUDGED_FORMAT,
        "name": name,
        "label": LABEL,
        "campaign": {"protocol_version": report["protocol_version"], "private_report_digest": digest(report),
                     "hash_chain": report["hash_chain"], "split": report["plan"]["split"],
                     "queries": len(campaign.cohort), "methods": campaign.methods,
                     "primary_contrast": campaign.evaluation["primary_contrast"]},
        "input": {**given, "tie_rule": TIE_RULE, "depth": campaign.depth, "hits_accepted": ranked.hits,
                  "hits_beyond_depth": ranked.beyond_depth, "missing_queries": len(ranked.missing), "ties": ties,
                  "missing_query_ids": ranked.missing,
                  "missing_rule": "a cohort query the run does not rank is judged as an empty ranking"},
        "aggregates": {"methods": {name: means(rows), **report["aggregates"]["methods"]},
                       "labels": {name: LABEL, **{m: "lab: proofs verified" for m in campaign.methods}}},
        "statistics": judged_statistics(campaign, name, rows),
        "rows": rows,
    }
