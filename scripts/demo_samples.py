"""The campaigns of the three shared samples, one after another, and one summary table (what
`make demo-samples` runs).

    python scripts/demo_samples.py [--samples-dir ../shared/data] [--version v1|v2|v3] [--runs runs]

Each sample runs through scripts/demo.py (import, embed, lab, prepare, evaluate, export, audit)
under its own protocol, in runs/samples-<UTC time>/<dataset>/demo-*/. At the end one table gives,
dataset by method, nDCG@10, judged recall@10 and all-supports@10 from each public report, and on
the primary candidate's row the protocol's confirmatory contrast (nDCG@10 delta with its paired
bootstrap interval); below it, the wall time of every stage. Then, when every campaign succeeded,
the three reports are pooled under the suite (v1: protocols/suite-samples-v1.json, v3: protocols/suite-graph-v3.json; docs/suites.md)
by the code of scripts/pool_graph_evaluations.py (each report audited again, the pooled primary
contrast per dataset and pooled), written to pooled/pooled.{json,md,html}; the pooled table is
printed last with the paths. The tables are also written to summary.md beside the runs. A campaign
that fails is reported, the others still run, the pooling is skipped (exit 1).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluator.reporting.contrast_text import pooled_markdown  # noqa: E402
from evaluator.reporting.suite_pool import pool_reports  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import refuse_existing  # noqa: E402
from protocols.suite import load_suite, pinned_protocols  # noqa: E402

SAMPLES = (  # (dataset, sample directory under --samples-dir, protocol name without the version)
    ("musique", "musique-sample", "musique-sample"),
    ("hotpotqa", "hotpotqa-sample", "hotpotqa-sample"),
    ("2wikimultihopqa", "2wikimultihopqa-sample", "2wikimultihopqa-sample"),
)
STAGE_LINE = "stage wall times: "


# the suite each version's campaigns are pooled under by default (v3 was frozen as the graph suite)
SUITES = {"v3": "suite-graph-v3.json"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples-dir", type=Path, default=REPO.parent / "shared" / "data",
                        help="directory holding the three sample directories (default: ../shared/data)")
    parser.add_argument("--version", choices=("v1", "v2", "v3"), default="v1",
                        help="protocol version: v1 (the eight methods), v2 (plus the rescue family) or v3 "
                             "(plus the seeded walk, docs/graph-v3.md)")
    parser.add_argument("--runs", type=Path, default=REPO / "runs", help="where the run directory is created")
    parser.add_argument("--suite", type=Path, help="suite pooling the three reports (default: "
                        "protocols/suite-samples-<version>.json when it exists)")
    args = parser.parse_args(argv)
    suite = args.suite or REPO / "protocols" / SUITES.get(args.version, f"suite-samples-{args.version}.json")
    if args.suite and not args.suite.is_file():
        raise RefusedInput(f"suite {args.suite} not found")
    if suite.is_file():  # a suite that cannot pool is refused before an hour of campaigns
        pinned_protocols(load_suite(suite), suite)
    for _, directory, _ in SAMPLES:
        if not (args.samples_dir / directory).is_dir():
            raise RefusedInput(f"sample directory {args.samples_dir / directory} is absent (the samples live in ../shared)")
    base = args.runs / time.strftime("samples-%Y%m%dT%H%M%SZ", time.gmtime())
    refuse_existing(base)
    base.mkdir(parents=True)
    results = [run_sample(dataset, args.samples_dir / directory,
                          REPO / "protocols" / f"{protocol}-{args.version}.json", base / dataset)
               for dataset, directory, protocol in SAMPLES]
    table = summary_table(results)
    print(table)
    summary = base / "summary.md"
    print(f"wrote {summary} (this table, then the pooled one)")
    pooled, pooled_ok = pool_step(suite if suite.is_file() else None, results, base / "pooled")
    summary.write_text(table + "\n" + pooled, encoding="utf-8")
    return 0 if pooled_ok and all(r["ok"] for r in results) else 1


def pool_step(suite: Path | None, results: list[dict], output: Path) -> tuple[str, bool]:
    """Pool the campaigns' private reports under the suite (the code of pool_graph_evaluations.py),
    print the pooled table and the paths written; returns (the pooled Markdown or why there is
    none, whether the pooling succeeded or had nothing to do)."""
    if suite is None:
        text = "No suite pools these protocols: no pooled table.\n"
        print(text, end="")
        return text, True
    failed = [r["dataset"] for r in results if not r["ok"]]
    if failed:
        text = f"Pooled table skipped: the suite needs every dataset and {', '.join(failed)} failed.\n"
        print(text, end="")
        return text, False
    reports = [Path(r["run"]) / "report.json" for r in results]
    print(f"=== pooling {len(reports)} reports under {suite}", file=sys.stderr, flush=True)
    try:
        result, paths = pool_reports(suite, reports, output, log=lambda line: print(line, file=sys.stderr))
    except RefusedInput as exc:
        text = f"Pooling refused: {exc}\n"
        print(text, end="")
        return text, False
    text = pooled_markdown(result)
    print(text)
    for path in paths.values():
        print(f"wrote {path}")
    return text, True


def run_sample(dataset: str, sample: Path, protocol: Path, runs: Path) -> dict:
    """One campaign through scripts/demo.py; its stdout (the summary it prints) goes to a log."""
    runs.mkdir()
    log = runs / "demo.out"
    print(f"=== {dataset}: {protocol.name} on {sample}", file=sys.stderr, flush=True)
    started = time.monotonic()
    with open(log, "w", encoding="utf-8") as out:
        code = subprocess.call([sys.executable, str(REPO / "scripts" / "demo.py"), "--sample", str(sample),
                                "--protocol", str(protocol), "--runs", str(runs)], stdout=out)
    elapsed = time.monotonic() - started
    print(f"=== {dataset}: exit {code} in {elapsed:.0f}s; log {log}", file=sys.stderr, flush=True)
    text = log.read_text(encoding="utf-8")
    stages = next((line[len(STAGE_LINE):] for line in text.splitlines() if line.startswith(STAGE_LINE)), "")
    publics = sorted(runs.glob("demo-*/public.json"))
    public = json.loads(publics[-1].read_text(encoding="utf-8")) if code == 0 and publics else None
    return {"dataset": dataset, "protocol": protocol.stem, "ok": code == 0 and public is not None,
            "public": public, "stages": stages, "elapsed": elapsed, "log": log,
            "run": publics[-1].parent if publics else runs}


def summary_table(results: list[dict]) -> str:
    lines = ["| dataset | queries | method | nDCG@10 | judged R@10 | all supports@10 | primary contrast (nDCG@10) |",
             "|---|---|---|---|---|---|---|"]
    for result in results:
        public = result["public"]
        if public is None:
            lines.append(f"| {result['dataset']} | | FAILED (see {result['log']}) | | | | |")
            continue
        primary = _primary(public)
        queries = len(public["plan"]["queries"])
        for method in public["plan"]["methods"]:
            a = public["aggregates"]["methods"][method]
            contrast = ""
            if primary and primary["candidate"] == method:
                low, high = primary["interval"]
                contrast = (f"vs {primary['baseline']}: {primary['mean_delta']:+.3f} "
                            f"[{low:+.3f}, {high:+.3f}] W/L/T {primary['wins']}/{primary['losses']}/{primary['ties']}")
            lines.append(f"| {result['dataset']} | {queries} | {method} | {a['ndcg@10']:.3f} | "
                         f"{a['judged_recall@10']:.3f} | {a['all_supports@10']:.3f} | {contrast} |")
    lines += ["", "| dataset | protocol | stage wall times | total | run directory |", "|---|---|---|---|---|"]
    for result in results:
        lines.append(f"| {result['dataset']} | {result['protocol']} | {result['stages'] or 'n/a'} | "
                     f"{result['elapsed']:.0f}s | {result['run']} |")
    return "\n".join(lines) + "\n"


def _primary(public: dict) -> dict | None:
    """The confirmatory contrast on nDCG@10 (the protocol's primary contrast)."""
    stats = public.get("statistics") or {}
    return next((c for c in stats.get("contrasts", [])
                 if c["label"] == "confirmatory" and c["metric"] == "ndcg@10"), None)


if __name__ == "__main__":
    sys.exit(run(main))
