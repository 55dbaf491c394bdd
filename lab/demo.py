"""`lab demo`: `lab run` on a default protocol, in a new directory under runs/ (what `make demo` runs);
`lab demo --samples`: the three shared samples one after another, one summary table, then the
three reports pooled under the suite of their protocol version and their leaderboard (what
`make demo-samples` runs).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ground.errors import CheckFailed, RefusedInput
from ground.files import load_json, refuse_existing
from ground.run_dir import DEFAULT_RUN_ROOT
from lab.pipeline import STAGE_LINE, Finished, run_pipeline
from protocols.committed import committed_file
from protocols.suite import load_suite, pinned_protocols

RUNS = DEFAULT_RUN_ROOT
SHARED_DATA = Path("../shared/data")
SYNTHETIC_PROTOCOL = committed_file("synthetic-v1")
SAMPLE_PROTOCOL = committed_file("musique-sample-v1")

SAMPLES = (  # (dataset, sample directory under --data-dir, protocol name without the version)
    ("musique", "musique-sample", "musique-sample"),
    ("hotpotqa", "hotpotqa-sample", "hotpotqa-sample"),
    ("2wikimultihopqa", "2wikimultihopqa-sample", "2wikimultihopqa-sample"),
)
VERSIONS = ("v1", "v2", "v3", "v4", "v5", "field-graphs-v1")
# the suite each version's campaigns are pooled under by default (v3 and v4 were frozen as the graph
# suites); the others: suite-samples-<version>.json when it exists
SUITES = {"v3": "suite-graph-v3.json", "v4": "suite-graph-v4.json", "v5": "suite-prf-v1.json",
          "field-graphs-v1": "suite-field-graphs-v1.json"}


def stamped(prefix: str) -> Path:
    return RUNS / time.strftime(f"{prefix}-%Y%m%dT%H%M%SZ", time.gmtime())


def check_default_files(protocol: Path, data_dir: Path) -> None:
    """Refuse, naming --protocol, a --data-dir that lacks the default protocol's files (another
    sample's folder, say): the import would only say that a source file is missing."""
    pinned = load_json(protocol, "protocol")["source_files"]
    missing = [entry["name"] for entry in pinned.values() if not (data_dir / entry["name"]).is_file()]
    if missing:
        others = ", ".join(f"protocols/frozen/datasets/{p}-v1.json" for _, _, p in SAMPLES if p != "musique-sample")
        raise RefusedInput(f"--data-dir {data_dir} has no {', '.join(missing)}, the files of the default protocol "
                           f"{protocol.stem}; give --protocol for another dataset (e.g. {others})")


def default_protocol(data_dir: Path | None) -> Path:
    return SAMPLE_PROTOCOL if data_dir is not None else SYNTHETIC_PROTOCOL


def default_suite(version: str) -> Path:
    return committed_file(SUITES.get(version, f"suite-samples-{version}.json"))


def samples(data_dir: Path, version: str, suite: Path | None, base: Path) -> int:
    """Every sample's campaign (a failure is reported and the others still run), the summary table,
    then the pooling and the leaderboard; exit 1 when a campaign, the pooling or the board failed."""
    if suite is not None and not suite.is_file():
        raise RefusedInput(f"suite {suite} not found")
    suite = suite or default_suite(version)
    if suite.is_file():  # a suite that cannot pool is refused before an hour of campaigns
        pinned_protocols(load_suite(suite), suite)
    else:  # said before the campaigns, not only after them (v2 has no suite)
        print(f"no suite pools the {version} protocols ({suite.name} does not exist): the three campaigns run "
              "and the pooling is skipped; give --suite FILE to pool them", file=sys.stderr, flush=True)
    for _, directory, _ in SAMPLES:
        if not (data_dir / directory).is_dir():
            raise RefusedInput(f"sample directory {data_dir / directory} is absent (the samples live in ../shared)")
    refuse_existing(base)
    base.mkdir(parents=True)
    results = [run_sample(dataset, data_dir / directory, committed_file(f"{protocol}-{version}"), base)
               for dataset, directory, protocol in SAMPLES]
    table = summary_table(results)
    print(table)
    summary = base / "summary.md"
    print(f"wrote {summary} (this table, then the pooled one)")
    pooled, pooled_ok = pool_step(suite if suite.is_file() else None, results, base / "pooled")
    summary.write_text(table + "\n" + pooled, encoding="utf-8")
    board_ok = board_step(suite, results, base / "leaderboard") if pooled_ok and suite.is_file() else True
    return 0 if pooled_ok and board_ok and all(r["ok"] for r in results) else 1


def run_sample(dataset: str, sample: Path, protocol: Path, base: Path) -> dict:
    """One campaign through `lab run` into base/<dataset>/; the stages' own output goes to a log
    beside it, base/<dataset>.log."""
    run_dir, log = base / dataset, base / f"{dataset}.log"
    print(f"=== {dataset}: {protocol.name} on {sample}", file=sys.stderr, flush=True)
    started = time.monotonic()
    done: Finished | None = None
    with open(log, "x", encoding="utf-8") as out:
        try:
            done = run_pipeline(protocol, sample, run_dir, stdout=out)
        except (CheckFailed, RefusedInput) as exc:
            print(f"=== {dataset}: {exc}", file=sys.stderr, flush=True)
    elapsed = time.monotonic() - started
    print(f"=== {dataset}: {'done' if done else 'FAILED'} in {elapsed:.0f}s; log {log}", file=sys.stderr, flush=True)
    public = load_json(done.run_dir.public, "public report") if done else None
    return {"dataset": dataset, "protocol": protocol.stem, "ok": public is not None, "public": public,
            "stages": done.stage_line()[len(STAGE_LINE):] if done else "", "elapsed": elapsed, "log": log,
            "run": run_dir}


def pool_step(suite: Path | None, results: list[dict], output: Path) -> tuple[str, bool]:
    """Pool the campaigns' private reports under the suite (the code of `lab pool`), print the
    pooled table and the paths written; returns (the pooled Markdown or why there is none, whether
    the pooling succeeded or had nothing to do)."""
    from evaluator.pool.suite_pool import pool_reports
    from evaluator.views.contrast_text import pooled_markdown

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


def board_step(suite: Path, results: list[dict], output: Path) -> bool:
    """The suite's leaderboard of the campaigns (the code of `lab leaderboard --suite`): every
    method ranked and grouped, with its cost; prints the paths written."""
    from evaluator.leaderboard.leaderboard_files import write_leaderboard

    print(f"=== leaderboard of {len(results)} campaigns under {suite}", file=sys.stderr, flush=True)
    try:
        paths = write_leaderboard([Path(r["run"]) for r in results], suite, "ndcg@10", 0.05, output,
                                  log=lambda line: print(line, file=sys.stderr))
    except RefusedInput as exc:
        print(f"Leaderboard refused: {exc}")
        return False
    for path in paths.values():
        print(f"wrote {path}")
    return True


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
