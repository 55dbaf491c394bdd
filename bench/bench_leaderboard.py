"""Time of a leaderboard at the field's scale (docs/leaderboard.md).

    lab bench leaderboard [--methods 20] [--queries 2417] [--datasets 3] [--permutations 10000]

Builds D synthetic reports of M methods over N MuSiQue-style queries each (ids with single-hop
numbers shared between neighbours, so the cluster rule forms real clusters; metric values on the
nDCG grid; ten timed jobs a method), then times what `lab leaderboard --suite` does after the
reports' own audits: the strata from the reports (evaluator/derived/leaderboard_inputs.py), the
board (every pair's sign-flip test over the pooled clusters, Holm, letters, the bootstrap intervals)
and its views (tables, figure, Markdown, HTML, CSV). Prints wall seconds beside the target
(<= 60 s at 20 x 2,417 x 3) with the load average; nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

TARGET_SECONDS = 60.0


def synthetic_report(dataset: int, methods: int, queries: int, seed: int) -> tuple[dict, dict]:
    """(report, source) with the fields a board reads: rows, jobs, the protocol's evaluation."""
    rng = np.random.default_rng(seed + dataset)
    ids = [f"2hop__{dataset * 10 ** 6 + i}_{dataset * 10 ** 6 + i + (i % 3 == 0)}" for i in range(queries)]
    base = rng.random(queries)
    rows: list[dict] = []
    jobs: list[dict] = []
    for m in range(methods):
        shift = 0.01 * m
        values = np.clip(base + shift + rng.normal(0.0, 0.15, queries), 0.0, 1.0)
        for q, v in zip(ids, values):
            rows.append({"query_id": q, "method": f"method_{m:02d}", "category": "2hop",
                         "metrics": {"ndcg@10": float(round(v * 64) / 64)}})
        for k in range(10):
            jobs.append({"order": len(jobs), "method": f"method_{m:02d}", "http_ms": 1.0 + m * 0.1 + k * 0.01,
                         "retrieval_micros": 500 + 10 * m})
    protocol = {"evaluation": {"clusters": {"rule": "musique_single_hop_components_v1"}}}
    return {"rows": rows, "jobs": jobs, "protocol": protocol}, {"queries": [], "documents": []}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench leaderboard", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", type=int, default=20)
    parser.add_argument("--queries", type=int, default=2417)
    parser.add_argument("--datasets", type=int, default=3)
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    from evaluator.derived.leaderboard_inputs import report_stratum
    from evaluator.numbers.leaderboard import board
    from evaluator.views import leaderboard_views as views
    from evaluator.views import plotting

    reports = [synthetic_report(d, args.methods, args.queries, 20261203) for d in range(args.datasets)]
    settings = {"metric": "ndcg@10", "unit": "cluster", "weights": "equal", "alpha": 0.05, "power": 0.8,
                "seed": 20260921, "resamples": args.resamples, "confidence": 0.95, "permutations": args.permutations,
                "adjustment": "holm over every pair of the board"}
    load = os.getloadavg()[0]
    started = time.perf_counter()
    strata = [report_stratum(f"dataset{d}", [report], source, "ndcg@10") for d, (report, source) in enumerate(reports)]
    read = time.perf_counter() - started
    result = board(strata, settings)
    computed = time.perf_counter() - started
    document = {**result, "title": "bench", "inputs": {"suite": None, "reports": []}}
    svg = plotting.svg(views.cost_figure(document), views.FIGURE)
    views.page("bench", document, svg)
    views.markdown("bench", document, "f.svg")
    views.csv_text(document)
    seconds = time.perf_counter() - started
    pairs = result["pairs_tested"]
    groups = len({c for row in result["methods"] for c in row["letters"]})
    print(f"leaderboard: {args.methods} methods x {args.queries:,} queries x {args.datasets} datasets "
          f"({result['units']:,} cluster units, {pairs} pairs, {args.permutations:,} sign patterns, "
          f"{args.resamples:,} resamples): {seconds:.1f} s wall (read {read:.1f} s, board {computed - read:.1f} s, "
          f"views {seconds - computed:.1f} s) {'within' if seconds <= TARGET_SECONDS else 'OVER'} the "
          f"{TARGET_SECONDS:.0f} s target; {groups} letters; load average {load:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end on {os.cpu_count()} CPUs", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"bench": "leaderboard", "seconds": seconds, "board_seconds": computed - read,
                                         "methods": args.methods, "queries": args.queries, "datasets": args.datasets,
                                         "load_average": load}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
