"""Pool the primary contrast of several datasets' campaigns under a suite declared beforehand.

    python scripts/pool_graph_evaluations.py --suite protocols/suite-samples-v1.json \
        --reports RUN1/report.json RUN2/report.json RUN3/report.json --output DIR

Each report is a private report written by evaluate; its frozen inputs are read from beside it
(the layout `make demo` writes): `fixture.json`, `relations.json` and, when present,
`generation.json`; its protocol is the file the suite pins. Refused with exit 2, before anything
is written: an existing DIR; a report whose protocol digest the suite does not pin; a dataset
given twice (an extra report) or not at all; a protocol file that no longer has the pinned digest;
a report that fails its audit (evaluator.reporting.audit, every check). Writes DIR/pooled.json,
DIR/pooled.md and DIR/pooled.html: one row per dataset and the pooled row (docs/suites.md).
The work is evaluator/reporting/suite_pool.py (scripts/demo_samples.py runs the same).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.reporting.contrast_text import pooled_sentence  # noqa: E402
from evaluator.reporting.suite_pool import pool_reports  # noqa: E402
from protocols.cli import run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", required=True, type=Path, help="suite file (protocols/suite-*.json)")
    parser.add_argument("--reports", required=True, type=Path, nargs="+", help="one private report per dataset")
    parser.add_argument("--output", required=True, type=Path, help="new directory for pooled.json, .md, .html")
    args = parser.parse_args(argv)
    result, paths = pool_reports(args.suite, args.reports, args.output, log=lambda line: print(line, file=sys.stderr))
    print(pooled_sentence(result), file=sys.stderr)
    for path in paths.values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
