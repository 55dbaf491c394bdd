"""Long form of the crash check: SIGKILL the lab >= 20 times during a batch load, reopen, replay.

Prints the number of kills, how many acknowledged batches were verified durable after a kill, and
whether the final store digest equals an uninterrupted run's with no duplicate and no lost write.
The short form (3 kills) runs in the default suite: tests/test_server_reliability.py.

    .venv/bin/python bench/kill_restart.py [--kills 20] [--seed 11]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_server_reliability import kill_restart_run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", type=Path, help="also write the headline figures here (bench/run_all.py reads it)")
    args = parser.parse_args()
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
