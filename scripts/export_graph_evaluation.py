"""Export a complete private report: public JSON, TREC runs and qrels, Markdown summary.

    python scripts/export_graph_evaluation.py --report REPORT --fixture F --output PUBLIC.json

Writes PUBLIC.json, PUBLIC.runs/<method>.run, PUBLIC.qrels and PUBLIC.md (all refused if any
exists). Every metric and aggregate is recomputed first; a failed or inconsistent report is refused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.reporting.export import export  # noqa: E402
from protocols.cli import run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", required=True, type=Path, help="private report written by evaluate")
    parser.add_argument("--fixture", required=True, type=Path, help="the fixture the report was evaluated on")
    parser.add_argument("--output", required=True, type=Path, help="public report JSON to create")
    args = parser.parse_args(argv)
    paths = export(args.report, args.fixture, args.output)
    for path in paths.values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
