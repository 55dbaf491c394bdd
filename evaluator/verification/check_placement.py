"""Where page checks run: `--workers N` and `--scheduler ADDRESS` (docs/scale.md), without importing Dask.

Only loopback addresses are joined over plain TCP; any other scheduler must be `tls://` with
Dask's own TLS settings (ground/dask_scheduler.py, the rule the embedding builder follows too).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

# the address rule and the refusal are shared with the embedding builder's cluster (ground/dask_scheduler.py)
from ground.dask_scheduler import ClusterRefused, check_address, is_loopback

# Below this many pages to check, a local cluster's start (seconds: processes, imports, inputs
# loaded in each worker) costs more than it saves; `--workers` chooses explicitly.
AUTO_MIN_PAGES = 1000


@dataclass(frozen=True)
class ClusterOptions:
    """`--workers N` (0: in this process; None: one per core when the work is large enough) and
    `--scheduler ADDRESS` (join that cluster instead of starting one)."""

    workers: int | None = None
    scheduler: str | None = None

    def local_workers(self, pages: int) -> int:
        if self.workers is not None:
            return self.workers
        return (os.cpu_count() or 1) if pages >= AUTO_MIN_PAGES else 0


AUTO_DEFAULT = f"one per core from {AUTO_MIN_PAGES} pages to check, else 0"


def add_cluster_flags(parser, default: str = AUTO_DEFAULT) -> None:
    """`--workers` and `--scheduler`, the same in every command whose page checks can run on a cluster
    (`default`: what no --workers means for that command)."""
    parser.add_argument("--workers", type=int, metavar="N",
                        help=f"page checks on a local Dask cluster of N worker processes on 127.0.0.1 (0: in this "
                             f"process; default: {default})")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="page checks on the Dask cluster at ADDRESS instead (tcp:// on loopback only; another "
                             "machine over tls:// with Dask's TLS settings, docs/scale.md)")


def options_of(args) -> ClusterOptions:
    return ClusterOptions(workers=args.workers, scheduler=args.scheduler)


def check_options(options: ClusterOptions) -> None:
    if options.workers is not None and (isinstance(options.workers, bool) or options.workers < 0):
        raise ClusterRefused(f"--workers must be 0 (this process) or more, got {options.workers!r}")
    if options.scheduler is not None:
        if options.workers is not None:
            raise ClusterRefused("--workers and --scheduler exclude each other: a joined cluster has its own workers")
        check_address(options.scheduler)


def same_host(scheduler: str) -> bool:
    """Whether a joined cluster's workers run on this machine: a loopback scheduler's do (a worker
    elsewhere could not reach it), a `tls://` one's may not."""
    return is_loopback(scheduler)
