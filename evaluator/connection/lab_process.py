"""Start and stop a real lab server as a subprocess (tests, benchmarks, the demo).

Never imports `server`: the lab is reached only through its command line, its access file and
HTTP, exactly as a user would reach it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from ground.child_process import dies_with_parent

# `lab serve` in a fresh interpreter: the same command a user types (the venv installs `lab`)
COMMAND = (sys.executable, "-m", "lab", "serve")


class LabStartError(RuntimeError):
    """The lab exited or did not become healthy; the message carries its output."""


@dataclass
class LabProcess:
    process: subprocess.Popen
    access: dict
    access_file: Path
    log_path: Path
    # a log start_lab made in the temp folder, no caller's file: removed once the lab has ended as asked
    # (stopped cleanly, or killed), kept when it ended otherwise, so only a failure leaves one behind
    owns_log: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM, wait, return the exit code (0 for a clean shutdown)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise LabStartError(f"lab pid {self.pid} ignored SIGTERM for {timeout}s; killed; its log: "
                                f"{self.log_path}") from None
        if code == 0:
            self._discard_log()
        return code

    def kill(self) -> int:
        """SIGKILL: the crash a durable store must survive (a temp log of start_lab's own goes too)."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        code = self.process.wait()
        self._discard_log()
        return code

    def _discard_log(self) -> None:
        if self.owns_log:
            self.log_path.unlink(missing_ok=True)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def start_lab(dbdir: str | Path, access_file: str | Path, port: int = 0, reopen: bool = False,
              extra_args: tuple[str, ...] = (), timeout: float = 60.0,
              log_path: str | Path | None = None, command: tuple[str, ...] = COMMAND,
              tied: bool = False) -> LabProcess:
    """Run `lab serve DBDIR ACCESSFILE PORT` as its own process, wait for its access file and a healthy /health.

    The lab's output goes to `log_path` (refused if it exists, appended to with `reopen`), or to a
    fresh temp file that `stop()` (exit 0) and `kill()` remove and a failed start carries in its
    error. `command` is how the server is started (scripts/retrieval_lab.py takes the
    same arguments). `tied`: the lab gets SIGTERM when the calling process dies (`lab run`,
    ground/child_process.py); call it from the thread that lives as long as the lab.
    """
    access_file = Path(access_file)
    args = [*command, str(dbdir), str(access_file), str(port), *extra_args]
    if reopen:
        args.append("--reopen")
    owns_log = log_path is None
    if log_path is None:
        fd, log_name = tempfile.mkstemp(prefix="retrieval-lab-", suffix=".log")
        log = os.fdopen(fd, "wb")
        log_path = Path(log_name)
    else:
        log_path = Path(log_path)
        log = open(log_path, "ab" if reopen else "xb")
    with log:
        # a tied lab has a session of its own: Ctrl-C reaches the `lab run` that started it, which
        # stops the stage first and the lab after, so the stage never sees its lab vanish
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   preexec_fn=dies_with_parent(signal.SIGTERM) if tied else None,
                                   start_new_session=tied)
    deadline = time.monotonic() + timeout
    access = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise _start_failed(f"lab exited with code {process.returncode}", log_path, owns_log)
        if access is None and access_file.exists():
            access = json.loads(access_file.read_text())  # written atomically: complete or absent
            if access.get("pid") != process.pid:
                process.kill()
                process.wait()
                raise _start_failed(f"{access_file} names pid {access.get('pid')}, started {process.pid}",
                                    log_path, owns_log)
        if access is not None and _healthy(access["base_url"]):
            return LabProcess(process, access, access_file, log_path, owns_log)
        time.sleep(0.02)
    process.kill()
    process.wait()
    raise _start_failed(f"lab not healthy after {timeout}s", log_path, owns_log)


def _start_failed(reason: str, log_path: Path, owns_log: bool) -> LabStartError:
    """The error carries the lab's output, so a log of start_lab's own has nothing more to keep."""
    output = log_path.read_text(errors="replace")
    if owns_log:
        log_path.unlink(missing_ok=True)
    return LabStartError(f"{reason}:\n{output}")


def _healthy(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False
