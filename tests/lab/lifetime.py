"""What a killed lab command leaves running: every process started under a tag (an environment
variable each child inherits: stages, encoder workers and their resource tracker, Dask workers, the
lab server) is found by reading /proc, so a survivor is named whatever started it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO

TAG = "LAB_LIFETIME_TAG"


def new_tag() -> str:
    return uuid.uuid4().hex


def tagged(tag: str) -> dict[int, str]:
    """pid -> command line of every live process whose environment carries `tag`."""
    found = {}
    wanted = f"{TAG}={tag}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if wanted in (entry / "environ").read_bytes().split(b"\0"):
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def survivors(tag: str, within: float = 20.0) -> dict[int, str]:
    """The tagged processes still alive after `within` seconds (zombies reaped by nobody excluded)."""
    deadline = time.monotonic() + within
    while True:
        alive = {pid: line for pid, line in tagged(tag).items() if not _zombie(pid)}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def as_at_a_terminal() -> None:
    """A command typed at a terminal takes Ctrl-C: whatever this test process's own Ctrl-C state
    (a test runner's worker may ignore or block it), its child starts with the default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT, signal.SIGTERM])


def start_tagged(argv: list, tag: str) -> subprocess.Popen:
    """`argv` as typed in the clone, from its root, in its own process group, under `tag`."""
    return subprocess.Popen(list(map(str, argv)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=REPO, env={**os.environ, TAG: tag},
                            preexec_fn=as_at_a_terminal)


def kill_when(child: subprocess.Popen, ready: Callable[[], bool], sig: int, timeout: float = 300.0):
    """Send `sig` to the command's own process (as `kill PID` or `timeout` does) once `ready()`;
    returns (stdout, stderr) after it exits. Refuses to wait past `timeout` for `ready`."""
    deadline = time.monotonic() + timeout
    while child.poll() is None and not ready():
        assert time.monotonic() < deadline, "the moment to kill never came"
        time.sleep(0.02)
    if child.poll() is None:
        time.sleep(0.2)
        os.kill(child.pid, sig)
    return child.communicate(timeout=600)
