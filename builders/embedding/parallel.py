"""Document batches encoded by several worker processes, each with its own copy of the model.

Why processes and not threads: MiniLM's matrices are small, so torch's intra-op threads spend much
of their time synchronizing (measured: one thread encodes more documents per second than two on
the 2-CPU build machine), while two single-threaded processes each run at one thread's full speed.

Bits: a batch is encoded whole by one worker, with the same model files, libraries, thread count
and batch composition as in a single process, so every vector is the same float32 bytes whichever
worker encoded it (tested: a 2-worker build equals the 1-worker build byte for byte). The worker
count is therefore recorded in generation.json, not in the space. Workers start with `spawn`
(a fork of a process whose torch or OpenMP runtime already started threads can deadlock).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

_provider = None  # the worker process's own provider, built once by _start


def _start(spec: dict) -> None:
    global _provider
    from builders.embedding.reproduce import provider_from_spec

    _provider = provider_from_spec(spec)
    with _provider.thread_limit():
        _provider.encode(["warm up"], "query")  # one-time setup outside the measured batches


def _encode(index: int, texts: list[str]) -> tuple[int, bytes, tuple[int, ...], float]:
    with _provider.thread_limit():
        t0 = time.perf_counter()
        matrix = np.ascontiguousarray(_provider.encode(texts, "document"), dtype=np.float32)
        ms = (time.perf_counter() - t0) * 1000
    return index, matrix.tobytes(), matrix.shape, ms


def encode_batches(spec: dict, batches: list[list[str]], workers: int,
                   done: Callable[[int, np.ndarray, float], None]) -> None:
    """Encode every batch in `workers` processes; `done(index, matrix, ms)` as each one finishes."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start,
                             initargs=(spec,)) as pool:
        futures = [pool.submit(_encode, i, texts) for i, texts in enumerate(batches)]
        for future in as_completed(futures):
            index, raw, shape, ms = future.result()
            done(index, np.frombuffer(raw, dtype=np.float32).reshape(shape), ms)
