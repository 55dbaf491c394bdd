"""`lab judge`: flags and output (the work is runs.py, retriever.py, judge.py and judged_text.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ground.command import Command

JUDGE_DESCRIPTION = """Judge an external method against a finished campaign, as one more method.

--run-dir RUN is the campaign's run directory (its report.json and fixture.json are read, never
written; the report must pass every check export makes). The external rankings come from --run FILE
(a TREC run, or JSONL lines {"query_id", "document_id", "score"}) or from --retriever
http://127.0.0.1:PORT/PATH (a loopback retriever asked for every cohort query; any other host is
refused). Equal scores: score descending, then document id ascending. Each ranking is cut at the
protocol's evaluation depth; cohort queries with no ranking are judged empty and counted.

Refused with exit 2, every problem counted, nothing written: an existing --output-dir; query ids not
in the cohort; documents not in the corpus; a document twice in one ranking; scores that are not
finite numbers; malformed lines. Writes DIR/judged.json (the external method, labelled "external:
no proofs, not verified", and every contrast external − frozen method under the campaign's own seed,
resamples, clusters and permutations, Holm per metric over those contrasts), judged.md,
judged.html, judged.figures/forest.svg, judged.rows.csv and .jsonl, and DIR/NAME.run (the rankings
judged, as a TREC run). With --retriever, nothing answering the first request is refused (exit 2,
nothing written); more failed queries than --max-failed-share allows (default: any) is a failed
judgment: the report is written, marked failed, and the exit code is 1. docs/external.md."""


def configure_judge(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run-dir", required=True, type=Path, metavar="RUN",
                        help="the finished campaign's run directory (report.json, fixture.json)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", type=Path, metavar="FILE", help="a TREC or JSONL run file")
    source.add_argument("--retriever", metavar="URL", help="a loopback retriever: http://127.0.0.1:PORT/PATH")
    parser.add_argument("--name", required=True, help="the external method's name (letters, digits, _ . -)")
    parser.add_argument("--output-dir", required=True, type=Path, metavar="DIR", help="new directory for the judged report")
    parser.add_argument("--send-vector", action="store_true",
                        help="with --retriever: also send each query's frozen vector from the fixture")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="with --retriever: seconds to wait for each answer (default 30)")
    parser.add_argument("--max-failed-share", type=float, default=0.0, metavar="SHARE",
                        help="with --retriever: the share of cohort queries allowed to fail (default 0: any "
                             "failure makes the judgment fail, exit 1, the report saved marked failed)")


def run_judge(args: argparse.Namespace) -> int:
    from evaluator.judge.judge_run import judge_command

    paths = judge_command(args.run_dir, args.name, args.output_dir, run=args.run, retriever=args.retriever,
                          send_vector=args.send_vector, timeout=args.timeout,
                          max_failed_share=args.max_failed_share)
    for path in paths.values():
        print(path)
    return 0


JUDGE = Command("judge", "judge an external run file or loopback retriever against a finished campaign",
                description=JUDGE_DESCRIPTION, configure=configure_judge, run=run_judge)
