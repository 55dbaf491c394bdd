"""`lab export`, `lab compare` and `lab pool`: what is published from audited campaigns.

Flags and output only; the work is export.py, compare.py and suite_pool.py, imported inside `run`
(matplotlib is not needed for `lab --help`). compare and pool take the same input: run directories
in the standard layout (docs/cli.md), each holding its report.json, public.json and frozen inputs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ground.command import Command
from ground.errors import RefusedInput
from ground.run_dir import FILES, RunDir, add_file, add_run_dir, resolve

EXPORT_DESCRIPTION = """Export a complete private report: the public report and what is rendered from it.

From --output PUBLIC.json it writes PUBLIC.json, PUBLIC.md (Markdown summary), PUBLIC.html (one
self-contained page, tables and figures inline), PUBLIC.figures/ (the figures as files),
PUBLIC.runs/<method>.run (TREC runs), PUBLIC.qrels (TREC qrels), PUBLIC.rows.csv and .jsonl (one
line per query and method with every metric) and PUBLIC.text/ (the dataset text an outside system
needs: queries.tsv, queries.jsonl, the readable wins and losses, the licence; with --with-corpus
also corpus.jsonl; kept apart from the text-free public report); all are refused if any exists
(exit 2). Every metric and aggregate is recomputed first; a failed or inconsistent report is
refused. Prints every path written."""


def configure_export(parser: argparse.ArgumentParser) -> None:
    add_run_dir(parser)
    add_file(parser, "--report", "report", "private report written by evaluate")
    add_file(parser, "--fixture", "fixture", "the fixture the report was evaluated on")
    add_file(parser, "--output", "public", "public report JSON to create; the other outputs are named after it")
    add_file(parser, "--generation", "generation", "the generation file the report binds: the method table then "
                                                   "counts the inputs the encoder truncated (optional)")
    parser.add_argument("--with-corpus", action="store_true",
                        help="also write the corpus (id, title, text) into PUBLIC.text/corpus.jsonl, for an outside "
                             "system to index (docs/external.md)")


def run_export(args: argparse.Namespace) -> int:
    from evaluator.rendering.export import export

    generation = resolve(args, "--generation", "generation", optional=True)
    paths = export(resolve(args, "--report", "report"), resolve(args, "--fixture", "fixture"),
                   resolve(args, "--output", "public"), with_corpus=args.with_corpus,
                   generation_path=generation)
    for path in paths.values():
        print(path)
    return 0


def run_directory(value: str) -> Path:
    """argparse type of a run-directory argument: an existing directory (a file is refused, naming
    the directory it probably meant)."""
    path = Path(value)
    if path.is_file():
        raise argparse.ArgumentTypeError(f"{value} is a file; give its run directory ({path.parent})")
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"run directory {value} not found")
    return path


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
    from evaluator.rendering.compare import RunFiles, run_comparison

    files = {}
    for side in ("a", "b"):
        given = {name: getattr(args, f"{side}_{name}") for name in COMPARED}
        public = given.pop("public") or RunDir(getattr(args, side)).public
        files[side] = RunFiles(public, **given)
    paths = run_comparison(files["a"], files["b"], args.output_dir, log=lambda line: print(line, file=sys.stderr))
    for path in paths.values():
        print(path)
    return 0


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
    from evaluator.rendering.contrast_text import pooled_sentence
    from evaluator.rendering.suite_pool import pool_reports

    reports = [RunDir(run).report for run in args.runs]
    missing = [str(report) for report in reports if not report.is_file()]
    if missing:
        raise RefusedInput(f"no private report in run directory: {', '.join(missing)}")
    result, paths = pool_reports(args.suite, reports, args.output_dir, log=lambda line: print(line, file=sys.stderr))
    print(pooled_sentence(result), file=sys.stderr)
    for path in paths.values():
        print(path)
    return 0


EXPORT = Command("export", "publish a private report: public JSON, Markdown, HTML, figures, TREC runs and qrels",
                 description=EXPORT_DESCRIPTION, configure=configure_export, run=run_export)
COMPARE = Command("compare", "compare two audited campaigns (run directories) into a new directory",
                  description=COMPARE_DESCRIPTION, configure=configure_compare, run=run_compare)
POOL = Command("pool", "pool several datasets' campaigns (run directories) under a declared suite",
               description=POOL_DESCRIPTION, configure=configure_pool, run=run_pool)


EXAMPLE_DESCRIPTION = """Render the committed example (docs/example/, `make example`) from a run's public report, or check one.

--run-dir RUN --output-dir DIR: DIR/example.json (the public report without what belongs to one run:
timings, sizes, the lab's random id and the digests that depend on it) and what the exporter renders
from it: public.md, public.html and public.figures/, without the latency table, latency figure and
resources table. DIR must not exist (exit 2). --check DIR: render DIR/example.json again and compare
every file byte for byte; exit 1 naming each that differs. docs/example/README.md says why."""


def configure_example(parser: argparse.ArgumentParser) -> None:
    add_run_dir(parser)
    add_file(parser, "--public", "public", "the public report to render the example from")
    parser.add_argument("--output-dir", type=Path, metavar="DIR", help="new directory for the example")
    parser.add_argument("--check", type=Path, metavar="DIR", help="check an example folder instead")


def run_example(args: argparse.Namespace) -> int:
    from evaluator.rendering.example import differences, write_example
    from ground.errors import CheckFailed

    if args.check is not None:
        found = differences(args.check)
        if found:
            raise CheckFailed(f"example {args.check}: " + "; ".join(found))
        print(f"example {args.check}: every file is what example.json renders")
        return 0
    if args.output_dir is None:
        raise RefusedInput("give --output-dir DIR (or --check DIR)")
    for path in write_example(resolve(args, "--public", "public"), args.output_dir):
        print(path)
    return 0


EXAMPLE = Command("example", "render (or --check) the committed example of a run's public report (make example)",
                  description=EXAMPLE_DESCRIPTION, configure=configure_example, run=run_example)
