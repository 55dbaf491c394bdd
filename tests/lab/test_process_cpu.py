"""bench/process_cpu.py: CPU seconds per process of a real process tree, the root's from wait4."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.process_cpu import CpuSampler, per_job_lines, speedup_bound

BURN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"


def test_a_child_and_its_parent_are_counted_apart_and_sum_to_the_tree():
    # the parent burns 0.3 s, starts a child that burns 0.6 s, waits for it and burns 0.3 s more
    child = BURN.format(seconds=0.6)
    parent = (BURN.format(seconds=0.3) + "import subprocess, sys\n"
              f"subprocess.run([sys.executable, '-c', {child!r}], check=True)\n" + BURN.format(seconds=0.3))
    process = subprocess.Popen([sys.executable, "-c", parent])
    sampler = CpuSampler(process.pid)
    _, status, usage = os.wait4(process.pid, 0)
    sampler.stop()
    assert os.waitstatus_to_exitcode(status) == 0
    tree = usage.ru_utime + usage.ru_stime
    parts = sampler.breakdown(tree)
    assert set(parts) == {"evaluator", "other"} and sampler.count("other") == 1
    assert sum(parts.values()) == tree
    assert 0.35 <= parts["other"] <= 0.75  # the child's 0.6 s, less at most one sampling interval
    assert parts["evaluator"] >= 0.55  # the parent's 0.6 s (plus what the last sample missed of the child)

    lines, figures = per_job_lines("evaluate", {"cpu_seconds": parts, "lab_cpu_seconds": 0.5, "cpu_workers": 0,
                                                "load_before": [1.0, 1.0, 1.0], "load_after": [2.0, 1.5, 1.0]},
                                   jobs=100, cores=2)
    assert figures["total_cpu_ms_per_job"] == pytest.approx((tree + 0.5) * 10.0, rel=1e-12)  # summed in another order
    assert figures["cpu_bound_jobs_per_second"] == pytest.approx(2 * 100 / (tree + 0.5), rel=1e-12)
    assert "lab server 5.000" in lines[0] and "load 1.0 / 1.0 / 1.0 before, 2.0 / 1.5 / 1.0 after" in lines[0]


def test_the_speedup_bound_is_the_one_worker_wall_over_the_two_worker_cpu_per_core():
    # full7's audit figures: 137.1 s at 1 worker; at 2 the tree spent 65.0 + 136.1 CPU seconds,
    # which 2 cores cannot finish in under 100.6 s
    one = {"seconds": 137.1, "cpu_seconds": {"evaluator": 57.8, "resource tracker": 0.0, "worker": 100.6}}
    two = {"seconds": 129.5, "cpu_seconds": {"evaluator": 65.0, "resource tracker": 0.0, "worker": 136.1}}
    bound, note = speedup_bound(one, two, cores=2)
    assert bound == pytest.approx(2 * 137.1 / (65.0 + 136.1), rel=1e-12)
    assert "at 1 worker: command 57.8 + worker 100.6 = 158.4" in note
    assert "at 2: command 65.0 + worker 136.1 = 201.1" in note and "resource tracker" not in note
    assert note.endswith(f"at least {201.1 / 2:.1f} s, at most {bound:.2f}x")
    assert speedup_bound(one, two, cores=4)[0] == pytest.approx(2 * bound, rel=1e-12)
