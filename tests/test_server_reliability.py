"""Crash safety: SIGKILL the lab at random points of a batch load, reopen, replay, compare.

`kill_restart_run` is also the engine of bench/kill_restart.py (the long form with >= 20 kills).
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from evaluator.campaign.client import LabClient, LabError
from evaluator.campaign.lab_process import start_lab
from tests.lab_fixtures import build_load

def _send(client: LabClient, route: str, items: list[dict]) -> dict:
    return {"memories": client.create_memories, "embeddings": client.attach_embeddings,
            "relations": client.assert_relations}[route](items)


@dataclass
class KillReport:
    kills: int = 0
    mid_load: int = 0  # kills that cut a pass short (the rest hit a lab at rest after its pass)
    acknowledged_then_replayed: int = 0  # batches acked before a kill, found durable after it
    lost: list[str] = field(default_factory=list)
    final: dict = field(default_factory=dict)
    reference: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    expected_counts: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.lost and self.final == self.reference and self.counts == self.expected_counts


def _counts(client: LabClient) -> dict:
    def total(lister) -> int:
        n, after = 0, None
        while True:
            page = lister(after=after, limit=1000)
            rows = page.get("records", page.get("relations"))
            n += len(rows)
            after = page["next"]
            if after is None:
                return n
    return {"memories": total(client.list_memories), "relations": total(client.list_relations),
            "journal": client.fence()["high_watermark"]}


def kill_restart_run(base: Path, kills: int, seed: int = 7, scope: str = "lab") -> KillReport:
    load = build_load(scope, seed)
    report = KillReport()
    report.expected_counts = {"memories": 240, "relations": 320, "journal": sum(len(i) for _, i in load)}

    reference = start_lab(base / "ref-db", base / "ref-access.json")
    with LabClient(reference.access) as client:
        started = time.perf_counter()
        for route, items in load:
            _send(client, route, items)
        load_seconds = time.perf_counter() - started
        report.reference = client.digest()
    assert reference.stop() == 0

    rng = random.Random(seed)
    dbdir = base / "db"
    process = start_lab(dbdir, base / "access-0.json")
    restarts = 0
    while True:  # one pass of the whole load per lab process
        acked: list[int] = []
        client = LabClient(process.access, timeout=10)
        killer = None
        if report.kills < kills:
            # Kill somewhere inside the load: replays of acked batches are fast, so aim past them.
            delay = rng.uniform(0.0, load_seconds)
            killer = threading.Timer(delay, process.kill)
            killer.start()
        finished = True
        for position, (route, items) in enumerate(load):
            try:
                answer = _send(client, route, items)
            except (httpx.HTTPError, LabError):
                finished = False
                break
            assert len(answer["receipts"]) == len(items)
            acked.append(position)
        client.close()
        if killer is not None:
            killer.join()
            if process.process.poll() is None:
                process.kill()  # the timer fired after the load finished: still a kill at rest
            report.kills += 1
            report.mid_load += not finished
            restarts += 1
            # Everything acknowledged before this kill must be durable: replaying it must answer
            # `replayed` for every item. Then the next pass replays the whole load from the start.
            process = start_lab(dbdir, base / f"access-{restarts}.json", reopen=True)
            with LabClient(process.access) as probe:
                for position in acked:
                    route, items = load[position]
                    answer = _send(probe, route, items)
                    if all(answer["replayed"]):
                        report.acknowledged_then_replayed += 1
                    else:
                        report.lost.append(f"batch {position} ({route}) acknowledged before kill {report.kills}")
            continue
        if finished:
            break
    with LabClient(process.access) as client:
        report.final = client.digest()
        report.counts = _counts(client)
    assert process.stop() == 0
    return report


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
