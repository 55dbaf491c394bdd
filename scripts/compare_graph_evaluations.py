"""Compare two audited campaigns: paired B − A when they share their cohort, side by side otherwise.

    python scripts/compare_graph_evaluations.py --a A/public.json --b B/public.json --output DIR

Each side's private report, fixture, relations and protocol (and state, plan and generation when
present) are the files of that name beside its public report, as scripts/demo.py lays a run out;
`--a-report`, `--b-fixture` and so on give them elsewhere. Without a protocol file the repository's
frozen protocol whose digest the report names is used. Both sides are audited first; a failing
audit, a query id labelled differently by the two sides, or an existing DIR is refused (exit 2)
and nothing is written. Writes DIR/comparison.json, DIR/comparison.md and DIR/comparison.html.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.reporting.compare import OPTIONAL, REQUIRED, RunFiles, run_comparison  # noqa: E402
from protocols.cli import run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for side in ("a", "b"):
        parser.add_argument(f"--{side}", required=True, type=Path, help=f"public report of side {side.upper()}")
        for name in REQUIRED + OPTIONAL:
            parser.add_argument(f"--{side}-{name}", type=Path, help=f"side {side.upper()}'s {name} file "
                                                                     f"(default: {name}.json beside its public report)")
    parser.add_argument("--output", required=True, type=Path, help="directory to create for the comparison")
    args = parser.parse_args(argv)
    files = {side: RunFiles(getattr(args, side), **{name: getattr(args, f"{side}_{name}") for name in REQUIRED + OPTIONAL})
             for side in ("a", "b")}
    paths = run_comparison(files["a"], files["b"], args.output, log=lambda line: print(line, file=sys.stderr))
    for path in paths.values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
