"""audit: re-verify a private report against its fixture, relations and protocol, and optionally
the public report, the state file and the plan file that go with it.

Checks, each reported as `ok <check>` or `FAIL <check> <location>: <what>`:
- inputs: protocol, fixture and relations cross-checked (graph rebuilt from its projection);
- status: the report is complete;
- seal: every top-level field is the value evaluate sealed (measurements included: warm-up and job
  timings, resources, start and finish times), named down to the entry or member;
- hash_chain: protocol, source, fixture, relations, plan and state digests;
- record: the report's own fields that follow from others (format, version, space, lab, counts,
  cross checks, resource summary, times, every job's place in the run);
- plan: its digests are the chain's, its jobs are the seeded order, the report ran exactly them;
- fences: plan, state, before, after and every page carry the same fence; store digest unchanged;
- pages: every stored page recomputed independently (scores, contributions, proofs, expansion), in
  this process or as tasks on a Dask cluster (`cluster`, evaluator/verification/dask_checks.py);
- rows: every field of every row derived again from its page, the query and the state;
- cross_method: anchors = the seed method's top 4, depth zero = hybrid v2;
- base_pools: the reach section's pools recomputed from the frozen inputs (evaluator/audit/reach_audit.py);
- repetitions: every job of a (query, method) repeated the ranking and proofs of the stored page;
- metrics: every per-query metric and every derived block recomputed;
- generation (only with --generation): its digest is the chain's and every embed-plus-HTTP time is
  the query's encode time plus the HTTP time;
- state_file, plan_file (with --state, --plan): the file is the state or plan the report embeds;
- public (with --public): the public report derived again from the private report, whole, and
  every file export wrote beside it (HTML, Markdown, figures, runs, qrels) rendered again and
  compared byte for byte with the file and with the digest the public report records.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from evaluator import plan as plans
from evaluator.audit.reach_audit import base_pool_failures
from evaluator.connection.monitor import combined
from evaluator.derived.reach import kept_profiles
from evaluator.derived.report import (
    REPORT_FORMAT,
    derive,
    differences,
    document_titles,
    fence_failures,
    repetition_failures,
    row_from_page,
)
from evaluator.entity_relations import imported_summary
from evaluator.export.export import derived_block_failures, output_paths, public_outputs
from evaluator.inputs import Frozen, load_frozen
from evaluator.numbers.seal import seal_failures
from evaluator.state import record_map
from evaluator.verification.check_placement import ClusterOptions, check_options
from evaluator.verification.dask_checks import PageChecks, failures_of, page_checks
from evaluator.verification.recompute import first_difference
from evaluator.verification.verify import Checker, cross_method_failures
from evaluator.views import edition
from ground.canonical import digest, sha256_bytes
from ground.errors import RefusedInput
from ground.fast_canonical import digest_finite
from ground.files import load_json
from protocols.routes import route_of

T = TypeVar("T")


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


class Memo:
    """Results of the audit's pure, expensive steps, keyed by the digest of everything they read.

    One audit computes each step once and needs no memo. Auditing many variants of one campaign
    (the mutation test audits a hundred single-field edits) may share one: a step whose inputs a
    variant did not change (same digests) is not recomputed, one whose inputs changed is.
    """

    def __init__(self):
        self.values: dict[tuple[str, str], object] = {}

    def get(self, name: str, key, compute: Callable[[], object]):
        slot = (name, digest(key))
        if slot not in self.values:
            self.values[slot] = compute()
        return self.values[slot]

    def known(self, name: str, key) -> tuple[bool, Any]:
        slot = (name, digest(key))
        return slot in self.values, self.values.get(slot)

    def put(self, name: str, key, value) -> None:
        self.values[(name, digest(key))] = value


class _NoMemo(Memo):
    def get(self, name, key, compute):
        return compute()

    def known(self, name, key):
        return False, None

    def put(self, name, key, value) -> None:
        pass


@dataclass
class Given:
    """What the audit checks besides the report and the frozen inputs, each optional."""
    public: dict | None = None
    public_path: Path | None = None  # export's other files are found beside it
    state: dict | None = None
    state_path: Path | None = None
    plan: dict | None = None
    plan_path: Path | None = None


def audit(report_path, fixture_path, relations_path, protocol_path, generation_path=None, *, public_path=None,
          state_path=None, plan_path=None, log: Callable[[str], None] = print,
          cluster: ClusterOptions = ClusterOptions()) -> Audit:
    frozen = load_frozen(protocol_path, fixture_path, relations_path, generation_path)
    report = load_json(report_path, "report")
    given = Given(public=load_json(public_path, "public report") if public_path else None,
                  public_path=Path(public_path) if public_path else None,
                  state=load_json(state_path, "state file") if state_path else None,
                  state_path=Path(state_path) if state_path else None,
                  plan=load_json(plan_path, "plan file") if plan_path else None,
                  plan_path=Path(plan_path) if plan_path else None)
    return audit_loaded(report, frozen, given, log=log, cluster=cluster)


def audit_loaded(report, frozen: Frozen, given: Given | None = None, *, memo: Memo | None = None,
                 log: Callable[[str], None] = print, cluster: ClusterOptions = ClusterOptions()) -> Audit:
    """The audit of parsed values: `frozen` already loaded and cross-checked (`evaluator.inputs`)."""
    given = given or Given()
    memo = memo or _NoMemo()
    result = Audit()
    result.passed.append("inputs")
    if not isinstance(report, dict):
        result.failures.append(("status", f"report: a JSON object is required, not {type(report).__name__}"))
        return _logged(result, log)
    check_options(cluster)
    with _Context(report, frozen, memo, cluster) as context:
        return _checked(result, report, frozen, given, context, log)


def _checked(result: "Audit", report: dict, frozen: Frozen, given: Given, context: "_Context", log) -> "Audit":
    result.check("status", lambda: [] if report.get("status") == "complete" else
                 [f"status: {report.get('status')!r} ({(report.get('failure') or {}).get('message')})"])
    result.check("seal", lambda: seal_failures(report, {"rows": context.row_digests}))
    result.check("hash_chain", lambda: chain_failures(report, frozen))
    result.check("record", lambda: record_failures(report, frozen))
    result.check("plan", lambda: plan_failures(report, frozen))
    result.check("fences", lambda: fence_failures(report))
    # the workers check the pages while this process derives the rows and the metrics (each
    # result is reported in its place below, whatever order it was computed in)
    started = _ahead(lambda: submit_pages(report, frozen, context))
    rows = _ahead(lambda: row_failures(report, frozen, context))
    metrics = _ahead(lambda: metric_failures(report, frozen, context))
    result.check("pages", lambda: started() or page_failures(report, frozen, context))
    result.check("rows", rows)
    result.check("cross_method", lambda: cross_failures(report, frozen))
    result.check("base_pools", lambda: base_pool_failures(report, context.check_pools, context.doc_of()))  # the reach section's
    context.close()  # the checks' workers and their memory are not needed past the pools
    result.check("repetitions", lambda: repetition_failures(report, rows_checked=True))
    result.check("metrics", metrics)
    if frozen.generation is not None:
        result.check("generation", lambda: generation_failures(report, frozen))
    if given.state is not None:
        result.check("state_file", lambda: file_failures(report, "state", given.state, given.state_path))
    if given.plan is not None:
        result.check("plan_file", lambda: file_failures(report, "plan", given.plan, given.plan_path))
    if given.public is not None:
        result.check("public", lambda: public_failures(report, frozen, given, context))
    return _logged(result, log)


def _ahead(compute: Callable[[], T]) -> Callable[[], T]:
    """`compute` run now; the returned function gives its result, or raises what it raised, when
    `Audit.check` asks (so an audit computes in the order that overlaps best and reports in its own)."""
    try:
        value = compute()
    except Exception as exc:  # noqa: BLE001 - re-raised where the check is reported, as if run there
        error = exc  # `exc` itself is unbound when the except block ends

        def again():
            raise error
        return again
    return lambda: value


def _logged(result: Audit, log) -> Audit:
    for line in result.lines():
        log(line)
    return result


class _Context:
    """Per-audit shared work: the digest of each row (the seal's entries) keys the memo of the
    page checks and of the derived blocks, so the rows are serialized once."""

    def __init__(self, report: dict, frozen: Frozen, memo: Memo, cluster: ClusterOptions = ClusterOptions()):
        self.report, self.frozen, self.memo, self.cluster = report, frozen, memo, cluster
        self._row_digests: list[str] | None = None
        self._checks: PageChecks | None = None
        self.pages: tuple[list, dict[int, list[str]], list[int], Any] | None = None  # submit_pages: (keys, known failures, rows to check, pending)

    @property
    def row_digests(self) -> list[str]:
        if self._row_digests is None:
            rows = self.report.get("rows")
            self._row_digests = [digest_finite(r) for r in rows] if isinstance(rows, list) else []  # as seal_of
        return self._row_digests

    def checker(self) -> Checker:
        state = self.report["state"]
        key = [self.frozen.digests, digest(state)]
        return self.memo.get("checker", key, lambda: Checker(self.frozen, state, keep=kept_profiles(self.frozen.protocol)))

    def checks(self) -> PageChecks:
        """The page checks (in this process or on the cluster), opened once for the pages and the
        base pools: a pool is checked where its query's pages were, reusing their fused lists."""
        if self._checks is None:
            rows = self.report.get("rows")
            self._checks = page_checks(self.frozen, self.report["state"], self.cluster,
                                       len(rows) if isinstance(rows, list) else 0, checker=self.checker,
                                       keep=kept_profiles(self.frozen.protocol), whole_queries=True)
        return self._checks

    def check_pools(self, items: Sequence[tuple]) -> list:
        return self.checks().check_pools(items)

    def doc_of(self) -> dict[str, str]:
        return record_map(self.report["state"])[1]

    def __enter__(self) -> "_Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._checks is not None:
            self._checks.close()
            self._checks = None

    def derived(self) -> dict:
        report = self.report
        key = [self.row_digests, digest(report["jobs"]), digest(report["plan"]), digest(report["protocol"]),
               self.frozen.digests]
        # the titles place HotpotQA and 2Wiki queries in clusters (supporting-title rule), as evaluate and export do
        return self.memo.get("derive", key, lambda: derive(report, report["protocol"], self.frozen.queries,
                                                          document_titles(self.frozen.source)))


def metric_failures(report, frozen, context: _Context) -> list[str]:
    if report.get("status") != "complete":
        return ["status: the metrics of an unfinished report are not audited"]
    # each row's digests, records, scores and ranking are the rows and pages checks' (derived again
    # from the page, whose payloads the page check binds to the fixture); here: what follows from rows
    return derived_block_failures(report, frozen.fixture, context.derived())


def generation_failures(report, frozen) -> list[str]:
    """With generation.json given: its digest is the chain's and every embed+HTTP time adds its encode time."""
    out = []
    if report["hash_chain"].get("generation") != frozen.digests["generation"]:
        out.append("hash_chain.generation: not the digest of the given generation file")
    encode = {q["id"]: q["elapsed_ms"] for q in frozen.generation["queries"]}
    methods = report["protocol"]["methods"]
    for job in report["jobs"]:
        spec = methods[job["method"]]
        added = encode[job["query_id"]] if route_of(spec).sends_vector(spec) else 0.0
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
    if report.get("imported_graph") != imported_summary(frozen.relations):
        out.append("imported_graph: not the imported graph's provenance and counts in the given relations")
    claimed = report.get("protocol_frozen")  # absent from reports written before runs said it
    if claimed is not None and claimed.get("digest") != chain.get("protocol"):
        out.append("protocol_frozen.digest: not the digest of the report's protocol")
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


def submit_pages(report, frozen, context: _Context) -> None:
    """Sends the page checks the memo does not already hold to the workers (or runs them here, in
    process); `page_failures` reads them. Started before the rows and metrics are derived, which
    then run in this process while the workers check."""
    fence = report["plan"]["fence"]
    state_digest = digest(report["state"])
    keys = [[context.row_digests[i], fence, frozen.digests, state_digest] for i in range(len(report["rows"]))]
    found: dict[int, list[str]] = {}
    for i, key in enumerate(keys):
        known, value = context.memo.known("page", key)
        if known:
            found[i] = value
    todo = [i for i in range(len(keys)) if i not in found]
    pending = None
    if todo:
        rows = report["rows"]
        queries = frozen.queries
        for i in todo:  # a row whose query is not the fixture's fails here, as a malformed report
            queries[rows[i]["query_id"]]
        pending = context.checks().submit_all([(rows[i]["query_id"], rows[i]["method"], rows[i]["page"], fence)
                                               for i in todo])
    context.pages = (keys, found, todo, pending)


def page_failures(report, frozen, context: _Context) -> list[str]:
    if context.pages is None:
        submit_pages(report, frozen, context)
    assert context.pages is not None, "submit_pages sets them"
    keys, found, todo, pending = context.pages
    if pending is not None:
        for i, failures in zip(todo, pending.result()):
            found[i] = [str(f) for f in failures_of(failures)]
            context.memo.put("page", keys[i], found[i])
    out: list[str] = []
    for i in range(len(keys)):
        out.extend(f"rows[{i}] {failure}" for failure in found[i])
    return out


def _row_differences(row, queries, doc_of, evaluation) -> list[str]:
    query = queries.get(row["query_id"])
    if query is None:
        return [".query_id: not a query of the fixture"]
    try:
        expected = row_from_page(query, row["method"], row["page"], doc_of, evaluation)
    except KeyError as exc:
        return [f".records: record {exc} is not a prepared document of the state"]
    return [f".{diff}" for diff in differences(row, expected)]


def row_failures(report, frozen, context: _Context) -> list[str]:
    """Every field of every row is what evaluate derives from its page, the fixture's query and the
    state's record map; rows are in the order their (query, method) first ran."""
    _, doc_of = record_map(report["state"])
    evaluation = report["protocol"]["evaluation"]
    queries = frozen.queries
    context_key = [frozen.digests, digest(report["state"]), digest(evaluation)]
    out: list[str] = []
    for i, row in enumerate(report["rows"]):
        where = f"rows[{i}] (query {row.get('query_id')}, method {row.get('method')})"
        found = context.memo.get("row", [context.row_digests[i], *context_key],
                                 partial(_row_differences, row, queries, doc_of, evaluation))
        out.extend(f"{where}{diff}" for diff in found)
    first_run = list(dict.fromkeys((j["query_id"], j["method"]) for j in sorted(report["jobs"], key=lambda j: j["order"])))
    in_rows = [(r["query_id"], r["method"]) for r in report["rows"]]
    if report.get("status") == "complete" and in_rows != first_run:
        out.append(f"rows[{first_difference(in_rows, first_run)}]: rows are not in the order their jobs first ran")
    return out


TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
RESOURCE_SUMMARY = {
    "samples": lambda series: len(series),
    "wall_seconds": lambda series: series[-1][0] - series[0][0],
    "cpu_seconds": lambda series: series[-1][1] - series[0][1],
    "rss_bytes_max": lambda series: max(s[2] for s in series),
    "rss_bytes_first": lambda series: series[0][2],
    "rss_bytes_last": lambda series: series[-1][2],
}


def record_failures(report, frozen) -> list[str]:
    """The report's fields that follow from its other fields or from the frozen inputs. What is
    measured and follows from nothing (a timing, a sample) is bound by the seal instead."""
    out = []
    state = report["state"]
    if report.get("format") != REPORT_FORMAT:
        out.append(f"format: {report.get('format')!r} is not {REPORT_FORMAT}")
    if report.get("protocol_version") != frozen.protocol["protocol_version"]:
        out.append(f"protocol_version: {report.get('protocol_version')!r} is not the protocol's")
    if report.get("space_id") != frozen.space_id:
        out.append("space_id: not the fixture's embedding space")
    if report.get("lab") != state.get("lab"):
        out.append("lab: not the lab the state was prepared in")
    complete = report.get("status") == "complete"
    if complete and report.get("failure") is not None:
        out.append("failure: a complete report records no failure")
    if complete and report.get("cross_checks") != {"queries": len(report["plan"]["queries"]),
                                                   "anchors_equal_seed_top": True, "depth_zero_equals_base": True}:
        out.append("cross_checks: not one cross-method check per planned query")
    counts = {"memories": len(state["memories"]), "bindings": len(state["bindings"]), "relations": len(state["relations"])}
    for when in ("before", "after"):
        snapshot = report.get(when) or {}
        if (complete or when == "before") and snapshot.get("counts") != counts:
            out.append(f"{when}.counts: {snapshot.get('counts')}, the state prepared {counts}")
    started, finished = report.get("started_at"), report.get("finished_at")
    if not isinstance(started, str) or not TIME.fullmatch(started):
        out.append(f"started_at: {started!r} is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)")
    elif complete and (not isinstance(finished, str) or not TIME.fullmatch(finished) or finished < started):
        out.append(f"finished_at: {finished!r} is not a UTC time at or after started_at")
    out.extend(resource_failures(report.get("resources")))
    out.extend(timing_failures(report))
    return out


def resource_failures(resources) -> list[str]:
    """The resource summary is the summary of its own series of samples; over several server
    processes (a resumed campaign), each process's part of the series is its own summary's, and the
    whole is their combination (evaluator/connection/monitor.py `combined`)."""
    if not isinstance(resources, Mapping):
        return ["resources: missing"]
    each = resources.get("each")
    if each is not None:
        return _processes_failures(resources, each)
    return _series_failures(resources, resources.get("series"), "resources")


def _series_failures(summary: Mapping, series, where: str) -> list[str]:
    if not series:
        return [] if summary.get("samples") == 0 else [f"{where}.series: no samples for a summary"]
    out = []
    for name, derive_value in RESOURCE_SUMMARY.items():
        if summary.get(name) != derive_value(series):
            out.append(f"{where}.{name}: {summary.get(name)!r}, its series gives {derive_value(series)!r}")
    if [s[0] for s in series] != sorted(s[0] for s in series):
        out.append(f"{where}.series: sample times are not in order")
    return out


def _processes_failures(resources: Mapping, each) -> list[str]:
    series, out, parts, at = resources.get("series") or [], [], [], 0
    for i, one in enumerate(each):
        part = series[at:at + one.get("samples", 0)]
        at += len(part)
        out += _series_failures(one, part, f"resources.each[{i}]")
        parts.append({**one, "series": part})
    if at != len(series):
        out.append(f"resources.series: {len(series)} samples, its processes count {at}")
    again = combined(parts)
    if not out and again != resources:
        out += [f"resources.{k}: {resources.get(k)!r}, its processes give {again.get(k)!r}"
                for k in sorted(set(again) | set(resources)) if again.get(k) != resources.get(k)][:5]
    return out


WARMUP_KEYS = {"query_id", "method", "retrieval_micros", "http_ms", "page_digest"}
JOB_KEYS = {"order", "query_id", "method", "repetition", "retrieval_micros", "http_ms", "embed_plus_http_ms",
            "response_bytes", "page_digest", "ranking_digest", "proof_digest"}


def timing_failures(report) -> list[str]:
    """Warm-up entries and jobs: their fields, their numbering, the server's retrieval time inside
    the client's HTTP time, and each (query, method)'s first job returning the row's stored page."""
    out = []
    for i, entry in enumerate(report["warmup"]):
        where = f"warmup[{i}] (method {entry.get('method')})"
        if set(entry) != WARMUP_KEYS:
            out.append(f"{where}: fields {sorted(entry)}, expected {sorted(WARMUP_KEYS)}")
        elif not 0 <= entry["retrieval_micros"] / 1000.0 <= entry["http_ms"]:
            out.append(f"{where}.retrieval_micros: {entry['retrieval_micros']} µs is not within its HTTP time "
                       f"{entry['http_ms']} ms")
    rows = {(r["query_id"], r["method"]): r for r in report["rows"]}
    seen: set = set()
    for i, job in enumerate(report["jobs"]):
        where = f"jobs[{i}] (query {job.get('query_id')}, method {job.get('method')}, repetition {job.get('repetition')})"
        if set(job) != JOB_KEYS:
            out.append(f"{where}: fields {sorted(job)}, expected {sorted(JOB_KEYS)}")
            continue
        if job["order"] != i:
            out.append(f"{where}.order: {job['order']}, the job's place in the run is {i}")
        if not 0 <= job["retrieval_micros"] / 1000.0 <= job["http_ms"] <= job["embed_plus_http_ms"]:
            out.append(f"{where}: retrieval {job['retrieval_micros']} µs, HTTP {job['http_ms']} ms and embed+HTTP "
                       f"{job['embed_plus_http_ms']} ms are not nested")
        key = (job["query_id"], job["method"])
        if key not in seen and key in rows and job["page_digest"] != rows[key]["page_digest"]:
            out.append(f"{where}.page_digest: the first run of the pair is the row's stored page, with another digest")
        seen.add(key)
    return out


def file_failures(report, name: str, value, path: Path | None) -> list[str]:
    """A state or plan file given beside the report is the one the report embeds (and chains)."""
    label = f"{name} file {path}" if path else f"{name} file"
    out = [f"{label}: {diff}" for diff in differences(value, report[name])]
    if digest(value) != report["hash_chain"].get(name):
        out.append(f"{label}: its digest is not hash_chain.{name}")
    return out


def _box_knows_limits(public: Mapping) -> bool:
    box = (public.get("glance") or {}).get("answer")
    return not isinstance(box, Mapping) or "smallest_p" in box


def public_failures(report, frozen, given: Given, context: _Context) -> list[str]:
    """The public report derived again from the private report and compared whole, then every file
    export wrote beside it rendered again and compared byte for byte."""
    if report.get("status") != "complete":
        return ["status: an unfinished report has no public report"]
    path = given.public_path or Path("public.json")
    paths = output_paths(path)
    # a public report exported before reports carried their board is derived without one
    # (and one whose answer box predates the smallest reachable p, with the rule of its day)
    board = not isinstance(given.public, Mapping) or "leaderboard" in given.public
    limits = not isinstance(given.public, Mapping) or _box_knows_limits(given.public)
    plain = not isinstance(given.public, Mapping) or "does" in (given.public.get("about") or {"does": 1})
    # truncation counts come from the generation file the chain binds; a public report exported
    # without it has none, one with them needs it given (--generation, or beside it in --run-dir)
    counted = isinstance(given.public, Mapping) and "encoder" in given.public
    if counted and frozen.generation is None:
        return [f"{path.name} encoder: its truncation counts need the generation file (give --generation)"]
    generation = frozen.generation if counted else None
    # the rendering its pages were drawn with (evaluator/views/edition.py)
    drawn = edition.edition(given.public) if isinstance(given.public, Mapping) else edition.CURRENT
    key = [digest(report), frozen.digests["fixture"], {k: str(v) for k, v in paths.items()}, board, limits, plain,
           counted, drawn]
    expected, files = context.memo.get("public", key, lambda: public_outputs(
        report, frozen.fixture, paths, leaderboard=board, limits=limits, plain=plain, generation=generation,
        view_edition=drawn))
    out = [f"{path.name} {diff}" for diff in differences(given.public, expected)]
    if given.public_path is None:
        return out
    base = path.parent
    for file, data in sorted(files.items()):
        name = file.relative_to(base)
        if not file.is_file():
            out.append(f"{name}: missing beside {path.name}")
        elif sha256_bytes(file.read_bytes()) != sha256_bytes(data):
            out.append(f"{name}: not the file export renders from this report (its digest in {path.name} "
                       f"outputs is {sha256_bytes(data)})")
    for directory in (paths["runs"], paths["figures"]):
        if directory.is_dir():
            extra = sorted(p.name for p in directory.iterdir() if p not in files)
            if extra:
                out.append(f"{directory.name}: files export did not write: {', '.join(extra)}")
    return out


def cross_failures(report, frozen) -> list[str]:
    pages: dict[str, dict] = {}
    for row in report["rows"]:
        pages.setdefault(row["query_id"], {})[row["method"]] = row["page"]
    out: list[str] = []
    for query_id in sorted(pages):
        out.extend(str(f) for f in cross_method_failures(query_id, pages[query_id], frozen.protocol["methods"],
                                                         frozen.protocol["ranking_profiles"]))
    return out
