"""Embedding throughput on the MuSiQue sample: documents/s and per-query encode ms (p50/p95).

    python bench/bench_embedding.py [--sample ../shared/data/musique-sample] [--threads N] [--batch-size N]

The corpus is the sample imported through the real importer with the sample protocol (the corpus
an evaluation actually embeds). If the importer cannot run here, every paragraph of both sample
files is read directly, deduplicated on (title, paragraph_text), with every question as a query;
the printed `corpus:` line says which one was measured. Nothing is written outside a temp dir.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from builders.embedding import DEFAULT_BATCH_SIZE, DEFAULT_THREADS, BuildOptions, build, default_model_dir, open_encoder  # noqa: E402
from builders.model_profiles import choose_profile, read_model_facts  # noqa: E402
from protocols.artifacts import document_id, document_text  # noqa: E402
from protocols.files import load_json  # noqa: E402

SAMPLE = REPO.parent / "shared" / "data" / "musique-sample"
SAMPLE_PROTOCOL = REPO / "protocols" / "musique-sample-v1.json"


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=Path, default=SAMPLE)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--raw", action="store_true", help="skip the importer; embed every sample paragraph")
    parser.add_argument("--json", type=Path, help="also write the headline figures here (bench/run_all.py reads it)")
    args = parser.parse_args()
    if not args.sample.is_dir():
        print(f"sample directory {args.sample} is absent; nothing to measure", file=sys.stderr)
        return 2
    source, corpus = None, None
    if not args.raw:
        try:
            source, corpus = imported_source(args.sample)
        except Exception as exc:  # a benchmark still measures something, and says what
            print(f"importer unavailable ({type(exc).__name__}: {exc}); falling back to raw paragraphs",
                  file=sys.stderr)
    if source is None:
        source, corpus = raw_source(args.sample)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    encoder = open_encoder(read_model_facts(default_model_dir()))
    load_s = time.perf_counter() - start
    options = BuildOptions(threads=args.threads, batch_size=args.batch_size)
    result = build(source, encoder, choose_profile(encoder.facts), options)
    d = result.generation["totals"]["documents"]
    q = result.generation["totals"]["queries"]
    print(f"corpus: {corpus}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs; torch threads {args.threads}; "
          f"batch size {args.batch_size}; model {encoder.facts.name} ({result.fixture['space']['dimensions']} dims)")
    # Other processes on a shared machine skew every figure; the load average says how much.
    print(f"1-min load average: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"model load (incl. library import): {load_s:.1f} s; warm-up encode {result.generation['totals']['warmup_ms']:.1f} ms")
    print(f"documents: {d['count']} in {d['elapsed_ms'] / 1000:.2f} s = {d['per_second']:.1f} docs/s "
          f"({d['tokens']} tokens, max {d['max_tokens_seen']}, {d['truncated']} truncated at "
          f"{result.fixture['provenance']['max_tokens']})")
    print(f"queries: {q['count']} one at a time: p50 {q['p50_ms']:.2f} ms, p95 {q['p95_ms']:.2f} ms, "
          f"max {q['max_ms']:.2f} ms ({q['truncated']} truncated)")
    if args.json:
        args.json.write_text(json.dumps({"bench": "embedding", "documents": d["count"], "docs_per_second": d["per_second"],
                                         "query_p50_ms": q["p50_ms"], "query_p95_ms": q["p95_ms"],
                                         "load_average": os.getloadavg()[0]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
