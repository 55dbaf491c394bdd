"""The full-scale protocol's synthetic twin, end to end: wall time and peak RSS of every stage.

    lab bench full-scale --out runs/full-scale-<stamp> --json runs/full-scale-<stamp>.json
    lab bench full-scale --out DIR --reuse-embedding PREVIOUS_DIR   # skip the embed
    lab bench full-scale --out DIR --questions 300                  # a smaller twin, same shape
    lab bench full-scale --out DIR --questions 1000                 # the 1,000-query row, embedding included
    lab bench full-scale --out DIR --speedup                        # + evaluate and audit at 1 and 2 workers
    lab bench full-scale --out DIR --audit-speedup                  # + audit alone at 1 and 2 workers

`protocols/frozen/datasets/graph-multihop-full-dev-v1.json` takes every answerable row of the official MuSiQue dev
file (2,417 rows; 2,411 distinct questions). Its twin here is that protocol with the synthetic
generator's files at the same size (`--questions 2417`: 2,417 dev rows, 846 train rows), test
counts "all", development 10/10/10 from train (fewer below 300 questions, where train holds
fewer rows), every method, budget and evaluation setting kept.

Stages, each its real command line in its own process: generate (bench setup, not a user stage),
import (reads, selects, builds source.json and the graph), graph (the graph rebuilt alone from
source.json, checked equal to the import's), embed (skipped with --reuse-embedding: fixture and
generation copied from an earlier run of the same source, checked by source digest), prepare,
evaluate (`--clients 2`: the lab admits two concurrent retrievals), export, audit. The memory of a
stage is sampled over its process and all its descendants (psutil, every 0.2 s; worker processes
count), as two sums: the headline is the peak of the summed PSS (proportional set size: a page
mapped by k processes counts 1/k in each, so inputs the Dask workers share through one read-only
file mapping count once), and beside it the peak of the summed RSS, which counts a shared page once
per process that maps it and so overstates a tree that shares; then the largest single process
(wait4's ru_maxrss). The lab server's own peak is sampled beside prepare and evaluate. The load average is printed before and after each
stage, and the figures end in one table of the full-scale targets (docs/full-scale.md), each with its verdict; `--json`
writes all of it. Nothing here asserts.

Each evaluate run also gets its CPU per job, process by process (bench/process_cpu.py): the
evaluator, its Dask workers if any, the lab server, and the jobs/s that total implies on this
machine's cores when they are saturated; the figure the load moves least, printed beside the load
average.

Evaluate's wall time is also split into its phases (bench/phases.py: start, jobs, base pools,
finish), read from the lines it prints, so the jobs/s row shows how much of the stage the jobs are.

`--workers N` is handed to evaluate and audit when they accept it (the page checks on Dask
distributed, docs/scale.md); `--speedup` also runs evaluate and audit at 1 and at 2 workers on the same
prepared lab and reports the ratio; `--audit-speedup` runs audit alone at 1 and at 2 workers on the
campaign's report (evaluate checks its pages in its own process by default, so audit is the stage
whose workers matter). A row whose figure needs an option the commands lack says so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

import psutil

from bench.phases import EVALUATE_PHASES, PhaseClock, jobs_alone, phase_line
from bench.process_cpu import CpuSampler, cpu_seconds, per_job_lines, speedup_bound
from evaluator.connection.lab_process import start_lab
from ground.canonical import digest, sha256_file
from ground.files import load_json, refuse_existing, save
from importer import synthetic
from protocols.committed import committed_file
from protocols.schema import load_protocol, validate_protocol

LAB = ("-m", "lab")  # each stage is the `lab` subcommand a user types, in its own process
FULL_DEV = committed_file("graph-multihop-full-dev-v1.json")
QUESTIONS = 2417  # the official dev file's rows
COHORT_QUESTIONS = 1000  # the field's cohorts (HippoRAG's MuSiQue, 2Wiki, HotpotQA sets)
COHORT_PASSAGES = 12000
TIMED = ("import", "graph", "prepare", "evaluate", "export", "audit")  # the 10-minute target's stages
WITH_EMBEDDING = ("import", "graph", "embed", "prepare", "evaluate", "export", "audit")

# The full-scale targets on 2 cores (docs/full-scale.md). `at`: the twin size a target is stated for (None: any size).
TARGETS: dict[str, dict[str, Any]] = {
    "twin_seconds": {"what": "2,417-query twin: import + graph + prepare + evaluate + export + audit",
                     "target": 600.0, "unit": "s", "at": QUESTIONS},
    "evaluate_jobs_per_second": {"what": "evaluate throughput (jobs / evaluate wall time)", "target": 150.0,
                                 "unit": "jobs/s", "at": None, "higher": True},
    "peak_rss_gib": {"what": "peak memory of any stage (PSS summed over its process tree; the lab server included)",
                     "target": 4.0,
                     "unit": "GiB", "at": QUESTIONS},
    "cohort_seconds": {"what": "1,000-query, 12,000-passage twin end to end, embedding included (MiniLM)",
                       "target": 600.0, "unit": "s", "at": COHORT_QUESTIONS},
    "workers_speedup": {"what": "speedup from 1 to 2 workers on evaluate + audit", "target": 1.7, "unit": "x",
                        "at": None, "higher": True},
    "twin_with_embedding_seconds": {"what": "2,417-query twin end to end, MiniLM embedding included (the builder's "
                                            "default workers)", "target": 900.0, "unit": "s", "at": QUESTIONS},
    "audit_speedup": {"what": "audit alone, 1 -> 2 workers, on the campaign's report", "target": 1.7, "unit": "x",
                      "at": QUESTIONS, "higher": True},
}
ELSEWHERE = [  # the table's rows other benchmarks measure, named so the table is complete
    ("E5 documents/s", ">= 20", "lab bench embedding"),
    ("HTTP p50 minus server time, every method", "<= 1.0 ms", "lab bench retrieval --corpora sample,100000 "
                                                               "--http-max-docs 100000"),
    ("BM25 / bm25s at 100,000 documents, same run", "<= 1.0", "lab bench retrieval --corpora 100000"),
    # the embedding rows (measured by bench_embedding and the cluster tests), one run on the 6,119-passage 2Wiki corpus
    ("embedding on 2 Dask workers / 2 local processes, MiniLM", ">= 0.95x",
     "lab bench embedding --workers 1,2 --corpus ../shared/data/hipporag-2wikimultihopqa-corpus/2wikimultihopqa_corpus.json"),
    ("embedding 1 -> 2 workers, same corpus", ">= 1.8x",
     "lab bench embedding --workers 1,2 --corpus ../shared/data/hipporag-2wikimultihopqa-corpus/2wikimultihopqa_corpus.json"),
    ("fixture bytes, in process vs 1 vs 2 workers vs scheduler", "identical",
     "pytest tests/builders/test_embedding_cluster.py tests/lab/test_second_host.py"),
]


def development_counts(questions: int) -> dict[str, int]:
    """10 per stratum, as the official protocol; fewer for a twin whose train file (35% of the dev
    rows, about a third per stratum) could not hold them."""
    k = max(1, min(10, questions // 30))
    return {"2": k, "3": k, "4": k}


def twin_protocol(data: Path, questions: int = QUESTIONS) -> dict:
    """The full-dev protocol with the synthetic files pinned instead of the official ones."""
    protocol = load_protocol(FULL_DEV)
    twin = dict(protocol)
    twin["protocol_version"] = "synthetic-full-dev-v1" if questions == QUESTIONS else f"synthetic-full-dev-{questions}q-v1"
    twin["title"] = (f"Synthetic twin of graph-multihop-full-dev-v1: importer/synthetic.py at {questions} questions, "
                     "every dev row as the test split")
    twin["dataset"] = {"name": "Synthetic MuSiQue-format corpus v1 (invented entities, official MuSiQue row format)",
                       "license": "Apache-2.0 (generated by this project)",
                       "attribution": f"Generated by importer/synthetic.py (seed {synthetic.DEFAULT_SEED!r}, "
                                      f"questions {questions})"}
    twin["source_files"] = {role: {"name": name, "sha256": sha256_file(data / name)}
                            for role, name in (("train", synthetic.TRAIN_NAME), ("dev", synthetic.DEV_NAME))}
    splits = protocol["selection"]["splits"]
    twin["selection"] = {**protocol["selection"], "expected_ids": None,
                         "splits": {**splits, "development": {**splits["development"],
                                                              "counts": development_counts(questions)}}}
    return validate_protocol(twin)


class RssSampler:
    """Peak memory of a process (with its descendants when `tree`), sampled every 0.2 s, per named
    window: `peaks` the summed PSS (shared pages split between the processes that map them),
    `rss_peaks` the summed RSS (shared pages counted in every process)."""

    def __init__(self, pid: int, tree: bool = False):
        self.process = psutil.Process(pid)
        self.tree = tree
        self.window: str | None = "all"
        self.peaks: dict[str, int] = {}
        self.rss_peaks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def sample(self) -> tuple[int, int]:
        """(summed PSS, summed RSS) of the process (and tree) now."""
        processes = [self.process] + (self.process.children(recursive=True) if self.tree else [])
        pss = rss = 0
        for process in processes:
            try:
                # /proc/PID/smaps_rollup for pss, statm for rss: two reads, so a process growing
                # between them can show a PSS above its RSS by what it grew
                full = process.memory_full_info()
            except psutil.Error:  # a worker that has just exited
                continue
            pss += full.pss
            rss += full.rss
        return pss, rss

    def _run(self) -> None:
        while True:
            try:
                if not self.process.is_running():
                    return
                pss, rss = self.sample()
            except psutil.Error:
                return
            window = self.window
            if window:
                self.peaks[window] = max(self.peaks.get(window, 0), pss)
                self.rss_peaks[window] = max(self.rss_peaks.get(window, 0), rss)
            if self._stop.wait(0.2):
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def stage(name: str, args: list, results: dict, lab: RssSampler | None = None,
          markers: tuple | None = None) -> None:
    """Run one stage's command, sampling its memory and CPU; `markers` (bench/phases.py): also
    time its phases from its stderr lines."""
    print(f"== {name}: {' '.join(str(a) for a in args)}", flush=True)
    load_before = load()
    if lab is not None:
        lab.window = name
    lab_cpu = cpu_seconds(lab.process) if lab is not None else None
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, *map(str, args)], cwd=REPO,
                               stderr=subprocess.PIPE if markers else None, text=True)
    clock = PhaseClock(process.stderr, started, markers) if markers and process.stderr is not None else None
    tree = RssSampler(process.pid, tree=True)
    cpu = CpuSampler(process.pid)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    tree.stop()
    cpu.stop()
    if lab is not None and lab_cpu is not None:
        lab_cpu = cpu_seconds(lab.process) - lab_cpu
    process.returncode = os.waitstatus_to_exitcode(status)
    if lab is not None:
        lab.window = None
    results[name] = {"seconds": seconds, "peak_pss_mib": tree.peaks.get("all", 0) / 2**20,
                     "peak_rss_mib": tree.rss_peaks.get("all", 0) / 2**20,
                     "largest_process_rss_mib": usage.ru_maxrss / 1024.0,
                     "lab_peak_pss_mib": (lab.peaks.get(name, 0) / 2**20) if lab else None,
                     "lab_peak_rss_mib": (lab.rss_peaks.get(name, 0) / 2**20) if lab else None,
                     "load_before": load_before, "load_after": load(),
                     "cpu_seconds": cpu.breakdown(usage.ru_utime + usage.ru_stime), "lab_cpu_seconds": lab_cpu,
                     "cpu_workers": cpu.count("worker")}
    if clock is not None:
        results[name]["phases"] = clock.phases(seconds)
    r = results[name]
    print(f"== {name}: exit {process.returncode} in {seconds:.1f} s, peak PSS {r['peak_pss_mib']:.0f} MiB "
          f"(RSS sum {r['peak_rss_mib']:.0f}, largest process {r['largest_process_rss_mib']:.0f})"
          + (f", lab PSS {r['lab_peak_pss_mib']:.0f} MiB (RSS {r['lab_peak_rss_mib']:.0f})" if lab else "")
          + f", load {' / '.join(map(str, load_before))} before, {' / '.join(map(str, r['load_after']))} after",
          flush=True)
    if process.returncode != 0:
        raise SystemExit(f"stage {name} failed with exit code {process.returncode}")


def rebuild_graph(source_path: Path, relations_path: Path) -> None:
    """The graph stage on its own: rebuild relations.json from source.json, compare with the import's."""
    from builders.title_graph import build_for_source

    source = load_json(source_path, "source")
    rebuilt = build_for_source(source, digest(source))
    if digest(rebuilt) != digest(load_json(relations_path, "relations")):
        raise SystemExit("the rebuilt graph differs from the import's relations.json")
    print(f"graph: {len(rebuilt['relations'])} relations {rebuilt['counts']}, identical to the import's")


def reuse_embedding(previous: Path, a: dict[str, Path]) -> dict:
    fixture = load_json(previous / "fixture.json", "fixture")
    if fixture["source_digest"] != digest(load_json(a["source"], "source")):
        raise SystemExit(f"{previous}/fixture.json was embedded from another source.json")
    shutil.copyfile(previous / "fixture.json", a["fixture"])
    shutil.copyfile(previous / "generation.json", a["generation"])
    return {"reused_from": str(previous)}


def embedding_throughput(generation_path: Path) -> dict:
    totals = load_json(generation_path, "generation")["totals"]
    docs, queries = totals["documents"], totals["queries"]
    return {"documents": docs["count"], "documents_per_second": docs["per_second"],
            "document_seconds": docs["elapsed_ms"] / 1000.0, "queries": queries["count"],
            "query_p50_ms": queries["p50_ms"], "model_load_ms": totals["model_load_ms"]}


def accepts(command: str, option: str) -> bool:
    """Whether `lab COMMAND` takes `option` (read from its --help): the hook for options other work adds."""
    out = subprocess.run([sys.executable, *LAB, command, "--help"], cwd=REPO, capture_output=True, text=True)
    return option in out.stdout


def table(results: dict) -> list[str]:
    lines = ["| stage | wall s | peak PSS MiB (tree) | peak RSS sum MiB (tree) | largest process MiB | "
             "lab peak PSS MiB | load before | load after |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        lab = f"{r['lab_peak_pss_mib']:.0f}" if r.get("lab_peak_pss_mib") else ""
        lines.append(f"| {name} | {r['seconds']:.1f} | {r['peak_pss_mib']:.0f} | {r['peak_rss_mib']:.0f} | "
                     f"{r['largest_process_rss_mib']:.0f} | "
                     f"{lab} | {' / '.join(map(str, r['load_before']))} | {' / '.join(map(str, r['load_after']))} |")
    return lines


def row(key: str, value: float | None, questions: int, note: str = "") -> dict:
    """One target row: the figure, the target and the verdict (a target stated for another twin size
    gets none: the figure is shown for what it is)."""
    t = TARGETS[key]
    if value is None:
        verdict = "not measured"
    elif t["at"] is not None and t["at"] != questions:
        verdict = f"no verdict: the target is stated for {t['at']:,} queries, this twin has {questions:,}"
    else:
        verdict = "met" if (value >= t["target"] if t.get("higher") else value <= t["target"]) else "MISSED"
    return {"key": key, "what": t["what"], "value": value, "unit": t["unit"],
            "target": (">= " if t.get("higher") else "<= ") + f"{t['target']:g} {t['unit']}",
            "verdict": verdict, "note": note}


def target_table(rows: list[dict]) -> list[str]:
    lines = ["| what | figure | target | verdict | note |", "|---|---|---|---|---|"]
    for r in rows:
        value = "-" if r["value"] is None else f"{r['value']:,.2f} {r['unit']}"
        lines.append(f"| {r['what']} | {value} | {r['target']} | {r['verdict']} | {r['note']} |")
    for what, target, where in ELSEWHERE:
        lines.append(f"| {what} | - | {target} | measured elsewhere | `{where}` |")
    return lines


def campaign(tag: str, a: dict[str, Path], out: Path, lab, sampler: RssSampler, clients: int,
             workers: int | None, results: dict) -> float:
    """evaluate (against the running lab) then audit of its report; returns their summed wall time."""
    suffix = "" if not tag else f"-{tag}"
    plan, report = out / f"plan{suffix}.json", out / f"report{suffix}.json"
    extra = [] if workers is None else ["--workers", workers]
    stage(f"evaluate{suffix}", [*LAB, "evaluate", "--fixture", a["fixture"], "--relations", a["relations"],
                                "--access-file", out / "lab-access.json", "--state", a["state"], "--protocol",
                                a["protocol"], "--generation", a["generation"], "--plan", plan, "--report", report,
                                "--server-pid", lab.pid, "--clients", clients, *extra], results, sampler,
          markers=EVALUATE_PHASES)
    if tag:
        stage(f"audit{suffix}", [*LAB, "audit", "--report", report, "--fixture", a["fixture"], "--relations",
                                 a["relations"], "--protocol", a["protocol"], "--generation", a["generation"], *extra],
              results)
        return results[f"evaluate{suffix}"]["seconds"] + results[f"audit{suffix}"]["seconds"]
    return results["evaluate"]["seconds"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench full-scale", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=Path, help="new run directory")
    parser.add_argument("--questions", type=int, default=QUESTIONS,
                        help=f"dev rows of the twin (default {QUESTIONS}, the official dev file's)")
    parser.add_argument("--reuse-embedding", type=Path, help="earlier run directory of this bench: copy its fixture")
    parser.add_argument("--clients", type=int, default=2, help="concurrent evaluation clients (default 2)")
    parser.add_argument("--workers", type=int, help="handed to evaluate and audit, when they accept --workers")
    parser.add_argument("--speedup", action="store_true",
                        help="also run evaluate + audit at 1 and at 2 workers (needs their --workers)")
    parser.add_argument("--audit-speedup", action="store_true",
                        help="also run audit at 1 and at 2 workers on the campaign's report")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--graph-only", nargs=2, type=Path, metavar=("SOURCE", "RELATIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.graph_only:
        rebuild_graph(*args.graph_only)
        return 0
    if args.questions < 1:
        parser.error("--questions must be at least 1")
    refuse_existing(args.out)
    if args.json:
        refuse_existing(args.json)
    workers_option = accepts("evaluate", "--workers") and accepts("audit", "--workers")
    if args.workers is not None and not workers_option:
        parser.error("--workers: this checkout's evaluate and audit do not take --workers yet")
    args.out.mkdir(parents=True)
    a = {name: args.out / f"{name}.json" for name in ("protocol", "source", "relations", "fixture", "generation",
                                                       "state", "plan", "report", "public")}
    load_before = load()
    print(f"load average before: {' / '.join(map(str, load_before))} on {os.cpu_count()} CPUs", flush=True)
    results: dict[str, dict] = {}
    data = args.out / "synthetic"
    stage("generate", [*LAB, "synth", "--output-dir", data, "--questions", args.questions], results)
    save(a["protocol"], twin_protocol(data, args.questions))
    stage("import", [*LAB, "import", "--protocol", a["protocol"], "--data-dir", data,
                     "--output", a["source"], "--relations", a["relations"]], results)
    stage("graph", ["-m", "bench.bench_full_scale", "--out", args.out / "unused", "--graph-only", a["source"], a["relations"]], results)
    embedding = None
    if args.reuse_embedding:
        embedding = reuse_embedding(args.reuse_embedding, a)
    else:
        stage("embed", [*LAB, "embed", "build", "--source", a["source"], "--output", a["fixture"],
                        "--generation", a["generation"]], results)
    throughput = embedding_throughput(a["generation"])
    lab = start_lab(args.out / "lab-db", args.out / "lab-access.json", log_path=args.out / "lab.log")
    sampler = RssSampler(lab.pid)
    sampler.window = None
    speedup_seconds: dict[int, float] = {}
    try:
        stage("prepare", [*LAB, "prepare", "--fixture", a["fixture"], "--relations", a["relations"], "--access-file",
                          args.out / "lab-access.json", "--state", a["state"], "--protocol", a["protocol"]],
              results, sampler)
        campaign("", a, args.out, lab, sampler, args.clients, args.workers, results)
        if args.speedup and workers_option:
            for workers in (1, 2):
                speedup_seconds[workers] = campaign(f"workers{workers}", a, args.out, lab, sampler, args.clients,
                                                    workers, results)
    finally:
        sampler.stop()
        lab.stop()
    stage("export", [*LAB, "export", "--report", a["report"], "--fixture", a["fixture"],
                     "--output", a["public"]], results)
    stage("audit", [*LAB, "audit", "--report", a["report"], "--fixture", a["fixture"], "--relations", a["relations"],
                    "--protocol", a["protocol"], "--generation", a["generation"],
                    *([] if args.workers is None else ["--workers", args.workers])], results)
    if args.audit_speedup:
        for workers in (1, 2):
            stage(f"audit-workers{workers}", [*LAB, "audit", "--report", a["report"], "--fixture", a["fixture"],
                                              "--relations", a["relations"], "--protocol", a["protocol"],
                                              "--generation", a["generation"], "--workers", workers], results)
    figures = summarize(args, a, results, throughput, embedding, load_before, speedup_seconds, workers_option)
    print("\n".join(["", *table(results), "", *target_table(figures["rows"]), ""]))
    print("\n".join(figures["cpu_lines"]))
    print(f"corpus: {figures['corpus']}")
    print(f"embedding: {throughput['documents']} documents at {throughput['documents_per_second']} docs/s "
          f"({throughput['document_seconds']:.0f} s encode), {throughput['queries']} queries p50 "
          f"{throughput['query_p50_ms']} ms" + (f"; reused from {args.reuse_embedding}" if embedding else ""))
    print(f"load average before {load_before}, after {figures['load_after']} on {os.cpu_count()} CPUs")
    if args.json:
        save(args.json, figures)
        print(f"wrote {args.json}")
    return 0


def summarize(args, a: dict[str, Path], results: dict, throughput: dict, embedding: dict | None,
              load_before: list[float], speedup_seconds: dict[int, float], workers_option: bool) -> dict:
    source = load_json(a["source"], "source")
    jobs = len(load_json(a["report"], "report")["jobs"])
    documents = source["counts"]["documents"]
    timed = sum(results[name]["seconds"] for name in TIMED)
    pss = max([r["peak_pss_mib"] for r in results.values()] + [r["lab_peak_pss_mib"] or 0 for r in results.values()])
    rss = max([r["peak_rss_mib"] for r in results.values()] + [r["lab_peak_rss_mib"] or 0 for r in results.values()])
    phases = results["evaluate"].get("phases")
    rows = [
        row("twin_seconds", timed, args.questions, f"{args.questions:,}-query twin, {documents:,} documents"),
        row("evaluate_jobs_per_second", jobs / results["evaluate"]["seconds"], args.questions,
            f"{jobs:,} jobs, --clients {args.clients}" + ("" if args.workers is None else f", --workers {args.workers}")
            + (f"; {jobs_alone(phases, jobs)} (phases below)" if phases else "")),
        row("peak_rss_gib", pss / 1024, args.questions,
            "largest stage: " + max(results, key=lambda n: max(results[n]["peak_pss_mib"], results[n]["lab_peak_pss_mib"] or 0))
            + f"; the RSS sum (shared pages once per process): {rss / 1024:.2f} GiB"),
    ]
    if embedding is None:
        cohort = sum(results[name]["seconds"] for name in WITH_EMBEDDING)
        rows.append(row("cohort_seconds", cohort, args.questions,
                        f"{args.questions:,}-query twin, {documents:,} passages"
                        + (f" ({documents / COHORT_PASSAGES:.2f}x the target's {COHORT_PASSAGES:,}: the generator "
                           "writes about 16 distinct passages per question)" if args.questions == COHORT_QUESTIONS else "")))
    else:
        rows.append(row("cohort_seconds", None, args.questions, "not measured: the embedding was reused"))
    if embedding is None:
        rows.append(row("twin_with_embedding_seconds", timed + results["embed"]["seconds"], args.questions,
                        f"embed {results['embed']['seconds']:.1f} s ({throughput['documents_per_second']} docs/s) "
                        f"+ the other stages {timed:.1f} s"))
    else:
        rows.append(row("twin_with_embedding_seconds", None, args.questions, "not measured: the embedding was reused"))
    if "audit-workers1" in results:
        one, two = results["audit-workers1"]["seconds"], results["audit-workers2"]["seconds"]
        limit, cpu_note = speedup_bound(results["audit-workers1"], results["audit-workers2"], os.cpu_count() or 1)
        rows.append({**row("audit_speedup", one / two, args.questions, f"{one:.1f} s at 1 worker, {two:.1f} s at 2; {cpu_note}"),
                     "cpu_bound": limit})  # in --json too: the most 2 workers could gain on these cores
    else:
        rows.append(row("audit_speedup", None, args.questions, "not measured: run with --audit-speedup"))
    if speedup_seconds:
        rows.append(row("workers_speedup", speedup_seconds[1] / speedup_seconds[2], args.questions,
                        f"evaluate + audit: {speedup_seconds[1]:.1f} s at 1 worker, {speedup_seconds[2]:.1f} s at 2"))
    else:
        rows.append(row("workers_speedup", None, args.questions,
                        "not measured: run with --speedup" if workers_option
                        else "not measured: needs --workers on evaluate and audit"))
    cpu_lines: list[str] = []
    cpu_per_job: dict[str, dict] = {}
    for name in results:  # every evaluate run: where its CPU went, per job (the stage's profile)
        if name.startswith("evaluate"):
            lines, cpu_per_job[name] = per_job_lines(name, results[name], jobs, os.cpu_count() or 1)
            cpu_lines += lines
            if results[name].get("phases"):
                cpu_lines.append(phase_line(name, results[name]["phases"], jobs))
    return {
        "questions": args.questions,
        "cpu_lines": cpu_lines, "cpu_per_job": cpu_per_job,
        "corpus": {"documents": documents, "queries": source["counts"]["queries"], "jobs": jobs, "clients": args.clients,
                   "workers": args.workers},
        "stages": results, "embedding": {**throughput, **(embedding or {})},
        "timed_stages": list(TIMED), "timed_seconds": timed,
        "rows": rows, "elsewhere": [{"what": w, "target": t, "bench": b} for w, t, b in ELSEWHERE],
        "load_before": load_before, "load_after": load(), "cpus": os.cpu_count(),
        "report_bytes": a["report"].stat().st_size,
    }


if __name__ == "__main__":
    sys.exit(main())
