"""`lab compare`: two audited campaigns, paired B - A when they share their cohort (docs/compare.md).

Flags and output only; the work is compare.py, imported inside `run` (matplotlib is not needed for
`lab --help`). Its inputs are run directories in the standard layout (docs/cli.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ground.command import Command
from ground.run_dir import FILES, RunDir, run_directory

COMPARED = ("public", "report", "fixture", "relations", "protocol", "generation", "state", "plan")


COMPARE_DESCRIPTION = """Compare two audited campaigns: paired B - A when they share their cohort, side by side otherwise.

--a and --b are run directories (docs/cli.md): each side's public report, private report, fixture,
relations and protocol (and state, plan and generation when present) are its files there;
--a-report, --b-fixture and so on give one elsewhere. Without a protocol file the repository's
frozen protocol whose digest the report names is used. Both sides are audited first; a failing
audit, a query id labelled differently by the two sides, or an existing --output-dir is refused
(exit 2) and nothing is written. Writes DIR/comparison.json, DIR/comparison.md and
DIR/comparison.html (docs/compare.md)."""


def configure_compare(parser: argparse.ArgumentParser) -> None:
    for side in ("a", "b"):
        parser.add_argument(f"--{side}", required=True, type=run_directory, metavar="RUN_DIR",
                            help=f"run directory of side {side.upper()}")
        for name in COMPARED:
            parser.add_argument(f"--{side}-{name}", type=Path, metavar="FILE",
                                help=f"side {side.upper()}'s {name} file (default: {FILES[name]} in its run directory)")
    parser.add_argument("--output-dir", required=True, type=Path, metavar="DIR",
                        help="new directory for comparison.json, .md, .html")


def run_compare(args: argparse.Namespace) -> int:
    from evaluator.compare.compare import RunFiles, run_comparison

    files = {}
    for side in ("a", "b"):
        given = {name: getattr(args, f"{side}_{name}") for name in COMPARED}
        public = given.pop("public") or RunDir(getattr(args, side)).public
        files[side] = RunFiles(public, **given)
    paths = run_comparison(files["a"], files["b"], args.output_dir, log=lambda line: print(line, file=sys.stderr))
    for path in paths.values():
        print(path)
    return 0


COMPARE = Command("compare", "compare two audited campaigns (run directories) into a new directory",
                  description=COMPARE_DESCRIPTION, configure=configure_compare, run=run_compare)
