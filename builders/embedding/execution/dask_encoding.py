"""Document batches encoded on a Dask distributed cluster: local workers or a scheduler joined by
address, the same cluster plumbing as the page checks (ground/dask_scheduler.py, docs/scale.md).

- The batch plan is computed once, in the calling process (the same length-sorted batches as in
  one process); each batch is one task, and the results are placed by batch index, so the fixture
  does not depend on which worker encoded what or in which order the tasks finished.
- Each worker opens the provider once, from the spec of the one the caller opened (a worker
  plugin, also run on a worker that joins later or replaces a dead one). The spec carries the
  provider's provenance as `expect`, so a worker re-hashes the model files and refuses to encode
  unless files, libraries, threads and CPU are the caller's (builders/embedding/providers/factory.py).
- A worker that dies loses no batch: the scheduler runs its unfinished tasks again on another
  worker (Dask's `distributed.scheduler.allowed-failures`), and a batch's vector bytes do not
  depend on the worker, so a retried batch is the same bytes.

Bits: as with local processes (parallel.py), a batch is encoded whole by one process with the same
files, libraries, thread count and batch composition, so every vector is the same float32 bytes.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import numpy as np
from distributed import WorkerPlugin, as_completed, get_worker

from ground.canonical import digest
from ground.dask_scheduler import ClusterRefused, connect, start_local

WORKER_ATTRIBUTE = "lab_encoders"


class EncoderPlugin(WorkerPlugin):
    """Opens the caller's provider once on every worker (and warms it up, outside any batch)."""

    def __init__(self, key: str, spec: dict):
        self.key, self.spec = key, spec

    def setup(self, worker) -> None:
        from builders.embedding.providers.factory import open_provider

        provider = open_provider(self.spec)  # refuses a worker whose model files or libraries differ
        with provider.thread_limit():
            provider.encode(["warm up"], "query")  # one-time setup kept out of the measured batches
        encoders = getattr(worker, WORKER_ATTRIBUTE, None)
        if encoders is None:
            encoders = {}
            setattr(worker, WORKER_ATTRIBUTE, encoders)
        encoders[self.key] = provider

    def teardown(self, worker) -> None:
        getattr(worker, WORKER_ATTRIBUTE, {}).pop(self.key, None)


def encode_on_worker(key: str, index: int, texts: list[str]) -> tuple[int, bytes, tuple[int, ...], float]:
    """The task: one batch encoded by this worker's provider; raw float32 bytes (cheap to ship)."""
    worker = get_worker()
    provider = getattr(worker, WORKER_ATTRIBUTE, {}).get(key)
    if provider is None:
        raise RuntimeError(f"worker {worker.address} holds no encoder {key}: its plugin did not run")
    with provider.thread_limit():
        t0 = time.perf_counter()
        matrix = np.ascontiguousarray(provider.encode(texts, "document"), dtype=np.float32)
        ms = (time.perf_counter() - t0) * 1000
    return index, matrix.tobytes(), matrix.shape, ms


def encode_batches(provider, batches: list[list[str]], done: Callable[[int, np.ndarray, float], None],
                   workers: int = 2, scheduler: str | None = None,
                   log: Callable[[str], None] | None = None) -> tuple[str, int]:
    """Every batch as a task on a local cluster of `workers` workers, or on the cluster at
    `scheduler`; `done(index, matrix, ms)` as each finishes. Returns where it ran (one line) and
    how many workers the cluster had when the batches were sent."""
    spec = provider.spec()
    key = f"{digest(spec)[:16]}-{uuid.uuid4().hex[:12]}"  # two builds on one cluster keep apart
    cluster = None
    if scheduler is None:
        cluster, client = start_local(workers)
    else:
        client = connect(scheduler)
    name = f"lab-encoder-{key}"
    try:
        if not client.scheduler_info()["workers"]:
            raise ClusterRefused(f"the cluster at {client.scheduler.address} has no worker")
        client.register_plugin(EncoderPlugin(key, spec), name=name)
        count = len(client.scheduler_info()["workers"])
        where = (f"{count} Dask worker(s) of "
                 f"{'a local cluster' if cluster is not None else 'the cluster'} at {client.scheduler.address}")
        if log:
            log(f"document batches on {where}")
        # longest batches first, as in one process: the slowest tasks start first and the tail is short
        futures = [client.submit(encode_on_worker, key, index, texts, pure=False, priority=-index)
                   for index, texts in enumerate(batches)]
        for future in as_completed(futures):
            index, raw, shape, ms = future.result()
            done(index, np.frombuffer(raw, dtype=np.float32).reshape(shape), ms)
            future.release()
        return where, count
    finally:
        if cluster is None:
            try:  # a joined cluster outlives the build: its workers drop this encoder
                client.unregister_worker_plugin(name)
            except Exception:  # noqa: BLE001 - a worker gone meanwhile, or the plugin never registered
                pass
        client.close()
        if cluster is not None:
            cluster.close()
