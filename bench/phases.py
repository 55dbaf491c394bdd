"""Where a stage's wall time goes, read from the lines it already prints: each phase ends at the
first stderr line that carries its marker, so the bench needs no hook inside the command and the
command's own output is passed through unchanged.

Evaluate's phases (evaluator/evaluate/evaluate.py): start (frozen inputs loaded, lab snapshot,
plan built, checker up) ends when the plan is pinned; the jobs end with the last progress line;
the base pools (the cross-method checks first) end with their own line; finish (the after
snapshot, derive, seal, save) runs to the exit."""

from __future__ import annotations

import re
import sys
import threading
import time
from typing import IO, Callable

Marker = Callable[[str], bool]


def _all_jobs_done(line: str) -> bool:
    """Evaluate's last progress line: `evaluate: N/N jobs ...` (done equals total)."""
    found = re.match(r"evaluate: (\d+)/(\d+) jobs ", line)
    return found is not None and found.group(1) == found.group(2)


# (phase, marker): a phase ends at the first line its marker accepts, in this order
EVALUATE_PHASES: tuple[tuple[str, Marker], ...] = (
    ("start", lambda line: line.startswith("evaluate: plan pinned")),
    ("jobs", _all_jobs_done),
    ("base pools", lambda line: line.startswith("evaluate: base pools fetched and checked")),
)


class PhaseClock:
    """Reads `stream` (a child's stderr) on a thread, copies every line to `echo`, and notes when
    each marker first appears, in seconds since `started`."""

    def __init__(self, stream: IO[str], started: float, markers: tuple[tuple[str, Marker], ...], echo: IO[str] = sys.stderr):
        self.stream, self.started, self.markers, self.echo = stream, started, markers, echo
        self.seen: dict[str, float] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for line in self.stream:
            self.echo.write(line)
            self.echo.flush()
            for phase, marker in self.markers:
                if phase not in self.seen and marker(line):
                    self.seen[phase] = time.perf_counter() - self.started

    def phases(self, ended: float) -> dict[str, float] | None:
        """Each phase's seconds (the last, "finish", from the last marker to `ended`), or None when
        a marker never appeared (the command printed otherwise: no figure is better than a wrong one)."""
        self._thread.join()
        if len(self.seen) != len(self.markers):
            return None
        out, previous = {}, 0.0
        for phase, _ in self.markers:
            out[phase] = self.seen[phase] - previous
            previous = self.seen[phase]
        out["finish"] = ended - previous
        return out


def jobs_alone(phases: dict[str, float], jobs: int) -> str:
    """The jobs' own rate and the seconds the stage spent beyond them."""
    return (f"the jobs alone {jobs / phases['jobs']:.1f} jobs/s, "
            f"{sum(phases.values()) - phases['jobs']:.1f} s beyond them")


def phase_line(stage: str, phases: dict[str, float], jobs: int) -> str:
    shown = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items())
    return f"{stage}: phases {shown}; {jobs_alone(phases, jobs)}"
