"""Long form of the crash check: SIGKILL the lab >= 20 times during a batch load, reopen, replay.

Prints the number of kills, how many acknowledged batches were verified durable after a kill, and
whether the final store digest equals an uninterrupted run's with no duplicate and no lost write.
The short form (3 kills) runs in the default suite (tests/server/test_server_reliability.py), with the
engine defined here, `kill_restart_run`.

    lab bench kill-restart [--kills 20] [--seed 11]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from evaluator.connection.client import LabClient, LabError
from evaluator.connection.lab_process import start_lab
from ground.canonical import digest

# ---------------------------------------------------------------- a deterministic batch load

LOAD_DIMENSIONS = 16
LOAD_SPACE = {"provider": "test", "model": "kill-restart", "revision": "r1", "dimensions": LOAD_DIMENSIONS}
LOAD_PROVENANCE = {"origin": "tool_observation", "method": "test", "method_revision": "v1",
                   "evidence_ref": "test:1", "model": None}


def _memory_id(scope: str, external_id: str) -> str:
    # Computed the way docs/design.md §6 defines it, so the load can name endpoints before they exist.
    return "mem-" + digest([scope, "memory", external_id])[:32]


def build_load(scope: str, seed: int, memories: int = 240, relations: int = 320,
               size: int = 20) -> list[tuple[str, list[dict]]]:
    """A deterministic load: memories, then their embeddings, then relations, in batches."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(500)]
    mem_items = [{"idempotency_key": f"m{i}", "external_id": f"m{i}",
                  "payload": {"content": " ".join(rng.choice(words) for _ in range(60)), "metadata": {"n": str(i)}}}
                 for i in range(memories)]
    ids = [_memory_id(scope, f"m{i}") for i in range(memories)]
    emb_items = [{"idempotency_key": f"e{i}", "record_id": ids[i], "revision": 1, "space": LOAD_SPACE,
                  "vector": [float(rng.randint(-99, 99) or 1) / 64 for _ in range(LOAD_DIMENSIONS)]}
                 for i in range(memories)]
    rel_items = []
    for j in range(relations):
        a, b = rng.sample(range(memories), 2)
        rel_items.append({"idempotency_key": f"r{j}", "external_id": f"r{j}", "kind": rng.choice(["same_entity", "semantic_related"]),
                          "source": {"id": ids[a], "revision": 1}, "target": {"id": ids[b], "revision": 1},
                          "provenance": LOAD_PROVENANCE})
    load = []
    for route, items in (("memories", mem_items), ("embeddings", emb_items), ("relations", rel_items)):
        load += [(route, items[k:k + size]) for k in range(0, len(items), size)]
    return load


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench kill-restart", description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", type=Path, help="also write the headline figures here (`lab bench all` reads it)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kill-restart-") as tmp:
        report = kill_restart_run(Path(tmp), kills=args.kills, seed=args.seed)
    print(f"kills: {report.kills} (SIGKILL at random points of the load, seed {args.seed}), "
          f"{report.mid_load} of them mid-load")
    print(f"acknowledged batches verified durable after a kill: {report.acknowledged_then_replayed}")
    print(f"lost acknowledged batches: {len(report.lost)}")
    print(f"counts after replay: {report.counts} (expected {report.expected_counts})")
    print(f"final digest {report.final.get('all')} vs uninterrupted {report.reference.get('all')}")
    seconds = time.perf_counter() - started
    print(f"result: {'PASS' if report.ok else 'FAIL'} in {seconds:.1f} s")
    if args.json:
        args.json.write_text(json.dumps({"bench": "kill_restart", "kills": report.kills, "ok": report.ok,
                                         "lost": len(report.lost), "seconds": seconds}, indent=1))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
