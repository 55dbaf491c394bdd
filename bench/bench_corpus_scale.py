"""The HippoRAG 2Wiki cohort's real corpus (6,119 passages): import, graph build, embedding, indexes.

    lab bench corpus-scale [--corpus FILE] [--passages N] [--questions N] [--json PATH]

The corpus is the real file of HippoRAG's 2WikiMultihopQA cohort (../shared/data/hipporag-2wikimultihopqa-
corpus); its question file is not on these machines, so the questions are made here from the corpus,
in the official 2Wiki row format: question i compares passages 2i and 2i + 1 (in the file's order),
both its gold, with the next eight passages as distractors. The import runs the real HippoRAG-layout
reader (hashes, every passage validated, gold matched by title) under a protocol `lab protocol new`
would write; then the document_title_graph_v1 build, the embedding with the lab's default model
(all-MiniLM-L6-v2, CPU), and the lab's in-memory indexes (BM25 postings, vectors, relations) and
the HNSW lane (cosine_hnsw_v1). `--passages N` takes the first N passages (a quick check that the
benchmark runs; its figures say nothing about the cohort's scale).

Each figure is printed with the load average beside it and, where one exists, its target: the graph
build's pro-rata share of the graph build's target, 100,000 documents in 60 s. Run it on a quiet machine (load
average under 2); figures from a busy one are noise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from builders.embedding import BuildOptions, build, decode_vector, open_provider
from builders.title_graph import build_for_source
from importer import import_source
from protocols.families.lists.ann import ANN_PROFILES
from protocols.new import new_protocol
from server.families.ann.engine import build as build_hnsw
from server.retrieval.indexes import Indexes

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "data" / "hipporag-2wikimultihopqa-corpus" / "2wikimultihopqa_corpus.json"
GRAPH_TARGET_DOCS_PER_SECOND = 100_000 / 60.0  # the graph build's target: 100,000 documents in under 60 s (docs/scale.md)
DISTRACTORS = 8


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"


def questions_from(passages: list[dict], count: int) -> list[dict]:
    """2Wiki-format comparison questions over the corpus, each with two gold passages."""
    rows = []
    for i in range(min(count, len(passages) // 2)):
        gold = passages[2 * i:2 * i + 2]
        distractors = [passages[(2 * i + 2 + j) % len(passages)] for j in range(DISTRACTORS)]
        context = {p["title"]: [p["text"]] for p in gold + distractors}  # one passage per title (the corpus's)
        rows.append({
            "_id": hashlib.sha256(f"bench-corpus-scale/{i}".encode()).hexdigest()[:32],
            "type": "comparison",
            "question": f"Which is mentioned first, {gold[0]['title']} or {gold[1]['title']}? ({i})",
            "context": [[title, sentences] for title, sentences in context.items()],
            "supporting_facts": [[gold[0]["title"], 0], [gold[1]["title"], 0]],
            "evidences": [],
            "answer": gold[0]["title"],
        })
    return rows


def stage(label: str, seconds: float, count: int, unit: str, target_rate: float | None = None) -> dict:
    rate = count / seconds if seconds > 0 else float("inf")
    target = f"target >= {target_rate:,.0f} {unit}/s ({'met' if rate >= target_rate else 'MISSED'})" \
        if target_rate else "target: none stated"
    print(f"{label}: {count:,} {unit} in {seconds:.2f} s = {rate:,.0f} {unit}/s; {target}; {load()}", flush=True)
    return {"seconds": seconds, "count": count, "per_second": rate, "load_average": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench corpus-scale", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus file (default: the real 2Wiki one)")
    parser.add_argument("--passages", type=int, help="only the first N passages (a quick check, not a figure)")
    parser.add_argument("--questions", type=int, default=1000, help="questions made from the corpus (default 1,000)")
    parser.add_argument("--json", type=Path, help="also write the figures here (bench/run_all.py reads it)")
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        print(f"{args.corpus} is absent (the shared data lives only in ../shared): nothing to measure")
        return 0
    passages = json.loads(args.corpus.read_text(encoding="utf-8"))
    if args.passages:
        passages = passages[:args.passages]
    figures: dict = {"bench": "corpus_scale", "corpus": str(args.corpus), "passages": len(passages)}
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        corpus = data / "2wikimultihopqa_corpus.json"
        if args.passages:
            corpus.write_text(json.dumps(passages), encoding="utf-8")
        else:
            corpus.symlink_to(args.corpus.resolve())
        (data / "2wikimultihopqa.json").write_text(json.dumps(questions_from(passages, args.questions)))
        protocol = new_protocol(questions=data / "2wikimultihopqa.json", corpus=corpus,
                                layout="hipporag_2wikimultihopqa_v1", test="all", development=None,
                                version="bench-corpus-scale")
        (Path(tmp) / "protocol.json").write_text(json.dumps(protocol))
        print(f"corpus {args.corpus} ({len(passages):,} passages{', a slice' if args.passages else ''}); {load()}")

        graph_seconds = []

        def timed_graph(source, source_digest):
            started = time.perf_counter()
            relations = build_for_source(source, source_digest)
            graph_seconds.append(time.perf_counter() - started)
            return relations

        started = time.perf_counter()
        summary = import_source(Path(tmp) / "protocol.json", data, Path(tmp) / "source.json",
                                Path(tmp) / "relations.json", graph_builder=timed_graph)
        total = time.perf_counter() - started
        figures["import"] = stage("import (hash, read, match gold, assemble)", total - graph_seconds[0],
                                  summary["documents"], "documents")
        figures["graph_build"] = stage(f"graph build ({sum(summary['relation_counts'].values()):,} relations)",
                                       graph_seconds[0], summary["documents"], "documents", GRAPH_TARGET_DOCS_PER_SECOND)
        source = json.loads((Path(tmp) / "source.json").read_text())
        relations = json.loads((Path(tmp) / "relations.json").read_text())["relations"]

        provider = open_provider(BuildOptions())
        started = time.perf_counter()
        built = build(source, provider, progress=False)
        figures["embedding"] = stage("embedding (documents and queries)", time.perf_counter() - started,
                                     len(source["documents"]) + len(source["queries"]), "texts")
        space_id = built.fixture["space_id"]

        index = Indexes().scope("bench")
        started = time.perf_counter()
        for doc, entry in zip(source["documents"], built.fixture["documents"]):
            index.put_memory(doc["id"], 1, doc["text"], {"content": doc["text"], "metadata": {}})
            index.put_binding(doc["id"], 1, space_id, decode_vector(entry["vector"]), binding_id="emb-" + doc["id"][-32:])
        for r in relations:
            index.put_relation({"id": r["id"], "revision": 1, "kind": r["kind"], "source": {"id": r["source"], "revision": 1},
                                "target": {"id": r["target"], "revision": 1}, "provenance": r["provenance"]})
        figures["indexes"] = stage("in-memory indexes (BM25, vectors, relations)", time.perf_counter() - started,
                                   len(source["documents"]), "documents")
        started = time.perf_counter()
        build_hnsw(index, index.spaces[space_id], ANN_PROFILES["cosine_hnsw_v1"])
        figures["hnsw"] = stage("HNSW lane (cosine_hnsw_v1)", time.perf_counter() - started,
                                len(source["documents"]), "documents")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
