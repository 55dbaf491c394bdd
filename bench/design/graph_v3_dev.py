"""Graph-v3 development harness: candidate methods in-process over the development queries of
the design imports of all three samples; per dataset and pooled (equal weights), nDCG@10, judged
R@10, all supports@10, no-support rate, where the base's missed supports sit, and latency.

    lab bench graph-v3-dev --runs musique=runs/design/musique hotpotqa=runs/design/hotpotqa \
        2wikimultihopqa=runs/design/2wikimultihopqa [--candidates NAME ...] [--json PATH]

Each run directory holds the fixture.json and relations.json of a design import
(protocols/frozen/design/*-design-v3.json, docs/graph-v3.md). Only development queries are loaded
(bench/design/graph_v3_data.py): the harness never reads a test split's judgments.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from bench.design.graph_v3_candidates import CANDIDATES, Result, candidate
from bench.design.graph_v3_data import DevCorpus, load_dev_corpus
from evaluator.numbers import metrics
from ground.command import run
from ground.errors import RefusedInput
from ground.files import refuse_existing, save

K = 10
ANCHORS = 4  # the typed-path family's anchors: "neighbours of the top anchors"
BASE = "weighted_rrf_v2"
RANK_BUCKETS = ((11, 20), (21, 50), (51, 100))


def measure(corpus: DevCorpus, name: str) -> tuple[list[dict], list[Result]]:
    method = candidate(name)
    rows, results = [], []
    for query in corpus.queries:
        started = time.perf_counter()
        result = method(corpus, query)
        elapsed = (time.perf_counter() - started) * 1000.0
        ranking = result.ranking
        rows.append({
            "ndcg@10": metrics.ndcg(ranking, query.judgments, K),
            "judged_recall@10": metrics.recall(ranking, query.judgments, K),
            "all_supports@10": metrics.all_supports(ranking, query.judgments, K),
            "no_support@10": metrics.no_support(ranking, query.judgments, K),
            "ms": elapsed,
        })
        results.append(result)
    return rows, results


def miss_shares(corpus: DevCorpus, base: list[Result], results: dict[str, list[Result]]) -> dict:
    """Where the supports the base misses in its top 10 are: its ranks, graph neighbours of its
    top anchors, and each candidate's proposals."""
    missed = 0
    buckets = {f"{lo}-{hi}": 0 for lo, hi in RANK_BUCKETS} | {"absent": 0}
    near = 0
    proposed = {name: 0 for name in results}
    recovered = {name: 0 for name in results}
    for i, query in enumerate(corpus.queries):
        ranking = base[i].ranking
        anchors = ranking[:ANCHORS]
        for doc in metrics.relevant(query.judgments):
            if doc in ranking[:K]:
                continue
            missed += 1
            rank = ranking.index(doc) + 1 if doc in ranking else None
            label = "absent" if rank is None else next(f"{lo}-{hi}" for lo, hi in RANK_BUCKETS if lo <= rank <= hi)
            buckets[label] += 1
            near += any(doc in corpus.neighbours.get(a, ()) for a in anchors)
            for name, rows in results.items():
                proposed[name] += doc in rows[i].proposed
                recovered[name] += doc in rows[i].ranking[:K]
    share = (lambda n: n / missed if missed else 0.0)
    return {"missed": missed, "rank": {b: share(n) for b, n in buckets.items()},
            "neighbour_of_top_anchors": share(near),
            "proposed": {n: share(v) for n, v in proposed.items()},
            "recovered_in_top10": {n: share(v) for n, v in recovered.items()}}


def summary(rows: list[dict]) -> dict:
    keys = [key for key in rows[0] if key != "ms"]
    out = {key: statistics.fmean(row[key] for row in rows) for key in keys}
    out["ms_p50"] = statistics.median(row["ms"] for row in rows)
    return out


def pooled(per_dataset: dict[str, dict]) -> dict:
    keys = next(iter(per_dataset.values())).keys()
    return {key: statistics.fmean(stats[key] for stats in per_dataset.values()) for key in keys}


def table(title: str, stats: dict[str, dict], base: dict) -> str:
    lines = [f"### {title}", "",
             "| candidate | nDCG@10 | Δ vs rrf_v2 | judged R@10 | all supports@10 | no support@10 | p50 ms |",
             "|---|---|---|---|---|---|---|"]
    for name, s in stats.items():
        lines.append(f"| {name} | {s['ndcg@10']:.4f} | {s['ndcg@10'] - base['ndcg@10']:+.4f} | "
                     f"{s['judged_recall@10']:.4f} | {s['all_supports@10']:.4f} | {s['no_support@10']:.4f} | "
                     f"{s['ms_p50']:.2f} |")
    return "\n".join(lines)


def parse_runs(values: list[str]) -> dict[str, Path]:
    runs = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise RefusedInput(f"--runs takes NAME=DIR, got {value!r}")
        if name in runs:
            raise RefusedInput(f"--runs names {name!r} twice")
        runs[name] = Path(path)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench graph-v3-dev", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", required=True, help="NAME=DIR of a design import with fixture")
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES),
                        help="names or FAMILY(key=value,...) specs (bench/design/graph_v3_candidates.py)")
    parser.add_argument("--json", help="also write the figures to this JSON file (refused if it exists)")
    args = parser.parse_args(argv)
    if args.json:
        refuse_existing(args.json)
    names = [BASE] + [n for n in args.candidates if n != BASE]
    per_dataset: dict[str, dict[str, dict]] = {}
    shares: dict[str, dict] = {}
    for dataset, run_dir in parse_runs(args.runs).items():
        corpus = load_dev_corpus(dataset, run_dir)
        print(f"{dataset}: {len(corpus.queries)} development queries "
              f"({len(corpus.excluded_ids)} test queries left out), {len(corpus.texts)} documents", flush=True)
        results, stats = {}, {}
        for name in names:
            rows, results[name] = measure(corpus, name)
            stats[name] = summary(rows)
        per_dataset[dataset] = stats
        shares[dataset] = miss_shares(corpus, results[BASE], {n: r for n, r in results.items() if n != BASE})
        print(table(dataset, stats, stats[BASE]), flush=True)
        s = shares[dataset]
        print(f"\nbase misses {s['missed']} supports; by base rank "
              + ", ".join(f"{b} {v:.2f}" for b, v in s["rank"].items())
              + f"; neighbours of the top {ANCHORS} anchors {s['neighbour_of_top_anchors']:.2f}")
        for name in s["proposed"]:
            print(f"  {name}: proposed {s['proposed'][name]:.2f}, in its top 10 {s['recovered_in_top10'][name]:.2f}")
        print(flush=True)
    pooled_stats = {name: pooled({d: per_dataset[d][name] for d in per_dataset}) for name in names}
    print(table("pooled (datasets weighted equally)", pooled_stats, pooled_stats[BASE]))
    if args.json:
        save(args.json, {"per_dataset": per_dataset, "pooled": pooled_stats, "misses": shares})
        print(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
