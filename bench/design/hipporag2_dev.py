"""hipporag2_v1 beside its own dense retriever on HippoRAG's GPT-3.5 graph: exploratory, development rows only.

    lab bench hipporag2-dev [--resamples 2000] [--json PATH]

The 100 questions of ../shared/data/hipporag-musique-sample are the MuSiQue sample's development
rows (its MANIFEST says so), so this is a design reading, never a test cohort. The passages,
phrases, facts and questions are encoded by the bundled MiniLM. `dense` ranks every passage by
cosine (ties by id), which is what `semantic` does. `hipporag2_v1` ranks them as
server/families/hipporag2/ does, with the published defaults: no parameter is chosen here. A passage is
relevant when it is one of the question's supporting paragraphs (title and text equal). Prints R@2,
R@5 and nDCG@10 per method, and the paired difference with its bootstrap interval (seed 0).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

from bench.peers.hipporag2_pagerank import OPENIE, QUESTIONS, openie_inputs
from evaluator.numbers.statistics import bootstrap_interval
from protocols.families.graphs.hipporag2 import HIPPORAG2, PASSAGE, PHRASE
from protocols.metrics.judged_recall import recall
from protocols.metrics.ndcg import ndcg
from server.families.hipporag2.linking import seeds as seeds_for
from server.families.hipporag2.ranking import rank
from server.retrieval.whole_graph_pagerank import transitions

MEASURES = {"R@2": lambda r, j: recall(r, j, 2), "R@5": lambda r, j: recall(r, j, 5), "nDCG@10": lambda r, j: ndcg(r, j, 10)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench hipporag2-dev", description=__doc__.split("\n\n")[0])
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--json", type=Path, help="write the per-method figures here")
    args = parser.parse_args(argv)
    if not OPENIE.exists() or not QUESTIONS.exists():
        print(f"skipped: {OPENIE.parent} or {QUESTIONS.parent} is absent")
        return 0
    inputs = openie_inputs()
    graph, rows = inputs.graph, inputs.questions
    ids = graph.passages
    by_text = {d["passage"]: pid for pid, d in zip(ids, inputs.docs)}
    judgments = [{by_text[p["title"] + "\n" + p["paragraph_text"]]: 1 for p in row["paragraphs"] if p["is_supporting"]}
                 for row in rows]
    nodes = [PHRASE + p for p in graph.phrases] + [PASSAGE + p for p in graph.passages]
    walk = transitions(nodes, graph.undirected(), HIPPORAG2["pagerank"]["transition_bits"])
    scores: dict[str, dict[str, list[float]]] = {m: {k: [] for k in MEASURES} for m in ("dense", "hipporag2_v1")}
    for (fact_cos, dense_cos), judged in zip(inputs.cosines, judgments):
        dense = [ids[i] for i in np.lexsort((np.arange(len(ids)), -dense_cos))[:10]]
        ranked = rank(walk, graph.passages, dense_cos, seeds_for(fact_cos, dense_cos, graph.facts, graph.holders,
                                                                  HIPPORAG2), HIPPORAG2, 10)
        for method, ranking in (("dense", dense), ("hipporag2_v1", [pid for pid, _ in ranked.order])):
            for name, measure in MEASURES.items():
                scores[method][name].append(measure(ranking, judged))
    load = os.getloadavg()[0]
    print(f"{len(rows)} development questions, {len(graph.phrases):,} phrases, {len(graph.facts):,} facts "
          f"(load {load:.2f})")
    for name in MEASURES:
        a, b = np.array(scores["hipporag2_v1"][name]), np.array(scores["dense"][name])
        low, high = bootstrap_interval(a - b, 0, args.resamples, 0.95)
        print(f"  {name:8s} dense {b.mean():.3f}  hipporag2_v1 {a.mean():.3f}  difference {a.mean() - b.mean():+.3f} "
              f"[{low:+.3f}, {high:+.3f}]")
    if args.json:
        args.json.write_text(json.dumps({"load": load, "scores": scores}), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
