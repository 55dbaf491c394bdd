"""`lab audit`: re-verify a private report from its frozen inputs (docs/audit.md).

Flags and output only; the work is audit.py, imported inside `run`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from pathlib import Path

from evaluator.verification.check_placement import add_cluster_flags, options_of
from ground.command import Command
from ground.run_dir import add_file, add_run_dir, resolve

AUDIT_DESCRIPTION = """Audit a private report against its fixture, relations and protocol (and what was published from it).

Prints `ok <check>` for each check that holds and `FAIL <check> <location>: <what>` for each
failure; exit code 0 only when every check holds (1 otherwise, 2 for unreadable inputs). Writes
nothing. With --public the public report is derived again from the private report and compared
whole, and every file export wrote beside it (HTML, Markdown, figures, runs, qrels) is rendered
again and compared byte for byte. With --state and --plan those files must be the ones the report
embeds. With --run-dir, --generation, --state, --plan and --public are its files when they exist.
The page checks run in this process or on a Dask cluster (--workers, --scheduler; docs/scale.md)."""


def configure_audit(parser: argparse.ArgumentParser) -> None:
    add_run_dir(parser)
    add_file(parser, "--report", "report", "private report written by evaluate")
    add_file(parser, "--fixture", "fixture", "the fixture the report was evaluated on")
    add_file(parser, "--relations", "relations", "the relations the lab was prepared with")
    add_file(parser, "--protocol", "protocol", "the frozen protocol")
    add_file(parser, "--generation", "generation", "generation.json: also check its digest and the embed+HTTP times")
    add_file(parser, "--state", "state", "the prepare state file: must be the state the report embeds")
    add_file(parser, "--plan", "plan", "the plan file: must be the plan the report embeds")
    add_file(parser, "--public", "public",
             "public report written by export: derived again and compared, with the files beside it")
    add_cluster_flags(parser)
    parser.add_argument("--leaderboard", type=Path, metavar="DIR",
                        help="audit a leaderboard instead: compute it again from the reports it names and compare "
                             "the board and every file (docs/leaderboard.md)")


def run_audit(args: argparse.Namespace, leaderboard_audit: Callable[[Path], int]) -> int:
    from evaluator.audit.audit import audit

    if args.leaderboard is not None:
        return leaderboard_audit(args.leaderboard)
    optional = {name: resolve(args, f"--{name}", name, optional=True)
                for name in ("generation", "state", "plan", "public")}
    result = audit(resolve(args, "--report", "report"), resolve(args, "--fixture", "fixture"),
                   resolve(args, "--relations", "relations"), resolve(args, "--protocol", "protocol"),
                   optional["generation"], public_path=optional["public"], state_path=optional["state"],
                   plan_path=optional["plan"], cluster=options_of(args))
    print(f"audit: {'all checks hold' if result.ok else f'{len(result.failures)} failure(s)'}")
    return 0 if result.ok else 1


def audit_command(leaderboard_audit: Callable[[Path], int]) -> Command:
    """`lab audit`, given the leaderboard's own audit for --leaderboard: a leaderboard is made from
    audited reports (evaluator/leaderboard/), so it sits above this package and is handed in by the
    stage's command table (evaluator/evaluator_commands.py) rather than imported from here."""
    return Command("audit", "re-verify a private report (and its public report) from the frozen inputs",
                   description=AUDIT_DESCRIPTION, configure=configure_audit,
                   run=partial(run_audit, leaderboard_audit=leaderboard_audit))
