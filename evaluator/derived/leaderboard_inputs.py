"""A leaderboard's strata and settings, read from reports (docs/leaderboard.md, "What it reads").

One report is one stratum. Several reports of one protocol are one stratum too: their rows are
merged by (method, query), a pair measured twice must carry the same value (the lab is
deterministic; a disagreement is refused, never averaged), and every method must then cover the
same queries. A suite gives one stratum per dataset, in its order. The settings come from what
was frozen: a report's protocol (its seed, bootstrap, permutations and interval unit) or the
suite's pooling; only the metric, alpha and power are the reader's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evaluator.derived.report import document_titles
from evaluator.numbers import query_clusters as clustering
from evaluator.numbers import statistics
from evaluator.numbers.leaderboard import ALPHA, POWER, Stratum

DEFAULT_METRIC = "ndcg@10"


class BoardInputError(ValueError):
    """Reports that cannot make one board (a metric they lack, rows that disagree or do not cover)."""


def report_stratum(name: str, reports: Sequence[Mapping], source: Mapping, metric: str) -> Stratum:
    """The stratum of one dataset from its report(s) (already checked to share one protocol) and
    the fixture's source (queries and titles, for the protocol's clusters)."""
    values: dict[str, dict[str, float]] = {}
    categories: dict[str, str] = {}
    costs: dict[str, dict[str, list[float]]] = {}
    for report in reports:
        for row in report["rows"]:
            if metric not in row["metrics"]:
                raise BoardInputError(f"dataset {name}: the reports have no metric {metric!r} "
                                      f"(they have {', '.join(sorted(row['metrics']))})")
            value = row["metrics"][metric]
            seen = values.setdefault(row["method"], {}).get(row["query_id"])
            if seen is not None and seen != value:
                raise BoardInputError(f"dataset {name}: method {row['method']} query {row['query_id']} has {metric} "
                                      f"{seen!r} in one report and {value!r} in another")
            values[row["method"]][row["query_id"]] = value
            categories[row["query_id"]] = row.get("category") or ""
        for job in sorted(report["jobs"], key=lambda j: j["order"]):
            bucket = costs.setdefault(job["method"], {"http_ms": [], "retrieval_ms": []})
            bucket["http_ms"].append(job["http_ms"])
            bucket["retrieval_ms"].append(job["retrieval_micros"] / 1000.0)
    every = sorted(set().union(*(set(v) for v in values.values()))) if values else []
    for method, by_query in sorted(values.items()):
        if len(by_query) != len(every):
            raise BoardInputError(f"dataset {name}: method {method} has rows for {len(by_query)} of the "
                                  f"{len(every)} queries the reports cover")
    protocol = reports[0]["protocol"]
    rule = clustering.resolve_rule(statistics.settings(protocol["evaluation"])["clusters"]["rule"], every)
    queries = {q["id"]: q for q in source["queries"]}
    groups = clustering.build_clusters(rule, every, queries, document_titles(source))
    return Stratum(name, values, categories, groups, costs=costs)


def report_settings(protocol: Mapping, metric: str, alpha: float = ALPHA, power: float = POWER) -> dict:
    """A single protocol's board settings: what its report's own statistics were frozen with."""
    evaluation = protocol["evaluation"]
    options = statistics.settings(evaluation)
    return {"metric": metric, "unit": options["clusters"]["primary_interval"], "weights": "equal",
            "alpha": alpha, "power": power, "seed": protocol["protocol_seed"],
            "resamples": evaluation["bootstrap"]["resamples"], "confidence": evaluation["bootstrap"]["confidence"],
            "permutations": options["permutations"], "adjustment": "holm over every pair of the board"}


def suite_settings(suite: Mapping, metric: str, alpha: float = ALPHA, power: float = POWER) -> dict:
    pooling = suite["pooling"]
    return {"metric": metric, "unit": pooling["unit"], "weights": pooling["weights"], "alpha": alpha,
            "power": power, "seed": suite["seed"], "resamples": pooling["resamples"],
            "confidence": pooling["confidence"], "permutations": pooling["permutations"],
            "adjustment": "holm over every pair of the board"}
