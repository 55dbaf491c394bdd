"""The standard layout of a run directory: the one place that names the files a campaign writes.

Every command that takes `--run-dir DIR` finds its inputs and writes its outputs here, so a step
needs one flag; the explicit per-file flags still override (docs/cli.md). `lab run` and the demos
create this layout; a comparison or an audit of a finished run reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# file name of each artifact inside a run directory (docs/cli.md, "The run directory")
FILES = {
    "protocol": "protocol.json",      # the frozen protocol, copied in so the run is self-contained
    "data": "data",                   # generated source data (synthetic runs only)
    "source": "source.json",          # importer: documents, queries, judgments, provenance
    "relations": "relations.json",    # builders/graph: the typed graph
    "fixture": "fixture.json",        # builders/embedding: vectors and receipts
    "generation": "generation.json",  # builders/embedding: per-input encode measurements
    "db": "lab-db",                   # the lab server's RocksDB directory
    "access": "lab-access.json",      # the lab server's access file (base URL, token, scope, pid)
    "log": "lab.log",                 # the lab server's log
    "state": "state.json",            # prepare: resumable state
    "plan": "plan.json",              # evaluate: the pinned plan
    "report": "report.json",          # evaluate: the private report
    "public": "public.json",          # export: the public report (public.md, public.html and figures beside it)
}


@dataclass(frozen=True)
class RunDir:
    """Paths of the standard files under one run directory (nothing is created here)."""

    root: Path

    def __getattr__(self, role: str) -> Path:
        if role in FILES:
            return Path(self.root) / FILES[role]
        raise AttributeError(role)

    def path(self, role: str) -> Path:
        return Path(self.root) / FILES[role]
