"""Time a graph builder's `build_relations` on a synthetic corpus of N distinct paragraphs.

    lab bench graph-build [--documents 100000] [--seed S] [--builder NAME] [--profile]

Target (for document_title_graph_v1, and the same for document_entity_graph_v1): 100,000 documents in under 60 s on this
machine. --builder names the builder (builders/graph_builders.py; default document_title_graph_v1;
document_entity_graph_v1 builds the title graph and the shares_name relations;
document_ner_graph_v1 runs the pinned spaCy NER first, timed apart, then both and the
shares_entity relations: its line gives passages/s against the 50 per core target). Prints documents,
relations by kind, the shares_name degree distribution, seconds and documents per second;
`--profile` adds the top of a cProfile of the build.
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

from builders.graph_builders import BUILDERS
from builders.title_graph import project
from ground.artifacts import document_id, document_text
from importer import synthetic

TARGET_SECONDS = 60.0
NER_TARGET_PER_CORE = 50  # passages per second per core: what keeps NER of a 100k corpus under an hour on one core


def synthetic_source(seed: str, documents: int) -> dict:
    """The part of a source.json value the builder's projection reads: its documents."""
    pairs = synthetic.corpus_of_size(seed, documents)
    return {"documents": [
        {"id": document_id(title, text), "title": title, "paragraph_text": text, "text": document_text(title, text)}
        for title, text in pairs
    ]}


def degree_line(relations: list[dict], documents: int) -> str:
    """mean, median, p90, max and the isolated share of the shares_name degree."""
    degree: dict[str, int] = {}
    for rel in relations:
        if rel["kind"] == "shares_name":
            for end in (rel["source"], rel["target"]):
                degree[end] = degree.get(end, 0) + 1
    values = sorted(list(degree.values()) + [0] * (documents - len(degree)))
    return (f"mean {sum(values) / documents:.1f}, median {values[documents // 2]}, p90 {values[int(0.9 * (documents - 1))]}, "
            f"max {values[-1]}, isolated {values.count(0) / documents:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench graph-build", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--seed", default="bench-graph-v1")
    parser.add_argument("--builder", default="document_title_graph_v1", choices=list(BUILDERS),
                        help="the graph builder to time (default: %(default)s)")
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
    module = BUILDERS[args.builder]
    ner_line = ""
    if hasattr(module, "run_ner"):  # document_ner_graph_v1: time the model apart from the graph
        from builders.ner import progress_printer
        ner_started, ner_cpu = time.perf_counter(), time.process_time()
        ner_output = module.run_ner(projection, progress=progress_printer("ner"))
        ner_seconds, ner_cpu = time.perf_counter() - ner_started, time.process_time() - ner_cpu
        ner_line = (f"ner {len(projection)} passages in {ner_seconds:.2f} s wall ({ner_cpu:.2f} s CPU, one process): "
                    f"{len(projection) / ner_seconds:.0f} passages/s, {len(projection) / ner_cpu:.0f} per CPU-second "
                    f"(target >= {NER_TARGET_PER_CORE} per core; load average {os.getloadavg()[0]:.2f})")
        print(ner_line, flush=True)
        relations = module.build_relations(projection, "bench", ner_output)
    else:
        relations = module.build_relations(projection, "bench")
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started  # tells a slow build from a busy machine

    counts = ", ".join(f"{kind} {n}" for kind, n in relations["counts"].items())
    verdict = "within" if seconds < TARGET_SECONDS else "OVER"
    print(f"documents {len(projection)}")
    print(f"relations {len(relations['relations'])} ({counts})")
    if "shares_name" in relations["counts"]:
        print("shares_name degree " + degree_line(relations["relations"], len(projection)))
    print(f"{args.builder} build_relations {seconds:.2f} s wall ({cpu_seconds:.2f} s CPU), "
          f"{len(projection) / seconds:.0f} docs/s ({verdict} the {TARGET_SECONDS:.0f} s target; "
          f"load average {os.getloadavg()[0]:.2f})")
    if args.json:
        args.json.write_text(json.dumps({"bench": "graph_build", "builder": args.builder, "documents": len(projection),
                                         "relations": len(relations["relations"]), "seconds": seconds,
                                         "cpu_seconds": cpu_seconds, "load_average": os.getloadavg()[0]}, indent=1))
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(20)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
