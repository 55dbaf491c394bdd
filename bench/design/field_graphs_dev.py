"""Field-graphs design table (docs/field-graphs.md): the three frozen ppr profiles beside
weighted_rrf_v2, graph_hybrid_balanced and prf_hybrid_v1, in process, over the development queries
only; per dataset and pooled (equal weights): nDCG@10, R@2, R@5.

    lab bench field-graphs-dev --runs musique=runs/fg1/musique hotpotqa=runs/fg1/hotpotqa \
        2wikimultihopqa=runs/fg1/2wikimultihopqa [--json PATH]

Each run directory is a field-graphs campaign directory (its protocol.json, fixture.json with the
query entities, and relations.json with the NER graph). Every request is built from the run's own
frozen protocol (protocols/routes.py) and served by the lab's own search (server/routes.py); no
profile is changed. DevCorpus holds development queries only: a test row's judgments are never read.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from functools import partial
from pathlib import Path

from bench.design.graph_v3_data import load_dev_corpus
from bench.design.graph_v3_dev import parse_runs
from evaluator.connection.client import vector_base64
from evaluator.numbers import metrics
from ground.command import run
from ground.files import refuse_existing, save
from protocols.routes import route_of
from server.routes import search

# The three frozen ppr methods (published defaults, 0 tuned) and the three they were compared with.
METHODS = ("graph_ppr", "graph_ppr_passages", "graph_ppr_names",
           "weighted_rrf_v2", "graph_hybrid_balanced", "prf_hybrid_v1")
CUTOFFS = {"ndcg@10": 10, "R@2": 2, "R@5": 5}


def rankings(run_dir: Path, corpus) -> dict[str, list[list[str]]]:
    """Every method's ranked record ids per development query (in the corpus' query order)."""
    protocol = json.loads((run_dir / "protocol.json").read_text(encoding="utf-8"))
    fixture = json.loads((run_dir / "fixture.json").read_text(encoding="utf-8"))
    # The wire form, as the evaluator sends it (evaluator/inputs.py): distinct entity texts, sorted.
    entities = {q["id"]: sorted({text for text, _ in q["entities"]})
                for q in fixture.get("query_entities", {}).get("queries", [])}
    out: dict[str, list[list[str]]] = {m: [] for m in METHODS}
    for query in corpus.queries:
        def vector(q=query):
            return {"query_vector": vector_base64(q.vector), "space_id": corpus.space_id}
        for name in METHODS:
            spec = protocol["methods"][name]
            body = route_of(spec).body(spec, query.question, vector, partial(entities.__getitem__, query.id))
            page = search(corpus.index, spec["route"], body)
            out[name].append([hit["id"] for hit in page["hits"]])
    return out


def scores(corpus, ranked: dict[str, list[list[str]]]) -> dict[str, dict[str, float]]:
    table = {}
    for name, rows in ranked.items():
        pairs = list(zip(rows, corpus.queries))
        table[name] = {"ndcg@10": statistics.fmean(metrics.ndcg(r, q.judgments, 10) for r, q in pairs)}
        for label in ("R@2", "R@5"):
            table[name][label] = statistics.fmean(metrics.recall(r, q.judgments, CUTOFFS[label]) for r, q in pairs)
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench field-graphs-dev", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, metavar="NAME=DIR")
    parser.add_argument("--json", default=None, help="also write the table as JSON (never overwritten)")
    args = parser.parse_args(argv)

    def body(_argv=None) -> int:
        runs = parse_runs(args.runs)
        if args.json:
            refuse_existing(args.json)
        per, counts = {}, {}
        for name, path in runs.items():
            corpus = load_dev_corpus(name, path)
            counts[name] = len(corpus.queries)
            print(f"{name}: {len(corpus.queries)} development queries "
                  f"({len(corpus.excluded_ids)} test rows never read)", file=sys.stderr, flush=True)
            per[name] = scores(corpus, rankings(Path(path), corpus))
        pooled = {n: {m: statistics.fmean(per[d][n][m] for d in per) for m in CUTOFFS} for n in METHODS}
        print(f"variants named: 3 (the frozen ppr profiles, published defaults); queries {counts}")
        print("| method | " + " | ".join(f"{d} nDCG@10 / R@2 / R@5" for d in per) + " | pooled nDCG@10 | pooled R@2 | pooled R@5 |")
        print("|---|" + "---|" * (len(per) + 3))
        for n in METHODS:
            cells = [" / ".join(f"{per[d][n][m]:.3f}" for m in CUTOFFS) for d in per]
            print(f"| {n} | " + " | ".join(cells) + " | " + " | ".join(f"{pooled[n][m]:.4f}" for m in CUTOFFS) + " |")
        if args.json:
            save(args.json, {"queries": counts, "variants": 3, "per_dataset": per, "pooled": pooled})
        return 0
    return run(body)


if __name__ == "__main__":
    raise SystemExit(main())
