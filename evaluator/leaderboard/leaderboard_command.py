"""`lab leaderboard`: flags and output only; the work is evaluator/leaderboard/leaderboard_files.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ground.command import Command
from ground.run_dir import run_directory

LEADERBOARD_DESCRIPTION = """Rank every method of audited campaigns and group those the data cannot tell apart.

--runs takes one run directory, several of one protocol (their rows merged: a method measured
twice must agree), or with --suite FILE one per dataset of the suite (pooled as `lab pool` pools:
its unit, weights, seed and resamples). Every report is audited first. Each method gets its mean
with its interval, a group letter (every pair tested by the paired sign-flip randomization,
Holm-adjusted over all pairs; methods sharing a letter are not separated at --alpha), its HTTP and
server p50 from the same campaigns and its place on the Pareto front of quality against HTTP time;
each adjacent pair its detectable effect and the queries that would separate it. Writes
DIR/leaderboard.json, .md, .html, .csv and .svg; an existing DIR, reports of different protocols
without --suite, a metric the reports lack and a failing audit are refused (exit 2) and nothing is
written. `lab audit --leaderboard DIR` computes the board again and compares (docs/leaderboard.md)."""


def configure_leaderboard(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", required=True, type=run_directory, nargs="+", metavar="RUN_DIR",
                        help="run directories (one per dataset with --suite)")
    parser.add_argument("--suite", type=Path, metavar="FILE", help="pool the datasets of this suite (protocols/frozen/suites/suite-*.json)")
    parser.add_argument("--metric", default="ndcg@10", help="the metric methods are ranked by (default: ndcg@10)")
    parser.add_argument("--alpha", type=float, default=0.05, help="the level a pair is separated at (default: 0.05)")
    parser.add_argument("--output-dir", required=True, type=Path, metavar="DIR", help="new directory for the board")


def run_leaderboard(args: argparse.Namespace) -> int:
    from evaluator.leaderboard.leaderboard_files import write_leaderboard
    from ground.errors import RefusedInput

    if not 0.0 < args.alpha < 1.0:
        raise RefusedInput(f"--alpha must lie strictly between 0 and 1, got {args.alpha}")
    paths = write_leaderboard(args.runs, args.suite, args.metric, args.alpha, args.output_dir,
                              log=lambda line: print(line, file=sys.stderr))
    for path in paths.values():
        print(path)
    return 0


LEADERBOARD = Command("leaderboard", "rank audited campaigns' methods, group the inseparable, price each by latency",
                      description=LEADERBOARD_DESCRIPTION, configure=configure_leaderboard, run=run_leaderboard)


def run_leaderboard_audit(folder: Path) -> int:
    from evaluator.leaderboard.leaderboard_files import audit_leaderboard

    failures = audit_leaderboard(folder)
    for check, what in failures:
        print(f"FAIL {check} {what}")
    if not failures:
        print("ok leaderboard board, letters, p-values and every file recomputed")
    print(f"audit: {'all checks hold' if not failures else f'{len(failures)} failure(s)'}")
    return 0 if not failures else 1
