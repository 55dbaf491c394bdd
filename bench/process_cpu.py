"""CPU seconds per process of a stage's tree, and of the lab beside it: where a stage's work goes.

On 2 saturated cores a stage's throughput is bounded by the CPU it costs per unit of work across
every process that serves it (the evaluator, its Dask workers, the lab server), whatever the wall
clock says under another load; so the bench reports CPU per job, process by process. Wall time
moves with the machine's load, CPU seconds per job barely do.

`CpuSampler` samples the user + system CPU of a process and of its descendants every 0.2 s and
keeps the last figure seen per process (a process's CPU only grows). The root's own figure is
taken at the end from `wait4`'s usage, which is the root plus every descendant it reaped, minus
the descendants' sampled figures: so the tree's total is exact and a descendant's last 0.2 s at
most is counted as the root's.
"""

from __future__ import annotations

import threading

import psutil

INTERVAL = 0.2


def role(process: psutil.Process) -> str:
    """A descendant's name in the breakdown, from its command line."""
    try:
        line = " ".join(process.cmdline())
    except psutil.Error:
        return "other"
    if "resource_tracker" in line:
        return "resource tracker"
    if "spawn_main" in line or "distributed" in line:
        return "worker"  # Dask's local workers are spawned processes of the evaluator
    return "other"


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


class CpuSampler:
    """The last CPU seconds seen per descendant of `pid`, sampled every INTERVAL s until `stop`."""

    def __init__(self, pid: int):
        self.root = psutil.Process(pid)
        self.seen: dict[int, tuple[str, float]] = {}  # pid -> (role, CPU seconds)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        try:
            children = self.root.children(recursive=True)
        except psutil.Error:
            return
        for child in children:
            try:
                seconds = cpu_seconds(child)
                name = self.seen[child.pid][0] if child.pid in self.seen else role(child)
            except psutil.Error:  # exited between the listing and the read
                continue
            self.seen[child.pid] = (name, seconds)

    def _run(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(INTERVAL):
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def count(self, name: str) -> int:
        return sum(1 for seen, _ in self.seen.values() if seen == name)

    def breakdown(self, tree_seconds: float) -> dict[str, float]:
        """CPU seconds per role, the root as "evaluator" (`tree_seconds`: wait4's user + system)."""
        roles: dict[str, float] = {}
        for name, seconds in self.seen.values():
            roles[name] = roles.get(name, 0.0) + seconds
        return {"evaluator": max(0.0, tree_seconds - sum(roles.values())), **dict(sorted(roles.items()))}


def per_job_lines(stage: str, result: dict, jobs: int, cores: int) -> tuple[list[str], dict]:
    """The printed breakdown of a stage's CPU per job (`result`: the bench's figures of the stage)
    and its figures, with the bound it implies: `cores` saturated cores give at most
    cores / (total CPU per job) jobs per second."""
    parts = dict(result["cpu_seconds"])
    if result.get("lab_cpu_seconds") is not None:
        parts["lab server"] = result["lab_cpu_seconds"]
    workers = result.get("cpu_workers", 0)
    load = f"load {' / '.join(map(str, result['load_before']))} before, {' / '.join(map(str, result['load_after']))} after"
    total = sum(parts.values())
    per_job = {name: seconds * 1000.0 / jobs for name, seconds in parts.items()}
    bound = cores * jobs / total if total else None
    shown = ", ".join(f"{name} {ms:.3f}" + (f" ({workers} processes)" if name == "worker" and workers > 1 else "")
                      for name, ms in per_job.items())
    lines = [f"{stage}: CPU per job, ms: {shown}; total {total * 1000.0 / jobs:.3f} ms over {jobs:,} jobs"
             + (f" -> at most {bound:.1f} jobs/s on {cores} saturated cores" if bound else "")
             + f" ({load})"]
    return lines, {"cpu_seconds": parts, "cpu_ms_per_job": per_job, "total_cpu_ms_per_job": total * 1000.0 / jobs,
                   "cpu_bound_jobs_per_second": bound, "cores": cores, "jobs": jobs}


def speedup_bound(one: dict, two: dict, cores: int) -> tuple[float, str]:
    """The most a stage run at 2 workers can gain over its run at 1 (`one`, `two`: the bench's
    figures of each) on `cores` saturated cores: the 2-worker run cannot take less wall time than
    its own CPU seconds over the cores. With the CPU split process by process, the note that says
    where that CPU went."""
    spent = {run: sum(result["cpu_seconds"].values()) for run, result in (("one", one), ("two", two))}
    bound = cores * one["seconds"] / spent["two"] if spent["two"] else float("inf")

    def split(result: dict) -> str:  # the root is the command itself (`breakdown` names it for evaluate)
        return " + ".join(f"{'command' if name == 'evaluator' else name} {seconds:.1f}"
                          for name, seconds in result["cpu_seconds"].items() if seconds >= 0.05)

    note = (f"CPU s at 1 worker: {split(one)} = {spent['one']:.1f}; at 2: {split(two)} = {spent['two']:.1f}; "
            f"on {cores} saturated cores the 2-worker run takes at least {spent['two'] / cores:.1f} s, "
            f"at most {bound:.2f}x")
    return bound, note
