"""bench/phases.py: a stage's phases timed from the lines a real child process prints."""

from __future__ import annotations

import io
import subprocess
import sys
import time

import pytest

from bench.phases import EVALUATE_PHASES, PhaseClock, phase_line

# evaluate's lines as evaluate prints them, with pauses between the phases
CHILD = r"""
import sys, time
def say(line, pause):
    print(line, file=sys.stderr, flush=True); time.sleep(pause)
time.sleep(0.2)
say("evaluate: plan pinned /tmp/plan.json (10 jobs)", 0.3)
say("evaluate: 9/10 jobs (90%) 30.0 jobs/s ETA 0s", 0.0)
say("evaluate: 10/10 jobs (100%) 30.0 jobs/s ETA 0s", 0.2)
say("evaluate: base pools fetched and checked (3 queries, lexical top 100)", 0.1)
"""


def timed(script: str) -> tuple[dict | None, float, str]:
    echo = io.StringIO()
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    clock = PhaseClock(child.stderr, started, EVALUATE_PHASES, echo=echo)
    child.wait()
    ended = time.perf_counter() - started
    return clock.phases(ended), ended, echo.getvalue()


def test_each_phase_ends_at_its_marker_and_the_phases_add_up_to_the_stage():
    phases, ended, echoed = timed(CHILD)
    assert list(phases) == ["start", "jobs", "base pools", "finish"]
    assert sum(phases.values()) == pytest.approx(ended)
    # each line is read after the child has slept before it, so the pauses bound each phase's end
    # from below (a line read late under load shortens the next phase, never the running total);
    # 90% is not the end of the jobs
    ends = [sum(list(phases.values())[:i + 1]) for i in range(3)]
    assert ends[0] >= 0.2 and ends[1] >= 0.5 and ends[2] >= 0.7 and min(phases.values()) >= 0
    assert "evaluate: 9/10 jobs" in echoed and echoed.count("\n") == 4  # every line passed through
    line = phase_line("evaluate", phases, 10)
    assert line.startswith("evaluate: phases start ") and f"{10 / phases['jobs']:.1f} jobs/s" in line


def test_a_marker_that_never_appears_gives_no_figure():
    phases, _, _ = timed(CHILD.replace("base pools fetched", "pools done"))
    assert phases is None
