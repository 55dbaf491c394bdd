"""`lab pool`: several datasets' audited campaigns pooled under a suite declared beforehand (docs/suites.md).

Flags and output only; the work is suite_pool.py, imported inside `run`. Its inputs are run
directories in the standard layout (docs/cli.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ground.command import Command
from ground.errors import RefusedInput
from ground.run_dir import RunDir, run_directory

POOL_DESCRIPTION = """Pool the primary contrast of several datasets' campaigns under a suite declared beforehand.

Each --runs entry is a run directory (docs/cli.md) holding the campaign's report.json and its
frozen inputs (fixture.json, relations.json and, when present, generation.json); its protocol is
the file the suite pins. Refused with exit 2, before anything is written: an existing --output-dir;
a report whose protocol digest the suite does not pin; a dataset given twice or not at all; a
protocol file that no longer has the pinned digest; a report that fails its audit (every check).
Writes DIR/pooled.json, DIR/pooled.md and DIR/pooled.html: one row per dataset and the pooled row
(docs/suites.md). `lab demo --samples` ends with the same pooling."""


def configure_pool(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--suite", required=True, type=Path, metavar="FILE", help="suite file (protocols/frozen/suites/suite-*.json)")
    parser.add_argument("--runs", required=True, type=run_directory, nargs="+", metavar="RUN_DIR",
                        help="one run directory per dataset")
    parser.add_argument("--output-dir", required=True, type=Path, metavar="DIR",
                        help="new directory for pooled.json, .md, .html")


def run_pool(args: argparse.Namespace) -> int:
    from evaluator.pool.suite_pool import pool_reports
    from evaluator.views.contrast_text import pooled_sentence

    reports = [RunDir(run).report for run in args.runs]
    missing = [str(report) for report in reports if not report.is_file()]
    if missing:
        raise RefusedInput(f"no private report in run directory: {', '.join(missing)}")
    result, paths = pool_reports(args.suite, reports, args.output_dir, log=lambda line: print(line, file=sys.stderr))
    print(pooled_sentence(result), file=sys.stderr)
    for path in paths.values():
        print(path)
    return 0


POOL = Command("pool", "pool several datasets' campaigns (run directories) under a declared suite",
               description=POOL_DESCRIPTION, configure=configure_pool, run=run_pool)
