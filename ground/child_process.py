"""Child processes that end with the command that started them.

A stage or lab server started by `lab run` must not outlive it: if `lab run` is killed (SIGKILL,
a closed terminal), an orphaned stage would go on writing into the run directory, and an orphaned
lab would keep the store's lock that `lab run --resume` needs. Linux's parent-death signal
(prctl PR_SET_PDEATHSIG) has the kernel send the child a signal when its parent dies.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def _prctl():
    name = ctypes.util.find_library("c")
    if name is None or not hasattr(os, "getppid"):
        return None
    return ctypes.CDLL(name, use_errno=True).prctl


def tie_to(parent: int, signum: int = signal.SIGKILL) -> None:
    """Called inside a child already running (a pool's worker initializer): ask for `signum` when
    `parent` dies, and take it at once if it already has. A worker of a worker pool is no child of
    `lab run`, so nothing else ends it when its stage is killed; the pool's own shutdown never runs
    after SIGKILL."""
    prctl = _prctl()
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), int(signum))


def dies_with_parent(signum: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A `preexec_fn` that asks for `signum` when the parent dies; None where prctl is missing."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request was armed
            os.kill(os.getpid(), int(signum))

    return arm
