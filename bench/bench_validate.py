"""Time the independent page checks of a finished campaign, route by route.

    lab bench validate --run-dir RUN [--workers N | --scheduler ADDRESS] [--repeat K] [--json PATH]

Loads the run directory's frozen inputs and private report, builds the checker once and checks
every stored page (the report's rows, in row order) in this process, timing each page: ms/page
per route (mean, p50, p95, max), printed beside the target of 10 ms for a graph page on the
sample, with the load average. A page is checked exactly as evaluate and audit check it; every
page of a finished report must pass (a failure stops the bench: the figures would not be of a
real check). With --workers N (N >= 1) or --scheduler, the same pages are then checked again as
tasks on a Dask cluster (`evaluator.verification.dask_checks`, one task per query) and the wall time
and pages/s are printed; the cluster's start (processes, inputs loaded in each worker) is timed apart.
Nothing here asserts a speed: read the figures on a quiet machine (load < 2).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

TARGET_GRAPH_MS = 10.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench validate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-dir", type=Path, required=True, help="a finished run directory (report.json and its inputs)")
    parser.add_argument("--workers", type=int, default=0, help="also check on a local Dask cluster of N workers")
    parser.add_argument("--scheduler", help="also check on the Dask cluster at this address")
    parser.add_argument("--repeat", type=int, default=1, help="check every page K times in process (fresh checker each time)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)

    from evaluator.inputs import load_frozen
    from evaluator.verification.dask_checks import ClusterChecks
    from evaluator.verification.verify import Checker
    from ground.files import load_json

    run = args.run_dir
    generation = run / "generation.json"
    frozen = load_frozen(run / "protocol.json", run / "fixture.json", run / "relations.json",
                         generation if generation.is_file() else None)
    report = load_json(run / "report.json", "report")
    fence = report["plan"]["fence"]
    methods = report["protocol"]["methods"]
    rows = report["rows"]
    load_before = os.getloadavg()
    per_route: dict[str, list[float]] = {}
    build_s = []
    for _ in range(max(1, args.repeat)):
        started = time.perf_counter()
        checker = Checker(frozen, report["state"])
        build_s.append(time.perf_counter() - started)
        for row in rows:
            query = checker.queries[row["query_id"]]
            began = time.perf_counter()
            failures = checker.check_page(query, row["method"], row["page"], fence)
            per_route.setdefault(methods[row["method"]]["route"], []).append((time.perf_counter() - began) * 1000.0)
            if failures:
                print(f"error: a stored page fails its check: {failures[0]}", file=sys.stderr)
                return 1
    load_after = os.getloadavg()
    figures: dict = {"run_dir": str(run), "pages": len(rows), "documents": len(frozen.fixture["documents"]),
                     "checker_build_s": statistics.median(build_s), "routes": {},
                     "load_before": list(load_before), "load_after": list(load_after), "cpus": os.cpu_count(),
                     "target_graph_ms": TARGET_GRAPH_MS}
    print(f"{len(rows)} pages, {figures['documents']} documents; checker built in {figures['checker_build_s']:.2f} s")
    print("| route | pages | mean ms | p50 ms | p95 ms | max ms | target |")
    print("|---|---|---|---|---|---|---|")
    for route, values in per_route.items():
        entry = {"pages": len(values), "mean_ms": statistics.fmean(values), "p50_ms": percentile(values, 0.5),
                 "p95_ms": percentile(values, 0.95), "max_ms": max(values)}
        figures["routes"][route] = entry
        target = (f"<= {TARGET_GRAPH_MS:g} ms mean: {'met' if entry['mean_ms'] <= TARGET_GRAPH_MS else 'MISSED'}"
                  if route == "graph" else "")
        print(f"| {route} | {entry['pages']} | {entry['mean_ms']:.2f} | {entry['p50_ms']:.2f} | {entry['p95_ms']:.2f} | "
              f"{entry['max_ms']:.2f} | {target} |")
    total = sum(sum(v) for v in per_route.values()) / 1000.0
    print(f"in process: {total:.2f} s for {len(rows) * max(1, args.repeat)} page checks; "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after ({os.cpu_count()} CPUs)")
    if args.workers or args.scheduler:
        items = [(row["query_id"], row["method"], row["page"], fence) for row in rows]
        started = time.perf_counter()
        with ClusterChecks(frozen, report["state"], workers=args.workers, scheduler=args.scheduler) as checks:
            ready = time.perf_counter()
            found = checks.check_all(items)
            done = time.perf_counter()
            where = checks.description
        if any(found):
            print("error: a stored page fails its check on the cluster", file=sys.stderr)
            return 1
        figures["cluster"] = {"where": where, "start_s": ready - started, "check_s": done - ready,
                              "pages_per_s": len(items) / (done - ready), "load_after": list(os.getloadavg())}
        print(f"cluster ({where}): started in {ready - started:.1f} s, {len(items)} pages in {done - ready:.2f} s "
              f"({len(items) / (done - ready):.0f} pages/s; in process {len(rows) / (total / max(1, args.repeat)):.0f} "
              f"pages/s); load average {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
