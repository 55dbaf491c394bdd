"""Page checks on a Dask distributed cluster, or in this process (docs/scale.md, "Validation on a cluster").

The independent recomputation of every page is the expensive part of evaluate and audit, and each
page's check is a pure function of the frozen inputs, the state and the page. So it runs as tasks
on Dask distributed: a scheduler and worker processes over TCP, the same code on a `LocalCluster`
started here (one single-threaded worker per core, on 127.0.0.1) and on a cluster started by hand
(`--scheduler ADDRESS`). What stays in the calling process: the HTTP requests to the lab, the
order of the report and every decision taken on a result.

- The frozen inputs (protocol, fixture, relations) and the state go to each worker once, in a
  worker plugin; the worker refuses them unless their digests are the ones the caller loaded and
  cross-checked (`evaluator.inputs.frozen_received`), and builds its own `Checker`. A worker that
  joins later, or replaces one that died, gets the plugin from the scheduler before any task.
- A task carries pages and returns their failures as plain dicts: BATCH pages in the order they
  came (evaluate), or whole queries, CHUNK pages or more (audit, a resume's recheck): a Dask task
  costs the client and the scheduler about as much CPU as checking a page here. The pages of a query go
  to one worker while it is alive (a loose restriction), so the query's shared work (its scores
  over every document, its fused lists) is computed and cached there only, and each worker's
  cache holds its own share of the queries.
- The caller reads results in plan (or row) order, whatever order the tasks finish in, so nothing
  downstream depends on the number of workers or on which worker ran what.
- A worker that dies loses no result: the scheduler runs its unfinished tasks again on another
  worker (and a local cluster's nanny starts a replacement), up to Dask's `allowed-failures`.

Which cluster (`--workers`, `--scheduler`) is cluster_options.py, importable without Dask.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import orjson
from distributed import WorkerPlugin, get_worker

from evaluator.inputs import Frozen, frozen_received
from evaluator.verification.check_placement import ClusterOptions, ClusterRefused, check_options, same_host
from evaluator.verification.verify import CACHED_QUERY_BYTES, Checker, Failure
from evaluator.verification.worker_inputs import INPUTS, Shared, open_shared, write_shared
from ground.canonical import digest
from ground.dask_scheduler import connect, start_local

WORKER_ATTRIBUTE = "lab_checkers"
# pages per task when they come one at a time (evaluate): a Dask task costs the scheduler and the
# client about a millisecond of CPU, as much as checking a page (docs/scale.md, "Dask or Ray")
BATCH = 16
CHUNK = 32  # pages per task at least when all are at hand (audit, a recheck): whole queries, in order
# a worker's cache of query work when whole queries come per task (audit): a few dozen queries'
# scores at full scale (17 bytes a document each), where evaluate's random plan order needs its
# whole share (CACHED_QUERY_BYTES: 512 MiB a worker, most of a worker's memory at full scale)
WHOLE_QUERIES_CACHE_BYTES = 32 * 2**20


def _failures(checker: Checker, items: Iterable[tuple]) -> list[list[dict]]:
    queries = checker.queries
    return [[f.as_dict() for f in checker.check_page(queries[query_id], method,
                                                     orjson.loads(page) if isinstance(page, bytes) else page, fence)]
            for query_id, method, page, fence in items]


def _pool_differences(checker: Checker, items: Iterable[tuple]) -> list:
    """`Checker.pool_difference` of each (query id, profile, pool, depth)."""
    return [checker.pool_difference(*item) for item in items]


def _shipped(item: tuple) -> tuple:
    """A page goes to a worker as its JSON bytes: pickling bytes is a copy, pickling the nested
    dicts of a page cost more than checking it (measured: 1.4 against 2.6 ms a page in batches of
    eight, load 8); the worker parses it back to the same values."""
    query_id, method, page, fence = item
    return query_id, method, orjson.dumps(page), fence


class Done:
    """A result already computed (the in-process checks), read like a Dask future."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value

    def done(self) -> bool:
        return True


class Future(Protocol):
    """What a caller reads of a check sent off: a Dask future, a batch's place in one, or `Done`."""

    def result(self) -> Any: ...
    def done(self) -> bool: ...


class PageChecks:
    """Checks pages of one campaign: `submit` one page (a future of its failures), `check_all` many
    (their failures in the given order). In this process; see `ClusterChecks` for the cluster."""

    description = "in this process"

    def __init__(self, checker: Checker):
        self.checker = checker

    def local_checker(self) -> Checker:
        """The checker for the checks that stay in this process: this one."""
        return self.checker

    def submit(self, query_id: str, method: str, page: Mapping, fence) -> Future:
        return Done(_failures(self.checker, [(query_id, method, page, fence)])[0])

    def check_all(self, items: Sequence[tuple]) -> list[list[dict]]:
        return _failures(self.checker, items)

    def submit_all(self, items: Sequence[tuple]) -> Future:
        """`check_all`, read later (`.result()`): here it is done at once, in this process."""
        return Done(self.check_all(items))

    def check_pools(self, items: Sequence[tuple]) -> list:
        """`Checker.pool_difference` of each (query id, profile, pool, depth), in the given order."""
        return _pool_differences(self.checker, items)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class CheckerPlugin(WorkerPlugin):
    """Gives every worker a campaign's state and either the reference of the inputs its caller
    shared on this host (evaluator/verification/worker_inputs.py: mapped, checked by their digests) or the
    frozen inputs themselves (a cluster that may span machines), and builds its `Checker` there; the
    worker refuses inputs whose digests are not the caller's."""

    def __init__(self, key: str, frozen: Frozen, state: Mapping, shared: Shared | None = None,
                 keep: Sequence[str] = (), cache_bytes: int = CACHED_QUERY_BYTES):
        self.key = key
        self.shared = shared
        self.keep, self.cache_bytes = tuple(keep), cache_bytes
        self.protocol: dict | None = None
        self.fixture: dict | None = None
        self.relations: dict | None = None
        if shared is None:
            self.protocol, self.fixture, self.relations = frozen.protocol, frozen.fixture, frozen.relations
        self.digests: dict[str, Any] = {k: frozen.digests.get(k) for k in ("protocol", "source", "fixture", "relations")}
        self.state: Mapping | None = state

    def setup(self, worker) -> None:
        if self.shared is not None:
            frozen, packed = open_shared(self.shared, self.digests)
        else:
            assert self.protocol is not None and self.fixture is not None and self.relations is not None, \
                "set up once, from what __init__ kept"
            frozen = frozen_received(self.protocol, self.fixture, self.relations,
                                     {k: self.digests[k] for k in ("protocol", "fixture", "relations")})
            packed = None
        checkers = getattr(worker, WORKER_ATTRIBUTE, None)
        if checkers is None:
            checkers = {}
            setattr(worker, WORKER_ATTRIBUTE, checkers)
        assert self.state is not None, "set up once, from what __init__ kept"
        checkers[self.key] = Checker(frozen, self.state, packed, cache_bytes=self.cache_bytes, keep=self.keep)
        # the checker holds what it reads: the plugin's own copies would be kept twice, for nothing
        # (a worker that joins later is sent the plugin again by the scheduler)
        self.protocol = self.fixture = self.relations = self.state = None

    def teardown(self, worker) -> None:
        getattr(worker, WORKER_ATTRIBUTE, {}).pop(self.key, None)


def _worker_checker(key: str) -> Checker:
    worker = get_worker()
    checker = getattr(worker, WORKER_ATTRIBUTE, {}).get(key)
    if checker is None:
        raise RuntimeError(f"worker {worker.address} holds no checker for campaign {key}: its plugin did not run")
    return checker


def check_on_worker(key: str, items: list[tuple]) -> list[list[dict]]:
    """The task: the failures of each page, checked by this worker's `Checker` for campaign `key`."""
    return _failures(_worker_checker(key), items)


def pools_on_worker(key: str, items: list[tuple]) -> list:
    """The task: `Checker.pool_difference` of each pool, by this worker's `Checker` for campaign `key`."""
    return _pool_differences(_worker_checker(key), items)


class _Batch:
    __slots__ = ("worker", "items", "future")

    def __init__(self, worker: str):
        self.worker = worker
        self.items: list[tuple] = []
        self.future = None


class _Pending:
    """One page's place in a batch, read like a future of its failures."""

    __slots__ = ("checks", "batch", "index")

    def __init__(self, checks: "ClusterChecks", batch: _Batch, index: int):
        self.checks, self.batch, self.index = checks, batch, index

    def done(self) -> bool:
        return self.batch.future is not None and self.batch.future.done()

    def result(self) -> list[dict]:
        if self.batch.future is None:
            self.checks.flush(self.batch)
        future = self.batch.future
        assert future is not None, "flush sends the batch"
        return future.result()[self.index]


class _Gathered:
    """The results of tasks over chunks of positions, read back in position order."""

    def __init__(self, size: int, chunks: list[list[int]], futures: list):
        self.size, self.chunks, self.futures = size, chunks, futures

    def done(self) -> bool:
        return all(future.done() for future in self.futures)

    def result(self) -> list:
        out: list = [None] * self.size
        for chunk, future in zip(self.chunks, self.futures):
            for i, found in zip(chunk, future.result()):
                out[i] = found
        return out


class ClusterChecks(PageChecks):
    """The same checks as tasks on a Dask cluster (started here or joined)."""

    def __init__(self, frozen: Frozen, state: Mapping, workers: int = 0, scheduler: str | None = None,
                 log: Callable[[str], None] = lambda line: None, directory: str | Path | None = None,
                 keep: Sequence[str] = (), cache_bytes: int = CACHED_QUERY_BYTES):
        """`directory`: where the inputs the workers share are written (a fresh subdirectory, removed
        at `close`; a temporary directory when None). Shared on a local cluster and on a joined one
        over loopback (the same host); a `tls://` cluster may span machines, so its workers get the
        inputs themselves. `keep`, `cache_bytes`: the workers' `Checker` arguments."""
        # one name per campaign's checks: two running on one cluster (an evaluate and an audit of the
        # same inputs) each have their own checker, and each removes only its own when it ends
        self.key = f"{digest([{k: frozen.digests[k] for k in ('protocol', 'fixture', 'relations')}, digest(state)])[:16]}" \
                   f"-{uuid.uuid4().hex[:12]}"
        self.frozen, self.state = frozen, state
        self.plugin: str | None = None
        self.cluster: Any = None
        self.client: Any = None  # a distributed.Client
        self.shared: Shared | None = None
        self._scratch: str | None = None  # the directory this object made and removes
        self._open: dict[str, _Batch] = {}  # per worker: the pages of its queries not yet sent
        try:
            if scheduler is None:
                self.cluster, self.client = start_local(workers)
            else:
                self.client = connect(scheduler)
            if scheduler is None or same_host(scheduler):
                parent = Path(directory) if directory is not None else None
                self._scratch = tempfile.mkdtemp(prefix=f".checker-inputs-{self.key[:16]}-", dir=parent)
                self.shared = write_shared(frozen, Path(self._scratch) / "inputs")
            self.client.register_plugin(CheckerPlugin(self.key, frozen, state, self.shared, keep, cache_bytes),
                                        name=f"lab-checker-{self.key}")
            self.plugin = f"lab-checker-{self.key}"
            self.workers = sorted(self.client.scheduler_info()["workers"])
            if not self.workers:
                raise ClusterRefused(f"the cluster at {self.client.scheduler.address} has no worker")
        except BaseException:
            self.close()
            raise
        where = "a local cluster" if self.cluster is not None else "the cluster"
        self.description = f"{len(self.workers)} worker(s) of {where} at {self.client.scheduler.address}"
        log(f"page checks on {self.description}")

    def _worker_of(self, query_id: str) -> str:
        return self.workers[zlib.crc32(query_id.encode()) % len(self.workers)]

    def submit(self, query_id: str, method: str, page: Mapping, fence) -> "_Pending":
        """The page joins the open batch of its query's worker, sent as one task when BATCH pages
        are in it or when a result of it is asked for."""
        worker = self._worker_of(query_id)
        batch = self._open.setdefault(worker, _Batch(worker))
        batch.items.append(_shipped((query_id, method, page, fence)))
        pending = _Pending(self, batch, len(batch.items) - 1)
        if len(batch.items) >= BATCH:
            self.flush(batch)
        return pending

    def flush(self, batch: "_Batch") -> None:
        if self._open.get(batch.worker) is batch:
            del self._open[batch.worker]
        if batch.items and batch.future is None:
            batch.future = self.client.submit(check_on_worker, self.key, batch.items, pure=False,
                                              workers=[batch.worker], allow_other_workers=True)
            batch.items = []  # the task holds them now

    def check_all(self, items: Sequence[tuple]) -> list[list[dict]]:
        """Whole queries per task, CHUNK pages or more each, on the worker of their queries; results
        in the order given."""
        return self.submit_all(items).result()

    def submit_all(self, items: Sequence[tuple]) -> "_Gathered":
        """`check_all`'s tasks, sent now and read later (`.result()`), so the caller can do other
        work while the workers check. A chunk holds queries of one worker only: that worker then
        keeps their fused lists for the base pools (`check_pools`)."""
        return self._gathered(check_on_worker, [_shipped(item) for item in items])

    def check_pools(self, items: Sequence[tuple]) -> list:
        """Each (query id, profile, pool, depth) on the worker that checked its query's pages (where
        its fused lists already are); results in the order given."""
        return self._gathered(pools_on_worker, list(items)).result()

    def _gathered(self, task: Callable, items: list[tuple]) -> "_Gathered":
        """`task` over `items` (each naming its query first): whole queries per task, CHUNK items or
        more each, every chunk on the worker of all its queries."""
        by_query: dict[str, list[int]] = {}
        for i, item in enumerate(items):
            by_query.setdefault(item[0], []).append(i)
        by_worker: dict[str, list[list[int]]] = {}
        for query_id, positions in by_query.items():
            chunks = by_worker.setdefault(self._worker_of(query_id), [[]])
            if len(chunks[-1]) >= CHUNK:
                chunks.append([])
            chunks[-1].extend(positions)
        sent = [(worker, chunk) for worker, listed in by_worker.items() for chunk in listed if chunk]
        futures = [self.client.submit(task, self.key, [items[i] for i in chunk], pure=False,
                                      workers=[worker], allow_other_workers=True) for worker, chunk in sent]
        return _Gathered(len(items), [chunk for _, chunk in sent], futures)

    def local_checker(self) -> Checker:
        """A checker in this process for the few checks that stay here (the base pools, one query
        at a time): over the shared arrays when there are some, keeping one query's work."""
        packed = None
        if self.shared is not None:
            packed = open_shared(self.shared, {k: self.frozen.digests.get(k) for k in INPUTS})[1]
        return Checker(self.frozen, self.state, packed, cache_bytes=0)

    def close(self) -> None:
        try:
            if getattr(self, "client", None) is not None:
                if self.plugin is not None and self.cluster is None:
                    try:  # a joined cluster outlives the campaign: its workers drop this checker
                        self.client.unregister_worker_plugin(self.plugin)
                    except Exception:  # noqa: BLE001 - a worker gone meanwhile holds nothing to drop
                        pass
                self.client.close()
        finally:
            try:
                if self.cluster is not None:
                    self.cluster.close()
            finally:
                # mapped files stay readable to whoever maps them until they unmap: removing them
                # only frees the space once the last worker lets go
                if self._scratch is not None:
                    shutil.rmtree(self._scratch, ignore_errors=True)
                    self._scratch = None


def page_checks(frozen: Frozen, state: Mapping, options: ClusterOptions, pages: int,
                checker: Callable[[], Checker] | None = None,
                log: Callable[[str], None] = lambda line: None, directory: str | Path | None = None,
                keep: Sequence[str] = (), whole_queries: bool = False) -> PageChecks:
    """The checks for `pages` pages: in this process (with `checker()` when given, a new `Checker`
    otherwise), on a local cluster or on a joined one (the inputs its workers share written under
    `directory`, see `ClusterChecks`). `keep`: the `Checker` argument. `whole_queries`: every page
    of a query comes in one `check_all` task (audit), so a worker's cache needs only the few
    queries it is checking (WHOLE_QUERIES_CACHE_BYTES), not evaluate's share of all of them."""
    check_options(options)
    cache_bytes = WHOLE_QUERIES_CACHE_BYTES if whole_queries else CACHED_QUERY_BYTES
    if options.scheduler is not None:
        return ClusterChecks(frozen, state, scheduler=options.scheduler, log=log, directory=directory, keep=keep,
                             cache_bytes=cache_bytes)
    workers = options.local_workers(pages)
    if workers == 0:
        return PageChecks(checker() if checker else Checker(frozen, state, keep=keep))
    return ClusterChecks(frozen, state, workers=workers, log=log, directory=directory, keep=keep,
                         cache_bytes=cache_bytes)


def failures_of(found: list[dict]) -> list[Failure]:
    return [Failure(**entry) for entry in found]
