"""PRF design harness (docs/prf.md): named variants of RM3, Rocchio and their fusion, in process,
over the development queries of the design imports only; per dataset and pooled (equal weights):
nDCG@10 and judged R@10, beside bm25_v1, cosine_exact_v1 and weighted_rrf_v2.

    lab bench prf-dev --runs musique=runs/design/musique hotpotqa=runs/design/hotpotqa \
        2wikimultihopqa=runs/design/2wikimultihopqa [--json PATH]

The run directories are the v3 design imports (docs/graph-v3.md). Every variant is named below
before it is scored (VARIANTS); the harness never reads a test split's judgments (DevCorpus holds
development queries only).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys

from bench.design.graph_v3_data import load_dev_corpus
from bench.design.graph_v3_dev import parse_runs
from evaluator.numbers import metrics
from ground.command import run
from ground.files import refuse_existing, save
from protocols.families.lists.prf import PRF_PROFILES
from protocols.routes import PROFILES
from server.families.prf.prf_route import rm3_ranking, rocchio_ranking
from server.retrieval.bm25 import bm25
from server.retrieval.cosine import cosine
from server.retrieval.fusion import fuse
from server.retrieval.request import Search

K = 10
DEPTH = 100
# Named before any was scored (docs/prf.md): Anserini's RM3 defaults and one lighter RM3; three
# Rocchio settings; every hybrid fuses one RM3 with one Rocchio as weighted_rrf_v2 fuses its two.
RM3_VARIANTS = {
    "rm3_anserini(10,10,0.5)": {"fb_docs": 10, "fb_terms": 10, "original_query_weight": 0.5},
    "rm3_light(3,10,0.7)": {"fb_docs": 3, "fb_terms": 10, "original_query_weight": 0.7},
}
ROCCHIO_VARIANTS = {
    "rocchio(k=3,beta=0.5)": {"fb_docs": 3, "beta": 0.5},
    "rocchio(k=5,beta=0.5)": {"fb_docs": 5, "beta": 0.5},
    "rocchio(k=3,beta=1.0)": {"fb_docs": 3, "beta": 1.0},
}


def _profile(base: str, overrides: dict) -> dict:
    profile = copy.deepcopy(PRF_PROFILES[base])
    profile.update(overrides)
    return profile


def rankings(corpus) -> dict[str, list[list[str]]]:
    """Every variant's top 10 per development query (in query order)."""
    out: dict[str, list[list[str]]] = {}
    rrf = PROFILES["weighted_rrf_v2"]
    for query in corpus.queries:
        body = {"query_vector": query.vector.tolist(), "space_id": corpus.space_id}
        vq = Search("semantic", "cosine_exact_v1", PROFILES["cosine_exact_v1"], "", DEPTH, body).vector(corpus.index)
        lex = bm25(corpus.index, query.question, DEPTH)
        sem = cosine(corpus.index, vq.query, DEPTH, -1.0)
        runs = {"bm25_v1": lex.ids, "cosine_exact_v1": sem.ids,
                "weighted_rrf_v2": [e.id for e in fuse(rrf["fusion"], rrf, {"lexical": (lex.ids, lex.scores),
                                                             "semantic": (sem.ids, sem.scores)})]}
        rm3 = {name: rm3_ranking(corpus.index, query.question, _profile("bm25_rm3_v1", o), DEPTH)[0]
               for name, o in RM3_VARIANTS.items()}
        roc = {name: rocchio_ranking(corpus.index, vq, _profile("cosine_rocchio_v1", o), DEPTH)[0]
               for name, o in ROCCHIO_VARIANTS.items()}
        runs.update({name: r.ids for name, r in rm3.items()})
        runs.update({name: r.ids for name, r in roc.items()})
        for a, ra in rm3.items():
            for b, rb in roc.items():
                fused = fuse(rrf["fusion"], rrf, {"lexical": (ra.ids, ra.scores), "semantic": (rb.ids, rb.scores)})
                runs[f"hybrid[{a}+{b}]"] = [e.id for e in fused]
        for name, ids in runs.items():
            out.setdefault(name, []).append(ids[:K])
    return out


def scores(corpus, ranked: dict[str, list[list[str]]]) -> dict[str, dict]:
    return {name: {"ndcg@10": statistics.fmean(metrics.ndcg(r, q.judgments, K) for r, q in zip(rows, corpus.queries)),
                   "judged_recall@10": statistics.fmean(metrics.recall(r, q.judgments, K)
                                                        for r, q in zip(rows, corpus.queries))}
            for name, rows in ranked.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench prf-dev", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, metavar="NAME=DIR")
    parser.add_argument("--json", default=None, help="also write the table as JSON (never overwritten)")
    args = parser.parse_args(argv)

    def body(_argv=None) -> int:
        runs = parse_runs(args.runs)
        if args.json:
            refuse_existing(args.json)
        per: dict[str, dict] = {}
        counts = {}
        for name, path in runs.items():
            corpus = load_dev_corpus(name, path)
            counts[name] = len(corpus.queries)
            print(f"{name}: {len(corpus.queries)} development queries", file=sys.stderr, flush=True)
            per[name] = scores(corpus, rankings(corpus))
        names = list(next(iter(per.values())))
        pooled = {n: {m: statistics.fmean(per[d][n][m] for d in per) for m in ("ndcg@10", "judged_recall@10")}
                  for n in names}
        variants = len(RM3_VARIANTS) + len(ROCCHIO_VARIANTS) + len(RM3_VARIANTS) * len(ROCCHIO_VARIANTS)
        print(f"variants scored: {variants} (besides the three baselines); queries {counts}")
        print("| candidate | " + " | ".join(f"{d} nDCG@10" for d in per) + " | pooled nDCG@10 | pooled R@10 |")
        print("|---|" + "---|" * (len(per) + 2))
        for n in names:
            print(f"| {n} | " + " | ".join(f"{per[d][n]['ndcg@10']:.4f}" for d in per)
                  + f" | {pooled[n]['ndcg@10']:.4f} | {pooled[n]['judged_recall@10']:.4f} |")
        if args.json:
            save(args.json, {"queries": counts, "variants": variants, "per_dataset": per, "pooled": pooled})
        return 0
    return run(body)


if __name__ == "__main__":
    raise SystemExit(main())
