"""Audit a private report against its fixture, relations and protocol (and what was published from it).

    python scripts/audit_graph_evaluation.py --report REPORT --fixture F --relations R --protocol P \
        [--generation G] [--state STATE] [--plan PLAN] [--public PUBLIC.json]

Prints `ok <check>` for each check that holds and `FAIL <check> <location>: <what>` for each
failure; exit code 0 only when every check holds (1 otherwise, 2 for unreadable inputs).
With --public the public report is derived again from the private report and compared whole, and
every file export wrote beside it (HTML, Markdown, figures, runs, qrels) is rendered again and
compared byte for byte. With --state and --plan those files must be the ones the report embeds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.reporting.audit import audit  # noqa: E402
from protocols.cli import run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", required=True, type=Path, help="private report written by evaluate")
    parser.add_argument("--fixture", required=True, type=Path)
    parser.add_argument("--relations", required=True, type=Path)
    parser.add_argument("--protocol", required=True, type=Path)
    parser.add_argument("--generation", type=Path, help="generation.json: also check its digest and the embed+HTTP times")
    parser.add_argument("--state", type=Path, help="the prepare state file: must be the state the report embeds")
    parser.add_argument("--plan", type=Path, help="the plan file: must be the plan the report embeds")
    parser.add_argument("--public", type=Path, help="public report written by export: derived again and compared, "
                                                    "with the files beside it")
    args = parser.parse_args(argv)
    result = audit(args.report, args.fixture, args.relations, args.protocol, args.generation, public_path=args.public,
                   state_path=args.state, plan_path=args.plan)
    print(f"audit: {'all checks hold' if result.ok else f'{len(result.failures)} failure(s)'}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(run(main))
