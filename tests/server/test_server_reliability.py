"""Crash safety: SIGKILL the lab at random points of a batch load, reopen, replay, compare.

The engine, `kill_restart_run`, lives in bench/kill_restart.py (`lab bench kill-restart`, the long
form with >= 20 kills).
"""

from __future__ import annotations

import pytest

from bench.kill_restart import kill_restart_run


@pytest.mark.heavy  # kills and restarts the lab, round after round
def test_kill_restart_short(tmp_path):
    report = kill_restart_run(tmp_path, kills=3)
    assert report.kills == 3
    assert not report.lost, report.lost
    assert report.counts == report.expected_counts, "no duplicate, no lost write"
    assert report.final == report.reference


@pytest.mark.slow  # deselected by default (pyproject addopts); `make test-long` runs it
def test_kill_restart_long(tmp_path):
    report = kill_restart_run(tmp_path, kills=20, seed=11)
    assert report.kills >= 20 and report.ok, (report.lost, report.counts, report.expected_counts)
