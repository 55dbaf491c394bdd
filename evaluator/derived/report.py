"""The private report: per-query rows, per-job measurements and everything derived from them.

`derive(report, frozen)` recomputes every metric, aggregate, latency summary and contrast from the
rows, jobs and the fixture's judgments alone; evaluate stores its result, export and audit call it
again and compare, so a number in a report is never trusted for being in the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from evaluator.derived.ann_agreement import derive_ann
from evaluator.derived.reach import derive_reach
from evaluator.derived.rescue import derive_rescue
from evaluator.numbers import metrics, statistics
from evaluator.numbers import query_clusters as clustering
from evaluator.verification.verify import proof_digest, ranking_digest
from ground.canonical import canonical, digest

REPORT_FORMAT = "graph_evaluation_report_v1"
DERIVED_KEYS = ("aggregates", "latency", "sizes", "work", "cuts", "statistics", "rescue", "ann", "reach")


class Row(TypedDict):
    query_id: str
    category: str
    hop: int
    method: str
    ranking: list[str]  # document ids, best first
    records: list[str]  # lab record ids, best first
    scores: list[float]
    metrics: dict[str, float]
    page_digest: str  # of the first repetition's page
    ranking_digest: str
    proof_digest: str
    payload_bytes: int
    work: dict
    stop_reasons: list[str]
    coverage: dict
    page: dict  # the full page of the first repetition (private: payloads, proofs)


class Job(TypedDict):
    order: int
    query_id: str
    method: str
    repetition: int
    retrieval_micros: int
    http_ms: float
    embed_plus_http_ms: float
    response_bytes: int
    page_digest: str
    ranking_digest: str
    proof_digest: str


def payload_bytes(page: Mapping) -> int:
    return sum(len(canonical(hit["payload"])) for hit in page.get("hits") or [])


def row_from_page(query: Mapping, method: str, page: Mapping, doc_of: Mapping[str, str], evaluation: Mapping,
                  digest_of: Callable[[Any], str] = digest) -> dict:
    """A report row: everything in it but the page itself is derived from the page, the query and
    the prepare state's record map, so audit can derive it again and compare every field.
    `digest_of`: `ground.canonical.digest` or one proved equal to it for this page (evaluate
    digests the pages it received with ground/fast_canonical.py)."""
    records = [h["id"] for h in page["hits"]]
    ranking = [doc_of[r] for r in records]
    return {
        "query_id": query["id"], "category": query["category"], "hop": query["hop"], "method": method,
        "ranking": ranking, "records": records, "scores": [h["score"] for h in page["hits"]],
        "metrics": row_metrics(ranking, query, evaluation),
        "page_digest": digest_of(page), "ranking_digest": ranking_digest(page, digest_of),
        "proof_digest": proof_digest(page, digest_of),
        "payload_bytes": payload_bytes(page), "work": page.get("work") or {},
        "stop_reasons": page.get("stop_reasons") or [], "coverage": page.get("coverage") or {},
        "page": page,
    }


def row_metrics(ranking: Sequence[str], query: Mapping, evaluation: Mapping) -> dict[str, float]:
    return metrics.query_metrics(ranking, query["judgments"], query["evidence_chain"], evaluation["k"],
                                 evaluation["recall_cutoffs"], evaluation.get("metrics", ()))


def derive(report: Mapping, protocol: Mapping, queries: Mapping[str, Mapping], titles: Mapping[str, str]) -> dict:
    """Every derived block of a report, recomputed from its rows and jobs, the protocol and the
    fixture's queries (judgments, evidence chains); `titles` (document id -> title, from the
    fixture's source: `document_titles`) places queries in clusters under the supporting-title
    rule. Required, not optional: a caller that left it out derived MuSiQue reports correctly and
    failed only on HotpotQA and 2Wiki (the audit did, until this was a required argument)."""
    evaluation = protocol["evaluation"]
    rows = []
    for row in report["rows"]:
        query = queries[row["query_id"]]
        rows.append({**row, "metrics": row_metrics(row["ranking"], query, evaluation)})
    derived: dict[str, Any] = {"row_metrics": {f"{r['query_id']}|{r['method']}": r["metrics"] for r in rows}}
    derived["aggregates"] = metrics.aggregate(rows)
    derived["latency"] = latency(report["jobs"])
    derived["sizes"] = sizes(report["jobs"], rows)
    derived["work"], derived["cuts"] = work_and_cuts(rows)
    derived["rescue"] = derive_rescue(rows, protocol, queries)  # None for protocols without the rescue analyses
    derived["ann"] = derive_ann(rows, protocol)  # None for protocols without the ANN lane (evaluator/derived/ann_agreement.py)
    # reach and ceiling over the base pools fetched after the timed jobs (evaluator/derived/reach.py)
    derived["reach"] = derive_reach(rows, queries, report.get("base_pools"), protocol)
    methods = {r["method"] for r in rows}
    primary = evaluation["primary_contrast"]
    complete = all(len({r["query_id"] for r in rows if r["method"] == m}) == len(report["plan"]["queries"])
                   for m in protocol["methods"]) and methods == set(protocol["methods"])
    if complete and primary["candidate"] in methods:
        derived["statistics"] = statistics_block(rows, protocol, report["plan"]["queries"], queries, titles)
    else:
        derived["statistics"] = None
    return derived


def statistics_block(rows: Sequence[Mapping], protocol: Mapping, query_ids: Sequence[str],
                     queries: Mapping[str, Mapping], titles: Mapping[str, str] | None) -> dict:
    """The `statistics` block: every contrast with its query- and cluster-level numbers, and the
    recipe of each (docs/reports.md, "Statistics")."""
    evaluation = protocol["evaluation"]
    seed = protocol["protocol_seed"]
    options = statistics.settings(evaluation)
    declared = options["clusters"]
    rule = clustering.resolve_rule(declared["rule"], query_ids)
    groups = clustering.build_clusters(rule, sorted(query_ids), queries, titles)
    table = statistics.per_query_table(rows)
    drawn: dict = {}  # the random draws every contrast and mean shares (same seed, same sizes)
    return {
        "rng": statistics.RNG_DESCRIPTION,
        "seed": seed,
        "resamples": evaluation["bootstrap"]["resamples"],
        "confidence": evaluation["bootstrap"]["confidence"],
        "tie_tolerance": evaluation["tie_tolerance"],
        "randomization": {"permutations": options["permutations"], "alternative": "two-sided",
                          "recipe": statistics.RANDOMIZATION_DESCRIPTION},
        "multiplicity": {"method": "holm", "families": "exploratory contrasts of each metric (query-level and "
                                                        "cluster-level p separately); confirmatory not adjusted"},
        "detectable_effect": {"alpha": statistics.ALPHA, "power": statistics.POWER,
                              "factor": statistics.detectable_factor(),
                              "recipe": statistics.DETECTABLE_DESCRIPTION},
        "clusters": {"rule": rule, "declared_rule": declared["rule"], "primary_interval": declared["primary_interval"],
                     "recipe": statistics.CLUSTER_RNG_DESCRIPTION, **clustering.structure(groups)},
        "contrasts": statistics.contrasts(table, evaluation, seed, clusters=groups, cache=drawn),
        "means": statistics.method_means(table, evaluation, seed, cache=drawn),
    }


def document_titles(source: Mapping) -> dict[str, str]:
    """Document id -> title, what the supporting-title cluster rule reads of a source."""
    return {doc["id"]: doc["title"] for doc in source["documents"]}


def latency(jobs: Sequence[Mapping]) -> dict:
    by_method: dict[str, dict[str, list[float]]] = {}
    for job in sorted(jobs, key=lambda j: j["order"]):
        bucket = by_method.setdefault(job["method"], {"retrieval_ms": [], "http_ms": [], "embed_plus_http_ms": []})
        bucket["retrieval_ms"].append(job["retrieval_micros"] / 1000.0)
        bucket["http_ms"].append(job["http_ms"])
        bucket["embed_plus_http_ms"].append(job["embed_plus_http_ms"])
    return {m: {k: metrics.latency_summary(v) for k, v in b.items()} for m, b in sorted(by_method.items())}


def sizes(jobs: Sequence[Mapping], rows: Sequence[Mapping]) -> dict:
    out: dict[str, dict] = {}
    for method in sorted({j["method"] for j in jobs}):
        response = [j["response_bytes"] for j in jobs if j["method"] == method]
        payload = [r["payload_bytes"] for r in rows if r["method"] == method]
        out[method] = {"response_bytes_mean": sum(response) / len(response),
                       "response_bytes_max": max(response),
                       "payload_bytes_mean": sum(payload) / len(payload) if payload else 0.0}
    return out


def work_and_cuts(rows: Sequence[Mapping]) -> tuple[dict, dict]:
    work: dict[str, dict] = {}
    cuts: dict[str, dict] = {}
    for method in sorted({r["method"] for r in rows}):
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["query_id"])
        names = sorted({k for r in mine for k in r["work"]})
        work[method] = {k: sum(r["work"].get(k, 0) for r in mine) / len(mine) for k in names}
        reasons = sorted({s for r in mine for s in r["stop_reasons"]})
        cuts[method] = {
            "queries": len(mine),
            "any_stop_fraction": sum(1 for r in mine if r["stop_reasons"]) / len(mine),
            "budget_cut_fraction": sum(1 for r in mine if any(s != "depth_limit" for s in r["stop_reasons"])) / len(mine),
            "by_reason": {s: sum(1 for r in mine if s in r["stop_reasons"]) / len(mine) for s in reasons},
            "incomplete_coverage_fraction": sum(1 for r in mine if not r["coverage"].get("complete", True)) / len(mine),
        }
    return work, cuts


def differences(stored: object, derived: object, path: str = "") -> list[str]:
    """Paths at which a stored derived block differs from its recomputation (exact comparison:
    equal as canonical JSON, so 1 and 1.0, or 0.0 and -0.0, differ)."""
    if stored is derived:  # one object (a row and its re-derivation share the page): nothing to compare
        return []
    out: list[str] = []
    if isinstance(stored, Mapping) and isinstance(derived, Mapping):
        for key in sorted(set(stored) | set(derived), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in stored or key not in derived:
                out.append(f"{where}: present on one side only")
            else:
                out.extend(differences(stored[key], derived[key], where))
        return out
    if isinstance(stored, list) and isinstance(derived, list) and len(stored) == len(derived):
        for i, (a, b) in enumerate(zip(stored, derived)):
            out.extend(differences(a, b, f"{path}[{i}]"))
        return out
    return [] if _same_leaf(stored, derived) else [f"{path}: stored {_short(stored)}, recomputed {_short(derived)}"]


def _same_leaf(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)  # the canonical form of a float is its repr
    if isinstance(a, (str, int, bool)) or a is None:
        return a == b
    return digest(a) == digest(b)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def fence_failures(report: Mapping) -> list[str]:
    """Plan, state, before, after and every stored page carry one fence; the store did not change."""
    fence = report["plan"]["fence"]
    out = []
    for where, value in (("state.fence", report["state"].get("fence")), ("before.fence", report["before"]["fence"]),
                         ("after.fence", (report.get("after") or {}).get("fence"))):
        if value != fence:
            out.append(f"{where}: {value}, plan fence {fence}")
    after = report.get("after") or {}
    for name in ("store_digest", "content_digest"):
        if after.get(name) != report["before"][name]:
            out.append(f"after.{name}: differs from before.{name}")
    for i, row in enumerate(report["rows"]):
        if row["page"].get("fence") != fence:
            out.append(f"rows[{i}] (query {row['query_id']}, method {row['method']}).page.fence: {row['page'].get('fence')}")
    return out


def repetition_failures(report: Mapping, *, rows_checked: bool = False) -> list[str]:
    """Every job repeated the ranking and proofs of its row's stored page (`rows_checked`: the
    caller has already derived each row's digests from its page, as the audit's rows check does)."""
    rows = {(r["query_id"], r["method"]): r for r in report["rows"]}
    out = []
    for i, row in enumerate([] if rows_checked else report["rows"]):
        if ranking_digest(row["page"]) != row["ranking_digest"] or proof_digest(row["page"]) != row["proof_digest"]:
            out.append(f"rows[{i}] query {row['query_id']}, method {row['method']}: stored digests do not match its page")
    for job in report["jobs"]:
        row = rows.get((job["query_id"], job["method"]))
        if row is None:
            out.append(f"jobs[{job['order']}] query {job['query_id']}, method {job['method']}: no row")
        elif (job["ranking_digest"], job["proof_digest"]) != (row["ranking_digest"], row["proof_digest"]):
            out.append(f"jobs[{job['order']}] query {job['query_id']}, method {job['method']}, repetition "
                       f"{job['repetition']}: ranking or proofs differ from the first repetition")
    if report.get("status") == "complete":
        counts: dict[tuple, int] = {}
        for job in report["jobs"]:
            counts[(job["query_id"], job["method"])] = counts.get((job["query_id"], job["method"]), 0) + 1
        for key, n in sorted(counts.items()):
            if n != report["plan"]["repetitions"]:
                out.append(f"query {key[0]}, method {key[1]}: {n} repetitions, plan has {report['plan']['repetitions']}")
    return out
