"""The lab's HippoRAG 2 PageRank beside igraph's, the peer HippoRAG runs (docs/hipporag2.md).

    lab bench hipporag2-pagerank [--sizes openie,100000] [--queries 100] [--json PATH]

Both walk the same graph from the same seeds: the lab's integer walk
(server/retrieval/whole_graph_pagerank.py) and python-igraph's `personalized_pagerank` with
`implementation="prpack"`, damping 0.5, undirected, weighted, the graph built with igraph's
parallel edges exactly as HippoRAG 2 adds them. Per query it times each call (in process, the
graph already built, as HippoRAG holds it) and compares the top-10 passages (ties by id on both
sides). Prints the p50 of each, their ratio beside the target (<= 2x igraph), and the share of
queries whose top 10 are identical (target >= 99%), each disagreement with its reason.

- `openie`: HippoRAG's own GPT-3.5 graph over its 1,890 MuSiQue passages (../shared), phrases,
  facts, passages and the 100 questions encoded by the bundled MiniLM; seeds as hipporag2_v1
  sets them.
- a number N: a synthetic graph of N passages, 10 triples each over a Zipf vocabulary of phrases,
  one phrase in 20 given a near-duplicate (synonym edges), random unit vectors for the dense and
  fact scores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from builders import hipporag2_graph as hg
from protocols.families.graphs.hipporag2 import HIPPORAG2, PASSAGE, PHRASE
from server.families.hipporag2.linking import seeds as seeds_for
from server.families.hipporag2.ranking import passage_rows, seed_vector
from server.retrieval.whole_graph_pagerank import pagerank, reset_vector, transitions

REPO = Path(__file__).resolve().parents[2]
OPENIE = REPO.parent / "shared" / "data" / "hipporag-musique-openie" / "openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"
QUESTIONS = REPO.parent / "shared" / "data" / "hipporag-musique-sample" / "musique_train.json"
TARGET_RATIO = 2.0
TARGET_AGREEMENT = 0.99
TOP = 10


def kept(triples) -> list[list[str]]:
    """HippoRAG's loader: exactly three non-blank strings, repeats within a passage once."""
    out, seen = [], set()
    for t in triples:
        if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t) and tuple(t) not in seen:
            seen.add(tuple(t))
            out.append(t)
    return out


def encode(texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    from builders.embedding.providers.st_provider import default_model_dir

    model = SentenceTransformer(str(default_model_dir()), device="cpu")
    return np.asarray(model.encode(texts, batch_size=128, convert_to_numpy=True), dtype=np.float32)


@dataclass(frozen=True)
class OpenieInputs:
    docs: list[dict]  # HippoRAG's OpenIE passages; passage i is the graph's "p{i:04d}"
    questions: list[dict]  # HippoRAG's question rows
    graph: hg.Hipporag2Graph  # synonym edges included
    cosines: list[tuple[np.ndarray, np.ndarray]]  # per question: (fact cosines, passage cosines)


def openie_inputs(queries: int | None = None) -> OpenieInputs:
    """HippoRAG's own graph and its questions, every text encoded by the bundled MiniLM."""
    docs = json.loads(OPENIE.read_text(encoding="utf-8"))["docs"]
    ids = [f"p{i:04d}" for i in range(len(docs))]
    graph = hg.build(ids, {pid: kept(d["extracted_triples"]) for pid, d in zip(ids, docs)})
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))[:queries]
    started = time.perf_counter()
    vectors = encode(graph.phrases + [hg.fact_text(f) for f in graph.facts] + [d["passage"] for d in docs]
                     + [q["question"] for q in questions])
    print(f"  encoded {len(vectors):,} texts in {time.perf_counter() - started:.0f} s", flush=True)
    phrases, rest = vectors[: len(graph.phrases)], vectors[len(graph.phrases):]
    facts, rest = rest[: len(graph.facts)], rest[len(graph.facts):]
    passages, asked = rest[: len(docs)], rest[len(docs):]
    hg.add_synonyms(graph, hg.synonyms(graph.phrases, phrases))
    fact_unit, passage_unit = hg.unit_rows(facts), hg.unit_rows(passages)
    return OpenieInputs(docs, questions, graph, [(fact_unit @ q, passage_unit @ q) for q in hg.unit_rows(asked)])


def synthetic_case(passages: int, queries: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    ids = [f"p{i:06d}" for i in range(passages)]
    vocabulary = max(1000, passages * 3)
    ranks = np.minimum(rng.zipf(1.3, size=(passages, 10, 2)), vocabulary) - 1
    triples = {pid: [[f"phrase {a}", "relates to", f"phrase {b}"] for a, b in ranks[i]] for i, pid in enumerate(ids)}
    graph = hg.build(ids, triples)
    dims = 32
    phrase_vectors = rng.standard_normal((len(graph.phrases), dims)).astype(np.float32)
    twins = np.arange(0, len(graph.phrases) - 1, 20)
    phrase_vectors[twins + 1] = phrase_vectors[twins] + 0.1 * rng.standard_normal((len(twins), dims)).astype(np.float32)
    hg.add_synonyms(graph, hg.synonyms(graph.phrases, phrase_vectors))
    cosines = [(rng.uniform(-0.2, 0.9, len(graph.facts)), rng.uniform(-0.2, 0.9, passages)) for _ in range(queries)]
    return graph, cosines


def igraph_of(graph: hg.Hipporag2Graph, nodes: list[str]):
    """The graph as HippoRAG 2 hands it to igraph: one edge per ordered pair it holds, undirected."""
    import igraph

    position = {node: i for i, node in enumerate(nodes)}
    g = igraph.Graph(directed=False)
    g.add_vertices(len(nodes))
    pairs = [(position[a], position[b]) for a, b in graph.stats if a != b]
    g.add_edges(pairs, attributes={"weight": [w for (a, b), w in graph.stats.items() if a != b]})
    return g


def top(values: np.ndarray, k: int) -> list[int]:
    return np.lexsort((np.arange(len(values)), -values))[:k].tolist()


def run_case(name: str, graph: hg.Hipporag2Graph, cosines) -> dict:
    nodes = [PHRASE + p for p in graph.phrases] + [PASSAGE + p for p in graph.passages]
    started = time.perf_counter()
    walk = transitions(nodes, graph.undirected(), HIPPORAG2["pagerank"]["transition_bits"])
    built = time.perf_counter() - started
    peer = igraph_of(graph, nodes)
    print(f"  {name}: {len(graph.passages):,} passages, {len(graph.phrases):,} phrases, {len(graph.facts):,} facts, "
          f"{peer.ecount():,} igraph edges; transitions built in {built:.1f} s", flush=True)
    rows = passage_rows(walk, graph.passages)
    lab_ms, peer_ms, same, notes, iterations = [], [], 0, [], []
    rules = HIPPORAG2["pagerank"]
    for q, (fact_cos, dense_cos) in enumerate(cosines):
        s = seeds_for(fact_cos, dense_cos, graph.facts, graph.holders, HIPPORAG2)
        vector = seed_vector(walk, rows, s)
        t0 = time.perf_counter()
        mass = pagerank(walk, reset_vector(vector, rules["grid_bits"]), rules["max_iterations"])
        t1 = time.perf_counter()
        scores = peer.personalized_pagerank(vertices=None, directed=False, damping=0.5, weights="weight",
                                            reset=vector.astype(np.float64).tolist(), implementation="prpack")
        t2 = time.perf_counter()
        lab_ms.append((t1 - t0) * 1e3)
        peer_ms.append((t2 - t1) * 1e3)
        iterations.append(mass.iterations)
        ours = top(mass.mass[rows].astype(np.float64), TOP)
        theirs_values = np.asarray(scores)[rows]
        theirs = top(theirs_values, TOP)
        if ours == theirs:
            same += 1
        else:
            gap = min(abs(theirs_values[a] - theirs_values[b]) / max(theirs_values[a], theirs_values[b])
                      for a, b in zip(ours, theirs) if a != b) if any(a != b for a, b in zip(ours, theirs)) else 0.0
            notes.append(f"query {q}: first difference at rank {next(i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b) + 1}, "
                         f"igraph's relative score gap between the swapped passages {gap:.1e}")
    p50_lab, p50_peer = statistics.median(lab_ms), statistics.median(peer_ms)
    load = os.getloadavg()[0]
    print(f"  {name}: lab p50 {p50_lab:.2f} ms, igraph p50 {p50_peer:.2f} ms, ratio {p50_lab / p50_peer:.2f} "
          f"(target <= {TARGET_RATIO}: {'met' if p50_lab <= TARGET_RATIO * p50_peer else 'MISSED'}), "
          f"top-{TOP} identical on {same}/{len(cosines)} ({same / len(cosines):.1%}, target >= {TARGET_AGREEMENT:.0%}: "
          f"{'met' if same >= TARGET_AGREEMENT * len(cosines) else 'MISSED'}), iterations {min(iterations)}-{max(iterations)}, "
          f"load {load:.2f}", flush=True)
    for note in notes:
        print("    " + note)
    return {"case": name, "passages": len(graph.passages), "phrases": len(graph.phrases), "facts": len(graph.facts),
            "igraph_edges": peer.ecount(), "queries": len(cosines), "lab_p50_ms": p50_lab, "igraph_p50_ms": p50_peer,
            "ratio": p50_lab / p50_peer, "top10_identical": same, "iterations": [min(iterations), max(iterations)],
            "disagreements": notes, "load": load}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench hipporag2-pagerank", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="openie,100000", help="openie and/or passage counts (default: openie,100000)")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    results = []
    for size in args.sizes.split(","):
        print(f"case {size} (load {os.getloadavg()[0]:.2f})", flush=True)
        if size == "openie":
            if not OPENIE.exists():
                print(f"  skipped: {OPENIE} is absent")
                continue
            inputs = openie_inputs(args.queries)
            graph, cosines = inputs.graph, inputs.cosines
        else:
            graph, cosines = synthetic_case(int(size), args.queries)
        results.append(run_case(size, graph, cosines))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
