"""Time `builders.graph.build_relations` on a synthetic corpus of N distinct paragraphs.

    lab bench graph-build [--documents 100000] [--seed S] [--profile]

Target (issue 2): 100,000 documents in under 60 s on this machine. Prints documents, relations by
kind, seconds and documents per second; `--profile` adds the top of a cProfile of the build.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time
from pathlib import Path

from builders.graph import build_relations, project
from importer import synthetic
from protocols.artifacts import document_id, document_text

TARGET_SECONDS = 60.0


def synthetic_source(seed: str, documents: int) -> dict:
    """The part of a source.json value the builder's projection reads: its documents."""
    pairs = synthetic.corpus_of_size(seed, documents)
    return {"documents": [
        {"id": document_id(title, text), "title": title, "paragraph_text": text, "text": document_text(title, text)}
        for title, text in pairs
    ]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench graph-build", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--seed", default="bench-graph-v1")
    parser.add_argument("--profile", action="store_true", help="print where the build spends its time")
    parser.add_argument("--json", type=Path, help="also write the headline figures here (`lab bench all` reads it)")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    source = synthetic_source(args.seed, args.documents)
    generated = time.perf_counter() - started
    projection = project(source)
    print(f"generated {len(projection)} distinct paragraphs in {generated:.2f} s", flush=True)

    profiler = cProfile.Profile() if args.profile else None
    started, cpu_started = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    relations = build_relations(projection, "bench")
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started  # tells a slow build from a busy machine

    counts = ", ".join(f"{kind} {n}" for kind, n in relations["counts"].items())
    verdict = "within" if seconds < TARGET_SECONDS else "OVER"
    print(f"documents {len(projection)}")
    print(f"relations {len(relations['relations'])} ({counts})")
    print(f"build_relations {seconds:.2f} s wall ({cpu_seconds:.2f} s CPU), "
          f"{len(projection) / seconds:.0f} docs/s ({verdict} the {TARGET_SECONDS:.0f} s target)")
    if args.json:
        args.json.write_text(json.dumps({"bench": "graph_build", "documents": len(projection),
                                         "relations": len(relations["relations"]), "seconds": seconds,
                                         "cpu_seconds": cpu_seconds, "load_average": os.getloadavg()[0]}, indent=1))
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(20)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
