"""Shared test plumbing: where ../shared lives, a clear skip when it is absent, and `lab` in-process."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

# the real lab fixtures (`lab`, `fresh_scope`, `lab_pool`) for every test module that asks for one, the
# option of .ci/run's lane without ../shared, and the lane markers tests/project/test_lanes.py reads
pytest_plugins = ("tests.lab_fixtures", "tests.shared_readers", "tests.lane_markers")

REPO = Path(__file__).resolve().parents[1]
# LAB_SHARED_DIR points the tests at another shared folder; set to a missing path it hides ../shared,
# so the suite runs as on a newcomer's machine (.ci/run's second lane). This is its one home: tests
# read SHARED / SHARED_DATA from here and pass them on (e.g. `--data-dir`), never the lab's default.
SHARED = Path(os.environ["LAB_SHARED_DIR"]) if os.environ.get("LAB_SHARED_DIR") else REPO.parent / "shared"
SHARED_DATA = SHARED / "data"
SAMPLE_DIR = SHARED_DATA / "musique-sample"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def require_shared(path: Path = SHARED_DATA) -> Path:
    """Skip (with the reason) when the shared data (MuSiQue CC BY 4.0, HotpotQA CC BY-SA 4.0,
    2WikiMultihopQA Apache-2.0) is not on this machine."""
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared samples live only in ../shared, never in this repo")
    return path


@dataclass(frozen=True)
class Ran:
    """What one `lab` command did: the fields of subprocess.CompletedProcess the tests read."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def lab_cli(*args, check: bool = True) -> Ran:
    """`lab ARGS` in this process (lab.cli.main, as the console script calls it), output captured.

    For a test about the command's behaviour; a test about the process (a server, a kill, the
    console script's exit code) starts a real subprocess instead."""
    from lab.cli import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: --help exits 0, a usage error 2
            code = exc.code if isinstance(exc.code, int) else 1
    ran = Ran(argv, code, out.getvalue(), err.getvalue())
    if check and code != 0:
        raise AssertionError(f"lab {' '.join(argv)} exited {code}:\n{ran.stdout}\n{ran.stderr}")
    return ran
