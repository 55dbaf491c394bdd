"""evaluate: run a frozen protocol against a prepared lab, read-only, and write the private report.

Sequence (docs/design.md §8), each step a precondition of the next:
1. refuse an existing report; load and cross-check protocol, fixture, relations (graph rebuilt
   from its projection) and generation; load the state (complete, bound to these inputs);
2. identity equals the state's lab; catalog equals the protocol's frozen ranking_profiles;
3. snapshot: the lab's running digest equals the one recomputed from the frozen inputs and the
   state (evaluator/evaluate/snapshot.py); the fence equals the fence the state recorded after
   prepare (nothing was written since);
4. pin the plan (an existing plan must be byte-identical);
5. warm-up: each method once with the smallest development query (validated, not measured);
6. the seeded shuffle of (query, method, repetition) jobs, no retries; each page is validated
   against the independent recomputation; repetitions must repeat ranking and proofs. With
   `clients` = 2 (the lab admits two concurrent retrievals) two clients fetch the jobs in plan
   order from a short shared window, and every result is recorded in plan order (see `Fetcher`),
   so the report holds the same rows and jobs as with one client; only the timings differ. The
   page checks run in this process or as tasks on a Dask cluster (evaluator/verification/dask_checks.py);
   a job is recorded once its check has passed, in plan order whatever order the checks finish in,
   so the report is the same for any number of workers. Each recorded job is appended to the
   journal beside the report (evaluator/evaluate/journal.py);
7. cross-method checks per query (anchors = the seed method's top 4, depth zero = hybrid v2);
8. snapshot again: same fence, same store digest, same content; identity unchanged;
9. derived blocks (metrics, aggregates, latency, statistics), status complete.

Any failure after step 4 saves the report with status "failed", the rows so far and the failure.

Resume (`resume=True`, `lab evaluate --resume`): an interrupted campaign (its report "running" or
"failed", its journal beside it) continues where its journal ends. Steps 1-4 run again and must
find the recorded campaign: same inputs, lab, catalog and plan, and the store the report recorded
before its first job (`check_store_unchanged`). Every recorded job is checked again (each row's
page recomputed, each row derived again from its page, each repetition against its first) before
the remaining jobs run; the finished report is the one an uninterrupted campaign writes, its
timings aside.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator import plan as plans
from evaluator.connection.client import LabClient, vector_base64
from evaluator.connection.monitor import ResourceMonitor, combined
from evaluator.derived.reach import base_spec, kept_profiles
from evaluator.derived.report import REPORT_FORMAT, derive, document_titles, row_from_page
from evaluator.entity_relations import imported_summary
from evaluator.evaluate import server_processes as servers
from evaluator.evaluate.base_pool import BasePoolError, check_base_pools
from evaluator.evaluate.journal import Journal, ReportLock, journal_path, read_journal
from evaluator.evaluate.snapshot import Snapshots
from evaluator.inputs import Frozen, load_frozen
from evaluator.numbers.seal import seal_of
from evaluator.state import State, StateError, load_state, record_map
from evaluator.verification.check_placement import ClusterOptions, check_options
from evaluator.verification.dask_checks import PageChecks, failures_of, page_checks
from evaluator.verification.routes import VERIFIERS
from evaluator.verification.verify import cross_method_failures, proof_digest, ranking_digest
from ground.canonical import digest
from ground.command import Progress
from ground.errors import RefusedInput
from ground.fast_canonical import digest_finite
from ground.files import load_json, refuse_existing, refuse_same_path, save
from protocols import locks
from protocols.route import Route
from protocols.routes import route_of

MAX_CLIENTS = 2  # the lab answers 503 retrieval_busy beyond two concurrent retrievals (docs/design.md §6)
WINDOW_PER_CLIENT = 4  # jobs fetched ahead of the one being recorded, per client
CHECK_WINDOW = 64  # jobs fetched and waiting for their page check (on a cluster) before the oldest is recorded
MEASURED = ("retrieval_micros", "http_ms", "embed_plus_http_ms", "response_bytes")  # a job's timings and size
# what a report records once, at the start, and a resumed campaign must find unchanged
REPORT_HEAD = ("format", "protocol_version", "hash_chain", "lab", "space_id", "protocol", "plan", "state")


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
    """The request of one method for one query, exactly as the protocol fixes it (protocols/route.py)."""
    route = route_of(spec)
    profile = frozen.protocol["ranking_profiles"][spec["profile"]]
    return route.body(spec, query["question"], lambda: {
        "query_vector": vector_base64(frozen.query_vectors[query["id"]]), "space_id": frozen.space_id},
        lambda: frozen.query_entities(query["id"]),
        lambda: entity_vectors(route, profile, query, frozen))


def entity_vectors(route: Route, profile: Mapping, query: Mapping, frozen: Frozen) -> list[dict]:
    """The question's entity phrases with their vectors, as the route's family section holds them."""
    if route.data is None or route.data.section is None:
        raise ValueError(f"{route.family} sends entity vectors but declares no data section")
    return [{"phrase": one, "vector": vector_base64(vector)}
            for one, vector in frozen.entity_phrases(route.data.section, query["id"], route.entity_limit(profile))]


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


def load_bound_state(path: Path, frozen: Frozen) -> tuple[State, str]:
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


def check_store_unchanged(recorded: Mapping, now: Mapping) -> str | None:
    """What differs between two snapshots of the lab (the one a report recorded before its first job
    and a later one: after the last job, or at a resume), or None. The one place that decides
    whether the store a campaign measured is still the store it recorded."""
    if now["fence"] != recorded["fence"]:
        return f"fence moved: recorded {recorded['fence']}, now {now['fence']}"
    if now["store_digest"] != recorded["store_digest"] or now["content_digest"] != recorded["content_digest"]:
        return "lab content changed (store digest differs)"
    return None


def evaluate_cluster(options: ClusterOptions) -> ClusterOptions:
    """Where evaluate's page checks run when neither --workers nor --scheduler says: in this
    process. The lab listens on loopback only, so it always shares this machine's cores with the
    evaluator and any local worker; measured per job on the 300-question twin (2 cores, docs/scale.md,
    "Evaluate: CPU per job"), two local workers cost 13.4 ms of CPU across evaluator, workers and lab
    against 8.3 ms with the checks in process: the cluster's scheduler, task traffic and copies of
    the pages cost more than the checks they move. Audit, which has no lab beside it, keeps the
    one-worker-per-core default."""
    if options.workers is None and options.scheduler is None:
        return ClusterOptions(workers=0)
    return options


def evaluate(paths: Paths, access: dict, server_pid: int,
             log: Callable[[str], None] = lambda line: print(line, file=sys.stderr), clients: int = 1,
             cluster: ClusterOptions = ClusterOptions(), resume: bool = False, way_on: str = "") -> dict:
    """Run the campaign into `paths.report`; `way_on` is the command that continues a failed
    campaign, as the caller would have it typed (said in the failure)."""
    refuse_same_path(plan=paths.plan, report=paths.report)
    if not resume:
        refuse_existing(paths.report, journal_path(paths.report))
    if isinstance(clients, bool) or not isinstance(clients, int) or not 1 <= clients <= MAX_CLIENTS:
        raise RefusedInput(f"--clients must be 1 or {MAX_CLIENTS} (the lab admits {MAX_CLIENTS} concurrent "
                           f"retrievals), got {clients!r}")
    check_options(cluster)
    cluster = evaluate_cluster(cluster)
    monitor = server_monitor(server_pid, access)
    servers_file = servers.servers_path(paths.report)  # each lab process's summary, resumes included
    frozen = load_frozen(paths.protocol, paths.fixture, paths.relations, paths.generation)
    check_routes(frozen.protocol)
    state, state_digest = load_bound_state(paths.state, frozen)
    with LabClient(access) as client, ReportLock(paths.report):
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
        # the checks' cluster (if any) is up before anything is written: one that cannot start writes nothing
        checks = page_checks(frozen, state, cluster, len(plan["queries"]) * len(plan["methods"]),
                             log=lambda line: log(f"evaluate: {line}"), directory=Path(paths.report).parent,
                             keep=kept_profiles(frozen.protocol))
        with checks:
            recorded = None
            if resume:
                report, journal, recorded = resumed_report(paths, frozen, plan, state, state_digest, lab, before, log)
            else:
                plan_digest = plans.pin(paths.plan, plan)
                log(f"evaluate: plan pinned {paths.plan} ({len(plan['jobs'])} jobs)")
                servers_file.unlink(missing_ok=True)  # left by a campaign no report holds
                refuse_existing(paths.report)
                report = new_report(frozen, plan, plan_digest, state, state_digest, lab, before)
                # whether the protocol was frozen when the campaign ran (its lock beside it, or the lab's own)
                report["protocol_frozen"] = locks.status(paths.protocol, frozen.protocol).record(frozen.protocol)
                save(paths.report, report, compact=True)  # the running report a resume starts from
                journal = Journal.create(journal_path(paths.report), journal_header(report))
            campaign = Campaign(client, frozen, state, plan, report, paths.report, log, Fetcher(access, clients),
                                checks, journal, snapshots)
            with monitor:
                try:
                    if recorded is not None:
                        campaign.recheck(recorded)
                    campaign.run(identity)
                except Exception as exc:  # a check, a lab error, a transport error (lab gone): all end the campaign
                    campaign.fail(exc)
                finally:
                    journal.close()
                    monitor.stop()
                    servers.record(servers_file, monitor.summary())
                    report["resources"] = combined(servers.recorded(servers_file))
        if report["status"] == "failed":
            report["seal"] = seal_of(report)
            save(paths.report, report, compact=True)
            raise CampaignFailed(f"campaign failed: {report['failure']['message']} (report saved as failed: {paths.report}"
                                 + (f"; once the cause is fixed, `{way_on}` continues it)" if way_on else ")"))
        report.update({k: v for k, v in derive(report, frozen.protocol, frozen.queries, document_titles(frozen.source)).items() if k != "row_metrics"})
        report["status"] = "complete"
        report["seal"] = seal_of(report)  # last: it binds every other field, measurements included
        save(paths.report, report, compact=True)
        journal.path.unlink()  # the complete report holds every job: the journal has served
        servers_file.unlink(missing_ok=True)  # and `resources` every server process
    return report


def journal_header(report: Mapping) -> dict:
    return {"plan": report["hash_chain"]["plan"], "started_at": report["started_at"]}


def resumed_report(paths: Paths, frozen: Frozen, plan: dict, state: Mapping, state_digest: str, lab: dict,
                   before: dict, log) -> tuple[dict, Journal, list[tuple[dict, dict | None]]]:
    """The interrupted campaign's report (its jobs and rows emptied), the journal to append to and
    the (job, row or None) its journal recorded, to be checked again and recorded again in order;
    refused unless inputs, lab, plan and store are the ones the report recorded."""
    if not paths.report.exists():
        raise RefusedInput(f"--resume: no report {paths.report} to resume")
    report = load_json(paths.report, "report")
    if not isinstance(report, dict) or report.get("status") not in ("running", "failed"):
        status = report.get("status") if isinstance(report, dict) else None
        raise RefusedInput(f"--resume: report {paths.report} has status {status!r}; only a running (interrupted) or "
                           f"failed campaign is resumed")
    plan_digest = plans.pin(paths.plan, plan)  # the plan file must be the one pinned for this lab and store
    expected = new_report(frozen, plan, plan_digest, state, state_digest, lab, before)
    differing = [key for key in REPORT_HEAD if report.get(key) != expected[key]]
    if differing:
        raise RefusedInput(f"--resume: report {paths.report} was not run on these inputs, lab and plan "
                           f"(differs: {', '.join(differing)})")
    changed = check_store_unchanged(report["before"], before)
    if changed:
        raise RefusedInput(f"--resume: the lab is not the store the campaign recorded: {changed}")
    if not journal_path(paths.report).exists() and not report.get("jobs"):
        # stopped between writing the running report and its journal: nothing was recorded
        Journal.create(journal_path(paths.report), journal_header(report)).close()
    jobs, rows, valid = read_journal(journal_path(paths.report), journal_header(report))
    if len(jobs) < len(report.get("jobs") or []):
        raise RefusedInput(f"--resume: the journal holds {len(jobs)} jobs, fewer than the report's {len(report['jobs'])}")
    for key in ("resources", "seal"):
        report.pop(key, None)
    report.update({"status": "running", "after": None, "cross_checks": None, "failure": None, "finished_at": None,
                   "jobs": [], "rows": []})
    report["resumed"] = [*report.get("resumed", []), {"after_jobs": len(jobs),
                                                      "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]
    log(f"evaluate: resuming {paths.report} after {len(jobs)} of {len(plan['jobs'])} recorded jobs")
    return report, Journal.reopen(journal_path(paths.report), valid, len(jobs)), list(zip(jobs, rows))


class CampaignError(Exception):
    """A check that failed during the campaign (page, repetition, fence, snapshot)."""

    def __init__(self, message: str, where: dict | None = None):
        super().__init__(message)
        self.where = where or {}


def new_report(frozen: Frozen, plan: dict, plan_digest: str, state: Mapping, state_digest: str, lab: dict,
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
        # an imported graph's provenance and counts (docs/graph-import.md); absent for the lab's own graphs
        **({"imported_graph": summary} if (summary := imported_summary(frozen.relations)) is not None else {}),
    }


class Fetcher:
    """The searches of the plan's jobs, handed back in plan order.

    One client: each search runs when its job comes up. Two clients: two threads, each with its own
    LabClient (its own connection), take the next job in plan order as soon as they are free, never
    more than WINDOW_PER_CLIENT jobs per client ahead of the job being recorded; the caller records
    each result in plan order, so which client fetched a job changes nothing but its timing. A
    failed search is raised when its turn comes, and the jobs after it are cancelled. `ahead`: one
    client also searches from a thread of its own, ahead of the caller (the untimed base pools,
    whose checks then overlap the lab's work).
    """

    def __init__(self, access: Mapping, clients: int = 1):
        self.access = access
        self.clients = clients

    def results(self, jobs: list, search: Callable[[LabClient, str, str], Any], main: LabClient,
                start: int = 0, ahead: bool = False) -> Generator[tuple, None, None]:
        """(order, job, search result) in plan order from job `start`; `search(client, query_id, method)`."""
        if self.clients == 1 and not ahead:
            for order, job in enumerate(jobs[start:], start=start):
                yield order, job, search(main, job[0], job[1])
            return
        local = threading.local()
        opened: list[LabClient] = []
        lock = threading.Lock()

        def fetch(job: list) -> tuple:
            if self.clients == 1:  # the one thread of the pool is then the only user of `main`
                return search(main, job[0], job[1])
            client = getattr(local, "client", None)
            if client is None:
                client = local.client = LabClient(dict(self.access))
                with lock:
                    opened.append(client)
            return search(client, job[0], job[1])

        pending: deque = deque()
        upcoming = iter(enumerate(jobs[start:], start=start))
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
    def __init__(self, client: LabClient, frozen: Frozen, state: Mapping, plan: dict, report: dict, path: Path, log,
                 fetcher: Fetcher, checks: PageChecks, journal: Journal | None = None,
                 snapshots: Snapshots | None = None):
        self.client, self.frozen, self.state, self.plan = client, frozen, state, plan
        self.snapshots = snapshots or Snapshots(frozen, state)
        self.report, self.path, self.log = report, path, log
        self.fetcher = fetcher
        if frozen.generation is None:
            raise ValueError("a campaign reads each query's encode time: its frozen inputs hold no generation record")
        self.checks = checks
        self.journal = journal
        self.doc_of = record_map(state)[1]
        self.queries = frozen.queries
        self.methods = frozen.protocol["methods"]
        self.encode_ms = {q["id"]: q["elapsed_ms"] for q in frozen.generation["queries"]}
        self.rows: dict[tuple[str, str], dict] = {}
        self.submitted: set[tuple[str, str]] = set()  # (query, method) pairs whose first page went to its check
        self.job: dict | None = None

    def run(self, identity: dict) -> None:
        if len(self.report["warmup"]) != len(self.plan["warmup"]["methods"]):
            self.report["warmup"] = []  # an interrupted warm-up runs again whole
            self.warm_up()
        jobs = self.plan["jobs"]
        start = len(self.report["jobs"])
        progress = Progress("evaluate", len(jobs) - start, unit="jobs")
        pending: deque = deque()  # fetched jobs in plan order, each with its page check (None: a repetition)
        # closed on the way out, so a failed check stops the other client before the report is saved
        with closing(self.fetcher.results(jobs, self.fetch, self.client, start)) as results:
            for order, (query_id, method, repetition), result in results:
                check = None
                if (query_id, method) not in self.submitted:
                    self.submitted.add((query_id, method))
                    check = self.checks.submit(query_id, method, result[0], self.plan["fence"])
                pending.append((order, query_id, method, repetition, result, check))
                while pending and (len(pending) >= CHECK_WINDOW or pending[0][5] is None or pending[0][5].done()):
                    self.record(*pending.popleft())
                    progress.advance()
            while pending:
                self.record(*pending.popleft())
                progress.advance()
        self.job = None
        self.cross_checks()
        self.base_pools()
        after = self.snapshots.take(self.client)
        self.report["after"] = after
        changed = check_store_unchanged(self.report["before"], after)
        if changed:
            field = "fence" if "fence" in changed else "store_digest"
            raise CampaignError(f"{changed} during the campaign", {"field": field})
        if self.client.identity() != identity:
            raise CampaignError("lab identity changed during the campaign", {"field": "identity"})
        self.report["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def recheck(self, recorded: list[tuple[dict, dict | None]]) -> None:
        """Every job a resumed campaign had recorded, checked again and recorded again in plan order:
        each row's page recomputed (on the cluster when there is one), each row derived again from
        its page, each repetition compared with its first."""
        pages = [(job["query_id"], job["method"], row["page"], self.plan["fence"]) for job, row in recorded if row]
        found = iter(self.checks.check_all(pages))
        progress = Progress("evaluate: recheck", len(recorded), unit="jobs")
        for job, row in recorded:
            order, query_id, method = job["order"], job["query_id"], job["method"]
            self.job = {"order": order, "query_id": query_id, "method": method, "repetition": job["repetition"]}
            expected = self.plan["jobs"][order] if order < len(self.plan["jobs"]) else None
            if expected != [query_id, method, job["repetition"]]:
                raise CampaignError(f"journal: job {order} is {[query_id, method, job['repetition']]}, the plan's is "
                                    f"{expected}", {"field": "journal"})
            first = (query_id, method) not in self.rows
            if first != (row is not None):
                raise CampaignError(f"journal: job {order} {'lacks' if first else 'carries'} the row of its first "
                                    f"repetition", {"query": query_id, "method": method, "field": "journal"})
            if first:
                assert row is not None, "a first repetition carries its row (checked above)"
                self.raise_failures(next(found))
                page = row["page"]
                if job["page_digest"] != digest(page):
                    raise CampaignError(f"journal: job {order}'s page digest is not its row's page",
                                        {"query": query_id, "method": method, "field": "page_digest"})
                result = (page, job["retrieval_micros"], job["response_bytes"], job["http_ms"] / 1000.0)
                entry, added = self.record_job(order, query_id, method, job["repetition"], result)
                if added != row:
                    raise CampaignError(f"journal: the row of job {order} is not the row derived from its page",
                                        {"query": query_id, "method": method, "field": "row"})
            else:
                entry = self.record_repetition(order, query_id, method, job["repetition"], job["ranking_digest"],
                                               job["proof_digest"], job["page_digest"], None)
            entry.update({k: job.get(k) for k in MEASURED})  # the measurements as first recorded
            if entry != job:
                raise CampaignError(f"journal: job {order} is not the job its page and plan give",
                                    {"query": query_id, "method": method, "field": "job"})
            self.submitted.add((query_id, method))
            progress.advance()
        self.job = None

    def search(self, method: str, query: dict, client: LabClient | None = None):
        spec = self.methods[method]
        return (client or self.client).search(spec["route"], search_body(spec, query, self.frozen))

    def fetch(self, client: LabClient, query_id: str, method: str):
        return self.search(method, self.queries[query_id], client)

    @staticmethod
    def raise_failures(found: list[dict]) -> None:
        failures = failures_of(found)
        if failures:
            raise CampaignError(f"page check failed: {failures[0]}" + (f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""),
                                failures[0].as_dict())

    def warm_up(self) -> None:
        query = self.queries[self.plan["warmup"]["query_id"]]
        for method in self.plan["warmup"]["methods"]:
            page, micros, size, seconds = self.search(method, query)
            self.raise_failures(self.checks.submit(query["id"], method, page, self.plan["fence"]).result())
            self.report["warmup"].append({"query_id": query["id"], "method": method, "retrieval_micros": micros,
                                          "http_ms": seconds * 1000.0, "page_digest": digest(page)})

    def record(self, order: int, query_id: str, method: str, repetition: int, result: tuple, check) -> None:
        """Record a fetched job (its page check, if any, must have passed) and append it to the journal."""
        self.job = {"order": order, "query_id": query_id, "method": method, "repetition": repetition}
        if check is not None:
            self.raise_failures(check.result())
        entry, row = self.record_job(order, query_id, method, repetition, result)
        if self.journal is not None:
            self.journal.append(entry, row)

    def record_job(self, order: int, query_id: str, method: str, repetition: int, result: tuple) -> tuple[dict, dict | None]:
        """The job's entry and the row it added (None for a repetition); its page check has passed."""
        query = self.queries[query_id]
        page, micros, size, seconds = result
        key = (query_id, method)
        # the page was read by the client's parser, which refuses NaN and Infinity (or, in a recheck,
        # from the journal and digested by ground.canonical first): its digests are those of
        # ground.canonical at a quarter of the CPU (ground/fast_canonical.py)
        if key in self.rows:
            return self.record_repetition(order, query_id, method, repetition, ranking_digest(page, digest_finite),
                                          proof_digest(page, digest_finite), digest_finite(page),
                                          (micros, size, seconds), page.get("fence")), None
        row = self.rows[key] = row_from_page(query, method, page, self.doc_of, self.frozen.protocol["evaluation"],
                                             digest_finite)
        self.report["rows"].append(row)
        # the row's digests are the page's: computed once, for the row and its job
        return self.job_entry(order, query_id, method, repetition, micros, size, seconds, row["page_digest"],
                              row["ranking_digest"], row["proof_digest"]), row

    def record_repetition(self, order, query_id, method, repetition, rank_digest, prf_digest, page_digest,
                          measured, fence=None) -> dict:
        """A repetition's entry: its ranking and proofs must be its first's, its fence (when its page is
        at hand; a recheck has only the digests) the plan's."""
        first = self.rows[(query_id, method)]
        if (first["ranking_digest"], first["proof_digest"]) != (rank_digest, prf_digest):
            what = "ranking" if first["ranking_digest"] != rank_digest else "proofs"
            raise CampaignError(f"query {query_id}, method {method}, repetition {repetition}: {what} differ "
                                f"from the first repetition", {"query": query_id, "method": method, "field": what})
        if measured is not None and fence != self.plan["fence"]:
            raise CampaignError(f"query {query_id}, method {method}: fence {fence} moved",
                                {"query": query_id, "method": method, "field": "fence"})
        micros, size, seconds = measured or (0, 0, 0.0)
        return self.job_entry(order, query_id, method, repetition, micros, size, seconds, page_digest, rank_digest,
                              prf_digest)

    def job_entry(self, order, query_id, method, repetition, micros, size, seconds, page_digest, rank_digest,
                  prf_digest) -> dict:
        http_ms = seconds * 1000.0
        spec = self.methods[method]
        encode = self.encode_ms[query_id] if route_of(spec).sends_vector(spec) else 0.0
        entry = {
            "order": order, "query_id": query_id, "method": method, "repetition": repetition,
            "retrieval_micros": micros, "http_ms": http_ms, "embed_plus_http_ms": encode + http_ms,
            "response_bytes": size, "page_digest": page_digest, "ranking_digest": rank_digest,
            "proof_digest": prf_digest,
        }
        self.report["jobs"].append(entry)
        return entry

    def cross_checks(self) -> None:
        checked = 0
        for query_id in self.plan["queries"]:
            pages = {m: self.rows[(query_id, m)]["page"] for m in self.plan["methods"] if (query_id, m) in self.rows}
            failures = cross_method_failures(query_id, pages, self.methods, self.frozen.protocol["ranking_profiles"])
            if failures:
                raise CampaignError(f"cross-method check failed: {failures[0]}", failures[0].as_dict())
            checked += 1
        self.report["cross_checks"] = {"queries": checked, "anchors_equal_seed_top": True, "depth_zero_equals_base": True}

    def base_pools(self) -> None:
        """The reach/ceiling section's base pools, once per query after the timed jobs (base_pool.py),
        fetched ahead on the campaign's clients while the received ones are checked here."""
        spec = base_spec(self.frozen.protocol)
        if spec is None:
            return
        body = {query_id: search_body(spec, self.queries[query_id], self.frozen) for query_id in self.plan["queries"]}

        def search(client: LabClient, query_id: str, _method: str) -> dict:
            return client.search(spec["route"], body[query_id])[0]
        jobs = [[query_id, "base_pool"] for query_id in self.plan["queries"]]
        with closing(self.fetcher.results(jobs, search, self.client, ahead=True)) as results:
            pages = ((job[0], page) for _, job, page in results)
            try:
                pools = check_base_pools(pages, self.checks.local_checker(), self.frozen.protocol, self.queries,
                                         self.doc_of, self.rows, self.log)
            except BasePoolError as exc:
                raise CampaignError(str(exc), exc.where) from None
        self.report["base_pools"] = pools

    def fail(self, exc: BaseException) -> None:
        where = getattr(exc, "where", {}) or {}
        self.report["status"] = "failed"
        self.report["failure"] = {"type": type(exc).__name__, "message": str(exc), "where": where, "job": self.job}
        self.report["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.log(f"evaluate: FAILED: {exc}")
