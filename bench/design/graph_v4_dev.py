"""Graph-v4 development harness: candidates over the title graph plus the entity relations of
`document_entity_graph_v1`, in process, over the development queries of the design imports only;
per dataset and pooled (equal weights): nDCG@10, judged R@10, all supports@10, no-support rate,
p50; where the base's missed supports sit (base rank band, one hop from the top anchors over the
title graph, over the entity relations, either, two hops over both) and what each candidate
proposed and placed in its top 10; the entity graph's relation counts and degrees.

    lab bench graph-v4-dev --runs musique=runs/design/musique hotpotqa=runs/design/hotpotqa \
        2wikimultihopqa=runs/design/2wikimultihopqa [--candidates NAME ...] [--json PATH]

The run directories are the v3 design imports (docs/graph-v3.md: protocols/frozen/design/*-design-v3.json,
embedded); the entity relations are built here from their documents (bench/design/graph_v4_data.py).
Only development queries are loaded: the harness never reads a test split's judgments.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench.design.graph_v3_dev import ANCHORS, BASE, RANK_BUCKETS, K, parse_runs, pooled, summary, table
from bench.design.graph_v4_candidates import CANDIDATES, Candidate, Result, candidate
from bench.design.graph_v4_data import V4Corpus, load_v4_corpus
from builders.entity_graph import KIND
from evaluator.numbers import metrics
from evaluator.numbers.pooling import DatasetDeltas, pooled_contrast
from ground.command import run
from ground.files import refuse_existing, save


def measure(corpus: V4Corpus, method: Candidate) -> tuple[list[dict], list[Result]]:
    rows, results = [], []
    for query in corpus.dev.queries:
        started = time.perf_counter()
        result = method(corpus, query)
        elapsed = (time.perf_counter() - started) * 1000.0
        ranking = result.ranking
        rows.append({
            "query": query.id,
            "ndcg@10": metrics.ndcg(ranking, query.judgments, K),
            "judged_recall@10": metrics.recall(ranking, query.judgments, K),
            "all_supports@10": metrics.all_supports(ranking, query.judgments, K),
            "no_support@10": metrics.no_support(ranking, query.judgments, K),
            "ms": elapsed,
        })
        results.append(result)
    return rows, results


def miss_shares(corpus: V4Corpus, base: list[Result], results: dict[str, list[Result]]) -> dict:
    """Where the supports the base misses in its top 10 are, and what each candidate did with them."""
    title, entity = corpus.dev.neighbours, corpus.entity
    missed = 0
    buckets = {f"{lo}-{hi}": 0 for lo, hi in RANK_BUCKETS} | {"absent": 0}
    near = {"title": 0, "entity": 0, "either": 0, "two_hops": 0}
    proposed = {name: 0 for name in results}
    recovered = {name: 0 for name in results}
    for i, query in enumerate(corpus.dev.queries):
        ranking = base[i].ranking
        anchors = ranking[:ANCHORS]
        one_hop = {n for a in anchors for n in title.get(a, set()) | entity.get(a, set())}
        two_hops = one_hop | {n for m in one_hop for n in title.get(m, set()) | entity.get(m, set())}
        for doc in metrics.relevant(query.judgments):
            if doc in ranking[:K]:
                continue
            missed += 1
            rank = ranking.index(doc) + 1 if doc in ranking else None
            label = "absent" if rank is None else next(f"{lo}-{hi}" for lo, hi in RANK_BUCKETS if lo <= rank <= hi)
            buckets[label] += 1
            by_title = any(doc in title.get(a, ()) for a in anchors)
            by_entity = any(doc in entity.get(a, ()) for a in anchors)
            near["title"] += by_title
            near["entity"] += by_entity
            near["either"] += by_title or by_entity
            near["two_hops"] += doc in two_hops
            for name, rows in results.items():
                proposed[name] += doc in rows[i].proposed
                recovered[name] += doc in rows[i].ranking[:K]
    share = (lambda n: n / missed if missed else 0.0)
    return {"missed": missed, "rank": {b: share(n) for b, n in buckets.items()},
            "near_top_anchors": {b: share(n) for b, n in near.items()},
            "proposed": {n: share(v) for n, v in proposed.items()},
            "recovered_in_top10": {n: share(v) for n, v in recovered.items()}}


REFERENCES = ("graph_hybrid_balanced", "weighted_rrf_v2")
# the suites' pooling (protocols/registry.py POOLING) with queries as units: a design cohort's
# queries are not clustered, and this interval only ranks candidates; it is no test
DEV_POOLING = {"unit": "query", "weights": "equal", "resamples": 2000, "confidence": 0.95, "permutations": 10000}
DEV_SEED = 20260921


def paired(per_query: dict[str, dict[str, list[dict]]], candidate: str, reference: str) -> dict:
    """candidate - reference on nDCG@10: per dataset, and pooled (equal weights) with a stratified
    paired bootstrap interval over development queries."""
    datasets = []
    for dataset, methods in per_query.items():
        values = {name: {row["query"]: row["ndcg@10"] for row in methods[name]} for name in (candidate, reference)}
        datasets.append(DatasetDeltas(dataset, values[candidate], values[reference], [], "query", 0.0))
    pooled_row = pooled_contrast(datasets, DEV_POOLING, DEV_SEED)
    return {"per_dataset": {d.name: statistics.fmean(d.candidate[q] - d.baseline[q] for q in d.candidate)
                            for d in datasets},
            "pooled": pooled_row["mean_delta"], "interval": pooled_row["interval"], "p": pooled_row["p_value"]}


def paired_table(reference: str, contrasts: dict[str, dict]) -> str:
    datasets = list(next(iter(contrasts.values()))["per_dataset"])
    lines = [f"### paired against {reference} (nDCG@10; pooled: equal weights, query bootstrap)", "",
             "| candidate | " + " | ".join(datasets) + " | pooled | interval | p |",
             "|---|" + "---|" * (len(datasets) + 3)]
    for name, c in contrasts.items():
        lines.append(f"| {name} | " + " | ".join(f"{c['per_dataset'][d]:+.4f}" for d in datasets)
                     + f" | {c['pooled']:+.4f} | [{c['interval'][0]:+.4f}, {c['interval'][1]:+.4f}] | {c['p']:.3f} |")
    return "\n".join(lines)


def graph_figures(corpus: V4Corpus) -> dict:
    """Relations per kind and the entity relations' degree distribution (frozen policy)."""
    degrees = sorted(len(corpus.entity.get(rid, ())) for rid in corpus.dev.texts)
    n = len(degrees)
    return {"documents": n, "counts": corpus.counts,
            "entity_degree": {"mean": statistics.fmean(degrees), "median": statistics.median(degrees),
                              "p90": degrees[int(0.9 * (n - 1))], "max": degrees[-1],
                              "isolated": sum(1 for d in degrees if d == 0) / n}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench graph-v4-dev", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", required=True, help="NAME=DIR of a design import with fixture")
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES),
                        help="names or FAMILY(key=value,...) specs (bench/design/graph_v4_candidates.py)")
    parser.add_argument("--json", help="also write the figures to this JSON file (refused if it exists)")
    args = parser.parse_args(argv)
    if args.json:
        refuse_existing(args.json)
    names = [BASE] + [n for n in args.candidates if n != BASE]
    methods = {name: candidate(name) for name in names}  # a bad spec is refused before any work
    per_dataset: dict[str, dict[str, dict]] = {}
    per_query: dict[str, dict[str, list[dict]]] = {}
    shares: dict[str, dict] = {}
    graphs: dict[str, dict] = {}
    for dataset, run_dir in parse_runs(args.runs).items():
        corpus = load_v4_corpus(dataset, run_dir)
        graphs[dataset] = graph_figures(corpus)
        g = graphs[dataset]
        print(f"{dataset}: {len(corpus.dev.queries)} development queries "
              f"({len(corpus.dev.excluded_ids)} test queries left out), {g['documents']} documents; relations "
              + ", ".join(f"{kind} {n}" for kind, n in g["counts"].items())
              + f"; {KIND} degree mean {g['entity_degree']['mean']:.1f}, median {g['entity_degree']['median']}, "
              f"p90 {g['entity_degree']['p90']}, max {g['entity_degree']['max']}, "
              f"isolated {g['entity_degree']['isolated']:.2f}", flush=True)
        results, stats = {}, {}
        for name in names:
            rows, results[name] = measure(corpus, methods[name])
            per_query.setdefault(dataset, {})[name] = rows
            stats[name] = summary([{k: v for k, v in row.items() if k != "query"} for row in rows])
        per_dataset[dataset] = stats
        shares[dataset] = miss_shares(corpus, results[BASE], {n: r for n, r in results.items() if n != BASE})
        print(table(dataset, stats, stats[BASE]), flush=True)
        s = shares[dataset]
        print(f"\nbase misses {s['missed']} supports; by base rank "
              + ", ".join(f"{b} {v:.2f}" for b, v in s["rank"].items())
              + f"; one hop from the top {ANCHORS} anchors: "
              + ", ".join(f"{b} {v:.2f}" for b, v in s["near_top_anchors"].items()))
        for name in s["proposed"]:
            print(f"  {name}: proposed {s['proposed'][name]:.2f}, in its top 10 {s['recovered_in_top10'][name]:.2f}")
        print(flush=True)
    pooled_stats = {name: pooled({d: per_dataset[d][name] for d in per_dataset}) for name in names}
    print(table("pooled (datasets weighted equally)", pooled_stats, pooled_stats[BASE]))
    contrasts: dict[str, dict[str, dict]] = {}
    for reference in REFERENCES:
        if reference in names:
            contrasts[reference] = {name: paired(per_query, name, reference) for name in names if name != reference}
            print()
            print(paired_table(reference, contrasts[reference]))
    if args.json:
        save(args.json, {"per_dataset": per_dataset, "pooled": pooled_stats, "misses": shares, "graphs": graphs,
                         "paired": contrasts, "per_query": per_query})
        print(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
