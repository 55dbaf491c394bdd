"""evaluate: run a frozen protocol against a prepared lab, read-only, and write the private report.

Sequence (docs/design.md §8), each step a precondition of the next:
1. refuse an existing report; load and cross-check protocol, fixture, relations (graph rebuilt
   from its projection) and generation; load the state (complete, bound to these inputs);
2. identity equals the state's lab; catalog equals the protocol's frozen ranking_profiles;
3. snapshot: the lab's running digest equals the one recomputed from the frozen inputs and the
   state (evaluator/campaign/snapshot.py); the fence equals the fence the state recorded after
   prepare (nothing was written since);
4. pin the plan (an existing plan must be byte-identical);
5. warm-up: each method once with the smallest development query (validated, not measured);
6. the seeded shuffle of (query, method, repetition) jobs, no retries; each page is validated
   against the independent recomputation; repetitions must repeat ranking and proofs. With
   `clients` = 2 (the lab admits two concurrent retrievals) two clients fetch the jobs in plan
   order from a short shared window, and every result is recorded in plan order (see `Fetcher`),
   so the report holds the same rows and jobs as with one client; only the timings differ;
7. cross-method checks per query (anchors = the seed method's top 4, depth zero = hybrid v2);
8. snapshot again: same fence, same store digest, same content; identity unchanged;
9. derived blocks (metrics, aggregates, latency, statistics), status complete.

Any failure after step 4 saves the report with status "failed", the rows so far and the failure.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from evaluator import plan as plans
from evaluator.campaign.client import LabClient, vector_base64
from evaluator.inputs import Frozen, load_frozen
from evaluator.campaign.monitor import ResourceMonitor
from evaluator.reporting.report import REPORT_FORMAT, derive, row_from_page
from evaluator.reporting.seal import seal_of
from evaluator.reporting.report import document_titles
from evaluator.campaign.snapshot import Snapshots
from evaluator.state import StateError, load_state
from evaluator.verification.routes import VERIFIERS
from evaluator.verification.verify import Checker, cross_method_failures, proof_digest, ranking_digest
from protocols.canonical import digest
from protocols.cli import Progress
from protocols.errors import RefusedInput
from protocols.files import refuse_existing, refuse_same_path, save
from protocols.routes import route_of

SAVE_EVERY_SECONDS = 5.0
# A partial save rewrites the whole report; at full scale (19,000 rows with their pages, ~0.5 GB)
# one save takes seconds, so the interval grows to keep saving under about a tenth of the run.
SAVE_COST_FACTOR = 10.0
MAX_CLIENTS = 2  # the lab answers 503 retrieval_busy beyond two concurrent retrievals (docs/design.md §6)
WINDOW_PER_CLIENT = 4  # jobs fetched ahead of the one being recorded, per client


class CampaignFailed(Exception):
    """A check failed during the campaign; the report was saved with status failed."""


class CatalogMismatch(RefusedInput):
    """The lab's ranking catalog is not the protocol's frozen copy."""


@dataclass
class Paths:
    fixture: Path
    relations: Path
    credential: Path
    state: Path
    protocol: Path
    generation: Path
    plan: Path
    report: Path


def search_body(spec: Mapping, query: Mapping, frozen: Frozen) -> dict:
    """The request of one method for one query, exactly as the protocol fixes it (protocols/routes.py)."""
    return route_of(spec).body(spec, query["question"], lambda: {
        "query_vector": vector_base64(frozen.query_vectors[query["id"]]), "space_id": frozen.space_id})


def check_routes(protocol: Mapping) -> None:
    """Every method must have an independent recomputation here, or its pages could not be checked."""
    for name, spec in sorted(protocol["methods"].items()):
        if spec["route"] not in VERIFIERS:
            raise RefusedInput(f"method {name}: route {spec['route']!r} has no independent verification in this "
                               f"evaluator (verified routes: {', '.join(VERIFIERS)})")


def check_catalog(catalog: Mapping, protocol: Mapping) -> None:
    served = catalog.get("profiles") or {}
    frozen = protocol["ranking_profiles"]
    for name in sorted(set(served) | set(frozen)):
        if name not in served:
            raise CatalogMismatch(f"catalog: profile {name} of the protocol is not served by the lab")
        if name in frozen and digest(served[name]) != digest(frozen[name]):
            keys = sorted(k for k in set(served[name]) | set(frozen[name]) if served[name].get(k) != frozen[name].get(k))
            raise CatalogMismatch(f"catalog: profile {name} differs from the protocol's frozen copy (fields: {', '.join(keys)})")


def load_bound_state(path: Path, frozen: Frozen) -> tuple[dict, str]:
    state = load_state(path)
    if state["status"] != "complete":
        raise StateError(f"state {path} is not complete (status {state['status']}); finish prepare first")
    want = {k: frozen.digests[k] for k in ("protocol", "fixture", "relations")}
    if state["inputs"] != want:
        changed = sorted(k for k in want if state["inputs"].get(k) != want[k])
        raise StateError(f"state {path} was prepared from other inputs ({', '.join(changed)} digest differs)")
    if state["space_id"] != frozen.space_id:
        raise StateError(f"state {path} is bound to another embedding space")
    return state, digest(state)


def server_monitor(server_pid: int, access: Mapping) -> ResourceMonitor:
    """The resource monitor of the lab's own process, refused before anything is written when the
    PID is not the one the lab wrote into its access file (CPU and RSS of another process would be
    reported as the server's)."""
    if access.get("pid") != server_pid:
        raise RefusedInput(f"--server-pid {server_pid} is not the lab's process: its credential file names "
                           f"pid {access.get('pid')}")
    return ResourceMonitor(server_pid)


def evaluate(paths: Paths, access: dict, server_pid: int,
             log: Callable[[str], None] = lambda line: print(line, file=sys.stderr), clients: int = 1) -> dict:
    refuse_same_path(plan=paths.plan, report=paths.report)
    refuse_existing(paths.report)
    if isinstance(clients, bool) or not isinstance(clients, int) or not 1 <= clients <= MAX_CLIENTS:
        raise RefusedInput(f"--clients must be 1 or {MAX_CLIENTS} (the lab admits {MAX_CLIENTS} concurrent "
                           f"retrievals), got {clients!r}")
    monitor = server_monitor(server_pid, access)
    frozen = load_frozen(paths.protocol, paths.fixture, paths.relations, paths.generation)
    check_routes(frozen.protocol)
    state, state_digest = load_bound_state(paths.state, frozen)
    with LabClient(access) as client:
        identity = client.identity()
        lab = {"lab_id": identity["lab_id"], "scope": access["scope"], "journal_id": identity["journal_id"]}
        if lab != state["lab"]:
            raise StateError(f"the credential reaches lab {lab}, the state was prepared in {state['lab']}")
        check_catalog(client.catalog(), frozen.protocol)
        snapshots = Snapshots(frozen, state)
        before = snapshots.take(client)
        if before["fence"] != state["fence"]:
            raise StateError(f"fence {before['fence']} moved since prepare ({state['fence']}): the lab was written to")
        plan = plans.build_plan(frozen, state_digest, identity, access["scope"], before["fence"], before["store_digest"],
                                clients=clients)
        plan_digest = plans.pin(paths.plan, plan)
        log(f"evaluate: plan pinned {paths.plan} ({len(plan['jobs'])} jobs)")
        refuse_existing(paths.report)
        report = new_report(frozen, plan, plan_digest, state, state_digest, lab, before)
        campaign = Campaign(client, frozen, state, plan, report, paths.report, log, Fetcher(access, clients),
                            snapshots)
        with monitor:
            try:
                campaign.run(identity)
            except Exception as exc:  # a check, a lab error, a transport error (lab gone): all end the campaign
                campaign.fail(exc)
            finally:
                monitor.stop()
                report["resources"] = monitor.summary()
        if report["status"] == "failed":
            report["seal"] = seal_of(report)
            save(paths.report, report, compact=True)
            raise CampaignFailed(f"campaign failed: {report['failure']['message']} (report saved as failed: {paths.report})")
        report.update({k: v for k, v in derive(report, frozen.protocol, frozen.queries, document_titles(frozen.source)).items() if k != "row_metrics"})
        report["status"] = "complete"
        report["seal"] = seal_of(report)  # last: it binds every other field, measurements included
        save(paths.report, report, compact=True)
    return report


class CampaignError(Exception):
    """A check that failed during the campaign (page, repetition, fence, snapshot)."""

    def __init__(self, message: str, where: dict | None = None):
        super().__init__(message)
        self.where = where or {}


def new_report(frozen: Frozen, plan: dict, plan_digest: str, state: dict, state_digest: str, lab: dict,
               before: dict) -> dict:
    chain = {**{k: frozen.digests[k] for k in ("protocol", "source", "fixture", "relations", "generation")},
             "plan": plan_digest, "state": state_digest}
    return {
        "format": REPORT_FORMAT,
        "status": "running",
        "protocol_version": frozen.protocol["protocol_version"],
        "hash_chain": chain,
        "lab": lab,
        "space_id": frozen.space_id,
        # the protocol, plan and state themselves, so audit and export need nothing but the report,
        # the fixture and the relations; their digests are in the hash chain
        "protocol": frozen.protocol,
        "plan": plan,
        "state": state,
        "before": before,
        "after": None,
        "warmup": [],
        "rows": [],
        "jobs": [],
        "cross_checks": None,
        "failure": None,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "finished_at": None,
    }


class Fetcher:
    """The searches of the plan's jobs, handed back in plan order.

    One client: each search runs when its job comes up. Two clients: two threads, each with its own
    LabClient (its own connection), take the next job in plan order as soon as they are free, never
    more than WINDOW_PER_CLIENT jobs per client ahead of the job being recorded; the caller records
    each result in plan order, so which client fetched a job changes nothing but its timing. A
    failed search is raised when its turn comes, and the jobs after it are cancelled.
    """

    def __init__(self, access: Mapping, clients: int = 1):
        self.access = access
        self.clients = clients

    def results(self, jobs: list, search: Callable[[LabClient, str, str], tuple], main: LabClient) -> Iterator[tuple]:
        """(order, job, search result) in plan order; `search(client, query_id, method)`."""
        if self.clients == 1:
            for order, job in enumerate(jobs):
                yield order, job, search(main, job[0], job[1])
            return
        local = threading.local()
        opened: list[LabClient] = []
        lock = threading.Lock()

        def fetch(job: list) -> tuple:
            client = getattr(local, "client", None)
            if client is None:
                client = local.client = LabClient(dict(self.access))
                with lock:
                    opened.append(client)
            return search(client, job[0], job[1])

        pending: deque = deque()
        upcoming = iter(enumerate(jobs))
        try:
            with ThreadPoolExecutor(max_workers=self.clients, thread_name_prefix="evaluate-client") as pool:
                try:
                    for order, job in upcoming:
                        pending.append((order, job, pool.submit(fetch, job)))
                        if len(pending) >= WINDOW_PER_CLIENT * self.clients:
                            break
                    while pending:
                        order, job, future = pending.popleft()
                        result = future.result()
                        following = next(upcoming, None)
                        if following is not None:
                            pending.append((*following, pool.submit(fetch, following[1])))
                        yield order, job, result
                finally:
                    for _, _, future in pending:
                        future.cancel()
        finally:
            for client in opened:
                client.close()


class Campaign:
    def __init__(self, client: LabClient, frozen: Frozen, state: dict, plan: dict, report: dict, path: Path, log,
                 fetcher: Fetcher | None = None, snapshots: Snapshots | None = None):
        self.client, self.frozen, self.state, self.plan = client, frozen, state, plan
        self.snapshots = snapshots or Snapshots(frozen, state)
        self.report, self.path, self.log = report, path, log
        self.fetcher = fetcher or Fetcher({}, 1)
        self.checker = Checker(frozen, state)
        self.queries = frozen.queries
        self.methods = frozen.protocol["methods"]
        self.encode_ms = {q["id"]: q["elapsed_ms"] for q in frozen.generation["queries"]}
        self.rows: dict[tuple[str, str], dict] = {}
        self.job: dict | None = None
        self.last_save = time.monotonic()
        self.save_interval = SAVE_EVERY_SECONDS

    def run(self, identity: dict) -> None:
        self.warm_up()
        progress = Progress("evaluate", len(self.plan["jobs"]), unit="jobs")
        # closed on the way out, so a failed check stops the other client before the report is saved
        with closing(self.fetcher.results(self.plan["jobs"], self.fetch, self.client)) as results:
            for order, (query_id, method, repetition), result in results:
                self.job = {"order": order, "query_id": query_id, "method": method, "repetition": repetition}
                self.record_job(order, query_id, method, repetition, result)
                progress.advance()
                if time.monotonic() - self.last_save >= self.save_interval:
                    self.save_partial()
        self.job = None
        self.cross_checks()
        after = self.snapshots.take(self.client)
        self.report["after"] = after
        before = self.report["before"]
        if after["fence"] != before["fence"]:
            raise CampaignError(f"fence moved during the campaign: before {before['fence']}, after {after['fence']}",
                                {"field": "fence"})
        if after["store_digest"] != before["store_digest"] or after["content_digest"] != before["content_digest"]:
            raise CampaignError("lab content changed during the campaign (store digest differs)", {"field": "store_digest"})
        if self.client.identity() != identity:
            raise CampaignError("lab identity changed during the campaign", {"field": "identity"})
        self.report["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def search(self, method: str, query: dict, client: LabClient | None = None):
        spec = self.methods[method]
        return (client or self.client).search(spec["route"], search_body(spec, query, self.frozen))

    def fetch(self, client: LabClient, query_id: str, method: str):
        return self.search(method, self.queries[query_id], client)

    def validate(self, query: dict, method: str, page: dict) -> None:
        failures = self.checker.check_page(query, method, page, self.plan["fence"])
        if failures:
            raise CampaignError(f"page check failed: {failures[0]}" + (f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""),
                                failures[0].as_dict())

    def warm_up(self) -> None:
        query = self.queries[self.plan["warmup"]["query_id"]]
        for method in self.plan["warmup"]["methods"]:
            page, micros, size, seconds = self.search(method, query)
            self.validate(query, method, page)
            self.report["warmup"].append({"query_id": query["id"], "method": method, "retrieval_micros": micros,
                                          "http_ms": seconds * 1000.0, "page_digest": digest(page)})

    def record_job(self, order: int, query_id: str, method: str, repetition: int, result: tuple) -> None:
        query = self.queries[query_id]
        page, micros, size, seconds = result
        rank_digest, prf_digest = ranking_digest(page), proof_digest(page)
        key = (query_id, method)
        if key in self.rows:
            first = self.rows[key]
            if (first["ranking_digest"], first["proof_digest"]) != (rank_digest, prf_digest):
                what = "ranking" if first["ranking_digest"] != rank_digest else "proofs"
                raise CampaignError(f"query {query_id}, method {method}, repetition {repetition}: {what} differ "
                                    f"from the first repetition", {"query": query_id, "method": method, "field": what})
            if page.get("fence") != self.plan["fence"]:
                raise CampaignError(f"query {query_id}, method {method}: fence {page.get('fence')} moved",
                                    {"query": query_id, "method": method, "field": "fence"})
        else:
            self.validate(query, method, page)
            self.rows[key] = row_from_page(query, method, page, self.checker.doc_of, self.frozen.protocol["evaluation"])
            self.report["rows"].append(self.rows[key])
        http_ms = seconds * 1000.0
        spec = self.methods[method]
        encode = self.encode_ms[query_id] if route_of(spec).sends_vector(spec) else 0.0
        self.report["jobs"].append({
            "order": order, "query_id": query_id, "method": method, "repetition": repetition,
            "retrieval_micros": micros, "http_ms": http_ms, "embed_plus_http_ms": encode + http_ms,
            "response_bytes": size, "page_digest": digest(page), "ranking_digest": rank_digest,
            "proof_digest": prf_digest,
        })

    def cross_checks(self) -> None:
        checked = 0
        for query_id in self.plan["queries"]:
            pages = {m: self.rows[(query_id, m)]["page"] for m in self.plan["methods"] if (query_id, m) in self.rows}
            failures = cross_method_failures(query_id, pages, self.methods, self.frozen.protocol["ranking_profiles"])
            if failures:
                raise CampaignError(f"cross-method check failed: {failures[0]}", failures[0].as_dict())
            checked += 1
        self.report["cross_checks"] = {"queries": checked, "anchors_equal_seed_top": True, "depth_zero_equals_base": True}

    def save_partial(self) -> None:
        started = time.monotonic()
        save(self.path, self.report, compact=True)
        self.last_save = time.monotonic()
        self.save_interval = max(SAVE_EVERY_SECONDS, SAVE_COST_FACTOR * (self.last_save - started))

    def fail(self, exc: BaseException) -> None:
        where = getattr(exc, "where", {}) or {}
        self.report["status"] = "failed"
        self.report["failure"] = {"type": type(exc).__name__, "message": str(exc), "where": where, "job": self.job}
        self.report["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.log(f"evaluate: FAILED: {exc}")
