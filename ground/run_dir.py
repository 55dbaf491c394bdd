"""The standard layout of a run directory: the one place that names the files a campaign writes.

Every command that takes `--run-dir DIR` finds its inputs and writes its outputs here, so a step
needs one flag; the explicit per-file flags still override (docs/cli.md). `lab run` and the demos
create this layout; a comparison or an audit of a finished run reads it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, overload

from ground.errors import RefusedInput

# where `lab demo` puts its run directories, relative to the working directory (the Makefile runs from
# the clone); `lab protocol freeze` and `show` hold a file to the locks of the runs there, as `lab run`
# holds it to those beside its --run-dir
DEFAULT_RUN_ROOT = Path("runs")

# file name of each artifact inside a run directory (docs/cli.md, "The run directory")
FILES = {
    "protocol": "protocol.json",      # the frozen protocol, copied in so the run is self-contained
    "record": "run.json",             # lab run: how the run was started and the stages it finished
    "stages": "stages.log",           # lab run: each stage's own output (what it wrote, the audit's checks)
    "data": "data",                   # generated source data (synthetic runs only)
    "source": "source.json",          # importer: documents, queries, judgments, provenance
    "relations": "relations.json",    # builders/title_graph.py: the typed graph
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


def run_resume(run_dir: Path | str | None) -> str | None:
    """`lab run --resume RUN_DIR`, as the user invoked the lab, when `run_dir` is a directory `lab run`
    started (its run.json is there): the one command that continues any of its stages; else None."""
    from ground.command import typed

    if run_dir is None or not RunDir(Path(run_dir)).record.is_file():
        return None
    return typed(f"run --resume {run_dir}")


# --- the flags every command shares for these files (docs/cli.md, "One flag vocabulary") ----------

def add_run_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run-dir", type=Path, metavar="DIR",
                        help="a run directory in the standard layout (docs/cli.md): every file flag not given "
                             "is that role's file there")


def add_file(parser: argparse.ArgumentParser, flag: str, role: str, help: str, *,
             aliases: tuple[str, ...] = ()) -> None:
    """A file flag of one run-directory role; its help names the file `--run-dir` supplies.

    `aliases` are older names of the flag, still accepted (the Qilbee workflow's scripts pass them)
    and left out of --help so each role has one documented name."""
    dest = _dest(flag)
    parser.add_argument(flag, type=Path, metavar="FILE", dest=dest,
                        help=f"{help} (default with --run-dir: {FILES[role]} there)")
    for alias in aliases:
        parser.add_argument(alias, type=Path, dest=dest, help=argparse.SUPPRESS)


@overload
def resolve(args: argparse.Namespace, flag: str, role: str, *, optional: Literal[False] = False,
            default: Path | None = None) -> Path: ...
@overload
def resolve(args: argparse.Namespace, flag: str, role: str, *, optional: bool,
            default: Path | None = None) -> Path | None: ...
def resolve(args: argparse.Namespace, flag: str, role: str, *, optional: bool = False,
            default: Path | None = None) -> Path | None:
    """The file of `role`: the flag when given, else the run directory's file, else `default`.

    An optional role whose run-directory file does not exist resolves to None; a required one that
    nothing supplies is refused, naming both ways to give it."""
    given = getattr(args, _dest(flag))
    if given is not None:
        return Path(given)
    run_dir = getattr(args, "run_dir", None)
    if run_dir is not None:
        path = RunDir(Path(run_dir)).path(role)
        return None if optional and not path.exists() else path
    if default is not None or optional:
        return default
    raise RefusedInput(f"give {flag} FILE or --run-dir DIR (where it is {FILES[role]})")


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def run_directory(value: str) -> Path:
    """argparse type of a run-directory argument: an existing directory (a file is refused, naming
    the directory it probably meant)."""
    path = Path(value)
    if path.is_file():
        raise argparse.ArgumentTypeError(f"{value} is a file; give its run directory ({path.parent})")
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"run directory {value} not found")
    return path
