"""audit: re-verify a private report against its fixture, relations and protocol.

Checks, each reported as `ok <check>` or `FAIL <check> <location>: <what>`:
- inputs: protocol, fixture and relations cross-checked (graph rebuilt from its projection);
- hash_chain: protocol, source, fixture, relations, plan and state digests;
- plan: its digests are the chain's, its jobs are the seeded order, the report ran exactly them;
- fences: plan, state, before, after and every page carry the same fence; store digest unchanged;
- pages: every stored page recomputed independently (scores, contributions, proofs, expansion);
- cross_method: anchors = the seed method's top 4, depth zero = hybrid v2;
- repetitions: every job of a (query, method) repeated the ranking and proofs of the stored page;
- metrics: every per-query metric and every derived block recomputed;
- generation (only with --generation): its digest is the chain's and every embed-plus-HTTP time is
  the query's encode time plus the HTTP time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from evaluator.campaign import plan as plans
from evaluator.reporting.export import derived_failures
from evaluator.inputs import load_frozen
from evaluator.verification.recompute import first_difference
from evaluator.reporting.report import fence_failures, repetition_failures
from evaluator.verification.verify import Checker, cross_method_failures, uses_query_vector
from protocols.canonical import digest
from protocols.errors import RefusedInput
from protocols.files import load_json


@dataclass
class Audit:
    failures: list[tuple[str, str]] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)

    def check(self, name: str, compute: Callable[[], list[str]]) -> None:
        try:
            found = compute()
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, RefusedInput) as exc:
            # a report edited into the wrong shape (or an embedded state that maps two documents to
            # one record) fails the check instead of crashing the audit
            found = [f"malformed report: {type(exc).__name__}: {exc}"]
        if found:
            self.failures.extend((name, f) for f in found)
        else:
            self.passed.append(name)

    @property
    def ok(self) -> bool:
        return not self.failures

    def lines(self) -> list[str]:
        return [f"ok {name}" for name in self.passed] + [f"FAIL {name} {what}" for name, what in self.failures]


def audit(report_path, fixture_path, relations_path, protocol_path, generation_path=None,
          log: Callable[[str], None] = print) -> Audit:
    result = Audit()
    frozen = load_frozen(protocol_path, fixture_path, relations_path, generation_path)
    result.passed.append("inputs")
    report = load_json(report_path, "report")
    result.check("status", lambda: [] if report.get("status") == "complete" else
                 [f"status: {report.get('status')!r} ({(report.get('failure') or {}).get('message')})"])
    result.check("hash_chain", lambda: chain_failures(report, frozen))
    result.check("plan", lambda: plan_failures(report, frozen))
    result.check("fences", lambda: fence_failures(report))
    result.check("pages", lambda: page_failures(report, frozen, Checker(frozen, report["state"])))
    result.check("cross_method", lambda: cross_failures(report, frozen))
    result.check("repetitions", lambda: repetition_failures(report))
    result.check("metrics", lambda: metric_failures(report, frozen))
    if frozen.generation is not None:
        result.check("generation", lambda: generation_failures(report, frozen))
    for line in result.lines():
        log(line)
    return result


def metric_failures(report, frozen) -> list[str]:
    if report.get("status") != "complete":
        return ["status: the metrics of an unfinished report are not audited"]
    return derived_failures(report, frozen.fixture)


def generation_failures(report, frozen) -> list[str]:
    """With generation.json given: its digest is the chain's and every embed+HTTP time adds its encode time."""
    out = []
    if report["hash_chain"].get("generation") != frozen.digests["generation"]:
        out.append("hash_chain.generation: not the digest of the given generation file")
    encode = {q["id"]: q["elapsed_ms"] for q in frozen.generation["queries"]}
    methods = report["protocol"]["methods"]
    for job in report["jobs"]:
        spec = methods[job["method"]]
        added = encode[job["query_id"]] if uses_query_vector(spec) else 0.0
        if job["embed_plus_http_ms"] != added + job["http_ms"]:
            out.append(f"jobs[{job['order']}] query {job['query_id']}, method {job['method']}: embed_plus_http_ms "
                       f"is not encode {added} + HTTP {job['http_ms']}")
    return out


def chain_failures(report, frozen) -> list[str]:
    chain = report.get("hash_chain") or {}
    out = []
    for name in ("protocol", "source", "fixture", "relations"):
        if chain.get(name) != frozen.digests[name]:
            out.append(f"hash_chain.{name}: {chain.get(name)}, the given {name} has {frozen.digests[name]}")
    for name in ("plan", "state", "protocol"):
        if chain.get(name) != digest(report.get(name)):
            out.append(f"hash_chain.{name}: not the digest of the report's embedded {name}")
    state = report.get("state") or {}
    for name in ("protocol", "fixture", "relations"):
        if (state.get("inputs") or {}).get(name) != frozen.digests[name]:
            out.append(f"state.inputs.{name}: the lab was prepared from another {name}")
    return out


def plan_failures(report, frozen) -> list[str]:
    """The plan is the one evaluate pins for these inputs, this lab and the fence before the campaign
    (recomputed whole: digests, split, methods, warm-up query, seeded job order), and it was run."""
    plan = report["plan"]
    out = []
    for name, value in plan["digests"].items():
        if report["hash_chain"].get(name) != value:
            out.append(f"plan.digests.{name}: differs from hash_chain.{name}")
    lab, before = report["lab"], report["before"]
    # without --generation the chain's generation digest stands in (the generation check binds it)
    given = replace(frozen, digests={"generation": report["hash_chain"].get("generation"), **frozen.digests})
    expected = plans.build_plan(given, digest(report["state"]), lab, lab["scope"], before["fence"],
                                before["store_digest"], clients=plan.get("clients", 1))
    for key in sorted(set(plan) | set(expected)):
        if plan.get(key) != expected.get(key):
            out.append(f"plan.{key}: not the plan pinned for these inputs, lab and fence")
    warmup = plan["warmup"]
    if [[w["query_id"], w["method"]] for w in report["warmup"]] != [[warmup["query_id"], m] for m in warmup["methods"]]:
        out.append("warmup: not one search per method with the plan's warm-up query")
    ran = [[j["query_id"], j["method"], j["repetition"]] for j in sorted(report["jobs"], key=lambda j: j["order"])]
    if report.get("status") == "complete" and ran != plan["jobs"]:
        first = first_difference(ran, plan["jobs"])
        out.append(f"jobs[{first}]: the report did not run the plan's jobs in order")
    return out


def page_failures(report, frozen, checker: Checker) -> list[str]:
    out = []
    queries = frozen.queries
    for i, row in enumerate(report["rows"]):
        for failure in checker.check_page(queries[row["query_id"]], row["method"], row["page"], report["plan"]["fence"]):
            out.append(f"rows[{i}] {failure}")
        docs = [checker.doc_of.get(r) for r in row["records"]]
        if docs != row["ranking"]:
            out.append(f"rows[{i}] query {row['query_id']}, method {row['method']}, ranking: document ids are not "
                       f"the prepared documents of its records")
    return out


def cross_failures(report, frozen) -> list[str]:
    pages: dict[str, dict] = {}
    for row in report["rows"]:
        pages.setdefault(row["query_id"], {})[row["method"]] = row["page"]
    out = []
    for query_id in sorted(pages):
        out.extend(str(f) for f in cross_method_failures(query_id, pages[query_id], frozen.protocol["methods"],
                                                         frozen.protocol["ranking_profiles"]))
    return out
