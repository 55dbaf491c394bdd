"""`lab export` and `lab example`: what is published from an audited campaign.

Flags and output only; the work is export.py and example.py, imported inside `run` (matplotlib is
not needed for `lab --help`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ground.command import Command
from ground.errors import RefusedInput
from ground.run_dir import add_file, add_run_dir, resolve

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
    from evaluator.export.export import export

    generation = resolve(args, "--generation", "generation", optional=True)
    paths = export(resolve(args, "--report", "report"), resolve(args, "--fixture", "fixture"),
                   resolve(args, "--output", "public"), with_corpus=args.with_corpus,
                   generation_path=generation)
    for path in paths.values():
        print(path)
    return 0


EXPORT = Command("export", "publish a private report: public JSON, Markdown, HTML, figures, TREC runs and qrels",
                 description=EXPORT_DESCRIPTION, configure=configure_export, run=run_export)


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
    from evaluator.export.example import differences, write_example
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
