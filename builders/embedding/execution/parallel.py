"""Document batches encoded by several worker processes, each with its own copy of the model.

Why processes and not threads: MiniLM's matrices are small, so torch's intra-op threads spend much
of their time synchronizing (measured: one thread encodes more documents per second than two on
the 2-CPU build machine), while two single-threaded processes each run at one thread's full speed.

Bits: a batch is encoded whole by one process, with the same model files, libraries, thread count
and batch composition as in a single process, so every vector is the same float32 bytes whichever
process encoded it (tested: a 2-worker build equals the 1-worker build byte for byte). The worker
count is therefore recorded in generation.json, not in the space. Workers start with `spawn`
(a fork of a process whose torch or OpenMP runtime already started threads can deadlock).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import TYPE_CHECKING

import numpy as np

from ground.child_process import tie_to

if TYPE_CHECKING:
    from builders.embedding.providers.factory import Provider

_provider: Provider | None = None  # the worker process's own provider, built once by _start


def _start(spec: dict, ready, parent: int) -> None:
    global _provider
    from builders.embedding.providers.factory import open_provider

    tie_to(parent)  # a killed stage takes its encoders with it (nothing else would end them)

    _provider = open_provider(spec)
    with _provider.thread_limit():
        _provider.encode(["warm up"], "query")  # one-time setup outside the measured batches
    ready.release()


def _encode(index: int, texts: list[str]) -> tuple[int, bytes, tuple[int, ...], float]:
    provider = _provider
    assert provider is not None, "the pool's initializer (_start) opens the provider before any task"
    with provider.thread_limit():
        t0 = time.perf_counter()
        matrix = np.ascontiguousarray(provider.encode(texts, "document"), dtype=np.float32)
        ms = (time.perf_counter() - t0) * 1000
    return index, matrix.tobytes(), matrix.shape, ms


def encode_batches(provider, batches: list[list[str]], workers: int,
                   done: Callable[[int, np.ndarray, float], None]) -> None:
    """Encode every batch: this process (with its already loaded `provider`) and `workers - 1`
    spawned processes side by side; `done(index, matrix, ms)` as each batch finishes.

    Spawned workers take batches from the front (the longest), this process from the back, so the
    work starts at once and a worker that is still loading its model costs nothing but its load,
    which ends with the last batch: the workers are killed then, loaded or not."""
    context = multiprocessing.get_context("spawn")
    ready = context.Semaphore(0)  # released once by each worker whose model is loaded
    started = 0
    pending = deque(range(len(batches)))
    running: dict = {}
    pool = ProcessPoolExecutor(max_workers=workers - 1, mp_context=context, initializer=_start,
                               initargs=(provider.spec(), ready, os.getpid()))
    try:
        pool.submit(int)  # a no-op: the pool spawns its processes on the first submission
        while pending or running:
            while ready.acquire(block=False):
                started += 1
            while pending and len(running) < started:  # one batch queued per loaded worker, no more
                index = pending.popleft()
                running[pool.submit(_encode, index, batches[index])] = index
            for future in [f for f in running if f.done()]:
                del running[future]
                _collect(future, done)
            if pending:
                index = pending.pop()
                t0 = time.perf_counter()
                matrix = provider.encode(batches[index], "document")
                done(index, matrix, (time.perf_counter() - t0) * 1000)
            elif running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    del running[future]
                    _collect(future, done)
    finally:
        _end_now(pool)


def _end_now(pool: ProcessPoolExecutor) -> None:
    """Done or stopped (Ctrl-C, SIGTERM, an error): end the workers at once. The pool's own shutdown
    waits for a worker still loading its model (a small build can be done before it), seconds of
    CPU and of the stage's time for nothing; a worker keeps nothing, every finished batch is
    already this process's."""
    for process in list(pool._processes.values()):  # Python 3.14 names this kill_workers()
        process.kill()
    pool.shutdown(cancel_futures=True)


def _collect(future, done: Callable[[int, np.ndarray, float], None]) -> None:
    index, raw, shape, ms = future.result()
    done(index, np.frombuffer(raw, dtype=np.float32).reshape(shape), ms)
