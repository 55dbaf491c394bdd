"""The lab's LinearRAG walk beside igraph's, the peer LinearRAG runs (docs/linearrag.md).

    lab bench linearrag-pagerank --runs RUN [RUN ...] [--json PATH]

Each RUN is a finished run of a protocol with linearrag_v1 (its fixture, source and report). For
every question whose page seeded an entity, both walk the same graph from the same node weights:
the lab's integer walk (server/retrieval/whole_graph_pagerank.py) from the weights floored on the
profile's grid, and python-igraph's `personalized_pagerank` with `implementation="prpack"`,
damping 0.5, undirected, weighted, reset = the float weights, exactly LinearRAG's `run_ppr`. The
weights are recomputed here as the route computes them (the page's activations, the passages'
dense scores and entity bonuses). Per question it times each call (in process, the graph already
built) and compares the top-10 passages (ties by id on both sides). Prints the p50 of each, their
ratio beside the target (<= 2x igraph), and the share of questions whose top 10 are identical
(target >= 99%), each disagreement with igraph's relative gap between the swapped passages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from builders.embedding import decode_vector
from builders.embedding.sections.linearrag import graph_of
from protocols.families.graphs.linearrag import ENTITY, PASSAGE
from server.families.linearrag.bridging import passage_weights, seed_units
from server.retrieval.whole_graph_pagerank import pagerank, reset_of, transitions

TARGET_RATIO = 2.0
TARGET_AGREEMENT = 0.99
TOP = 10


def unit(vector: np.ndarray) -> np.ndarray:
    wide = np.asarray(vector, dtype=np.float32).astype(np.float64)
    return wide / np.sqrt(np.dot(wide, wide))


def run_case(run: Path) -> dict:
    fixture = json.loads((run / "fixture.json").read_text(encoding="utf-8"))
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    protocol = json.loads((run / "protocol.json").read_text(encoding="utf-8"))
    method = next(name for name, m in protocol["methods"].items() if m["route"] == "linearrag")
    profile = protocol["ranking_profiles"][protocol["methods"][method]["profile"]]
    rules = profile["pagerank"]
    graph = graph_of(fixture)
    documents = fixture["source"]["documents"]
    passages = sorted(d["id"] for d in documents)
    texts = {d["id"]: d["text"].lower() for d in documents}
    rows = {e["id"]: unit(decode_vector(e["vector"])) for e in fixture["documents"]}
    matrix = np.stack([rows[p].astype(np.float32).astype(np.float64) for p in passages])
    weights = {(PASSAGE + p, ENTITY + e): share for (p, e), share in graph.weights().items()}
    nodes = [PASSAGE + p for p in passages] + [ENTITY + e for e in graph.entities]
    started = time.perf_counter()
    walk = transitions(nodes, weights, rules["transition_bits"])
    built = time.perf_counter() - started
    import igraph

    peer = igraph.Graph(n=len(nodes), edges=[(walk.position[a], walk.position[b]) for a, b in weights], directed=False)
    peer.es["weight"] = [float(w) for w in weights.values()]
    print(f"  {run.name}: {len(passages):,} passages, {len(graph.entities):,} entities, {peer.ecount():,} edges; "
          f"transitions built in {built:.1f} s", flush=True)
    queries = {q["id"]: unit(decode_vector(q["vector"])) for q in fixture["queries"]}
    occurrences: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def occurrences_of(entity: str):
        if entity not in occurrences:
            needle = entity.lower()
            hits = [(i, texts[p].count(needle)) for i, p in enumerate(passages) if needle in texts[p]]
            occurrences[entity] = (np.array([i for i, _ in hits], dtype=np.int64),
                                   np.array([n for _, n in hits], dtype=np.int64))
        return occurrences[entity]

    lab_ms, peer_ms, same, notes, asked = [], [], 0, [], 0
    seen = set()
    for row in report["rows"]:
        section = row["page"].get("linearrag") if row["method"] == method else None
        if not section or not section["links"] or row["query_id"] in seen:
            continue
        seen.add(row["query_id"])
        asked += 1
        dense = np.clip(matrix @ queries[row["query_id"]], -1.0, 1.0)
        activated = {a["entity"]: (a["score"], a["tier"]) for a in section["activated"]}
        entity_weight = {a["entity"]: a["weight"] for a in section["activated"]}
        floats = list(passage_weights(dense, activated, occurrences_of, profile["passages"]))
        floats += [0.0] * len(graph.entities)
        for entity, weight in entity_weight.items():
            floats[walk.position[ENTITY + entity]] += weight
        units = [seed_units(w, rules["seed_bits"]) for w in floats[: len(passages)]] + [0] * len(graph.entities)
        for entity, weight in entity_weight.items():
            units[walk.position[ENTITY + entity]] += seed_units(weight, rules["seed_bits"])
        reset = [max(0.0, w) for w in floats]
        t0 = time.perf_counter()
        mass = pagerank(walk, reset_of(units, rules["grid_bits"]), rules["max_iterations"])
        t1 = time.perf_counter()
        scores = peer.personalized_pagerank(vertices=None, directed=False, damping=0.5, weights="weight", reset=reset,
                                            implementation="prpack")
        t2 = time.perf_counter()
        lab_ms.append((t1 - t0) * 1e3)
        peer_ms.append((t2 - t1) * 1e3)
        ours = np.lexsort((np.arange(len(passages)), -mass.mass[: len(passages)].astype(np.float64)))[:TOP].tolist()
        theirs_values = np.asarray(scores)[: len(passages)]
        theirs = np.lexsort((np.arange(len(passages)), -theirs_values))[:TOP].tolist()
        if ours == theirs:
            same += 1
        else:
            first = next(i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b)
            a, b = ours[first], theirs[first]
            gap = abs(theirs_values[a] - theirs_values[b]) / max(theirs_values[a], theirs_values[b])
            notes.append(f"{row['query_id']}: first difference at rank {first + 1}, igraph's relative gap between the "
                         f"two passages {gap:.1e}")
    p50_lab, p50_peer = statistics.median(lab_ms), statistics.median(peer_ms)
    load = os.getloadavg()[0]
    print(f"  {run.name}: {asked} questions; lab p50 {p50_lab:.2f} ms, igraph p50 {p50_peer:.2f} ms, ratio "
          f"{p50_lab / p50_peer:.2f} (target <= {TARGET_RATIO}: {'met' if p50_lab <= TARGET_RATIO * p50_peer else 'MISSED'}), "
          f"top-{TOP} identical on {same}/{asked} ({same / asked:.1%}), load {load:.2f}", flush=True)
    for note in notes:
        print("    " + note)
    return {"run": str(run), "passages": len(passages), "entities": len(graph.entities), "edges": peer.ecount(),
            "questions": asked, "lab_p50_ms": p50_lab, "igraph_p50_ms": p50_peer, "ratio": p50_lab / p50_peer,
            "top10_identical": same, "disagreements": notes, "load": load}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench linearrag-pagerank", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, nargs="+", required=True, help="finished runs of a linearrag protocol")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    results = []
    for run in args.runs:
        print(f"run {run} (load {os.getloadavg()[0]:.2f})", flush=True)
        results.append(run_case(run))
    same, asked = sum(r["top10_identical"] for r in results), sum(r["questions"] for r in results)
    print(f"all runs: top-{TOP} identical on {same}/{asked} ({same / asked:.1%}, target >= {TARGET_AGREEMENT:.0%}: "
          f"{'met' if same >= TARGET_AGREEMENT * asked else 'MISSED'})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
