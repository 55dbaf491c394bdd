"""Server resource sampling: CPU time and RSS of the lab process, from a background thread.

psutil reads /proc of the server's PID; nothing runs inside the server, so the measurement does
not depend on the code it measures. Samples are (seconds since start, user+system CPU seconds, RSS
bytes); the summary gives CPU seconds used and peak RSS over the campaign.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence

import psutil

from ground.errors import RefusedInput


class ResourceMonitor:
    def __init__(self, pid: int, interval: float = 0.2, max_samples: int = 20000):
        try:
            self.process = psutil.Process(pid)
            self.process.cpu_times()
        except (psutil.NoSuchProcess, psutil.AccessDenied) as exc:
            raise RefusedInput(f"--server-pid {pid}: cannot sample that process ({exc})") from None
        self.pid, self.interval, self.max_samples = pid, interval, max_samples
        self.samples: list[list[float]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="resource-monitor", daemon=True)
        self._start = 0.0

    def __enter__(self) -> "ResourceMonitor":
        self._start = time.monotonic()
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._stop.is_set():
            self._stop.set()
            self._thread.join()
            self.sample()

    def sample(self) -> None:
        try:
            with self.process.oneshot():
                cpu = self.process.cpu_times()
                rss = self.process.memory_info().rss
        except psutil.Error as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return
        if len(self.samples) < self.max_samples:
            self.samples.append([round(time.monotonic() - self._start, 6), cpu.user + cpu.system, rss])

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def summary(self) -> dict:
        if not self.samples:
            return {"pid": self.pid, "samples": 0, "errors": self.errors}
        first, last = self.samples[0], self.samples[-1]
        return {
            "pid": self.pid,
            "interval_seconds": self.interval,
            "samples": len(self.samples),
            "wall_seconds": last[0] - first[0],
            "cpu_seconds": last[1] - first[1],
            "rss_bytes_max": max(s[2] for s in self.samples),
            "rss_bytes_first": first[2],
            "rss_bytes_last": last[2],
            "errors": self.errors,
            "series": self.samples,
        }


def combined(summaries: Sequence[Mapping]) -> dict:
    """One `resources` block over the lab server processes a campaign ran against (a resumed one ran
    against several): a single process's summary as it is; several summed (times and samples),
    memory the first's first, the largest and the last's last, each process's own summary kept in
    `each` and their series joined in order (the audit checks each part against its summary)."""
    measured = [s for s in summaries if s.get("samples")]
    if len(summaries) == 1 or not measured:
        return {**summaries[-1], "processes": len(summaries)}
    return {
        "pid": measured[-1]["pid"],
        "interval_seconds": measured[-1]["interval_seconds"],
        "samples": sum(s["samples"] for s in measured),
        "wall_seconds": sum(s["wall_seconds"] for s in measured),
        "cpu_seconds": sum(s["cpu_seconds"] for s in measured),
        "rss_bytes_max": max(s["rss_bytes_max"] for s in measured),
        "rss_bytes_first": measured[0]["rss_bytes_first"],
        "rss_bytes_last": measured[-1]["rss_bytes_last"],
        "errors": [error for s in summaries for error in s.get("errors", [])],
        "series": [sample for s in measured for sample in s["series"]],
        "processes": len(summaries),
        "each": [{k: v for k, v in s.items() if k != "series"} for s in summaries],
    }
