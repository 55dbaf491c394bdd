"""Reach and ceiling: where each method's top-10 gold comes from, and what the base pool allows
(a diagnostic section of every report, docs/prf.md).

The base pool of a query is weighted_rrf_v2's top 100 (`BASE`, `DEPTH`), fetched once per query
after the timed jobs (evaluator/evaluate/base_pool.py) and stored in the report as document ids.
From it and the rows' verified rankings, per method (sums over the queries, then shares):

- gold@10: the relevant documents in its top 10; `reached`: those outside the base pool (only a
  method that retrieves beyond the base could place them), `reranked`: those inside it;
- `seed_share`: for a seeded method (a graph or walk page's anchors, a PRF page's feedback
  documents), the share of its top-10 hits that are its own seeds;

and two oracles over the base pool: `rerank_ndcg@10`, the mean nDCG@10 of the pool re-ranked
perfectly (its documents by grade desc, then id: what any re-ranker of that pool could reach), and
`gold_outside_share`, the share of all relevant documents outside the pool (what only reach can
fix). Everything is derived from the report's rows and pools, so export and audit recompute it;
the tables that show it are in evaluator/views/reach_table.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evaluator.numbers import metrics

BASE = "weighted_rrf_v2"  # the profile whose top DEPTH is the base pool
DEPTH = 100
K = 10


def base_method(protocol: Mapping) -> str | None:
    """The protocol's method ranking with the base profile on the hybrid route (None: no pool)."""
    names = sorted(name for name, spec in protocol["methods"].items()
                   if spec["route"] == "hybrid" and spec["profile"] == BASE)
    return names[0] if names else None


def base_spec(protocol: Mapping) -> dict | None:
    """The base method's request at the pools' depth (None when the protocol has no base method)."""
    method = base_method(protocol)
    return None if method is None else {**protocol["methods"][method], "limit": DEPTH}


def kept_profiles(protocol: Mapping) -> tuple[str, ...]:
    """The profile whose fused lists a checker keeps for the pools (`Checker(keep=...)`): the pools
    are checked after the pages and reread them."""
    return () if base_method(protocol) is None else (BASE,)


def seeds_of(page: Mapping) -> set[str]:
    """Record ids a page names as its seeds: graph and walk anchors, PRF feedback documents."""
    seeds = {a["id"] for a in page.get("anchors") or []}
    for block in (page.get("feedback") or {}).values():
        seeds.update(d["id"] for d in block.get("documents") or [])
    return seeds


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def derive_reach(rows: Sequence[Mapping], queries: Mapping[str, Mapping], pools: Mapping[str, Sequence[str]] | None,
                 protocol: Mapping) -> dict | None:
    """The report's `reach` block; None when the report holds no base pools."""
    if pools is None:
        return None
    methods: dict[str, dict] = {}
    for row in sorted(rows, key=lambda r: (r["method"], r["query_id"])):
        pool = set(pools[row["query_id"]])
        relevant = metrics.relevant(queries[row["query_id"]]["judgments"])
        top = row["ranking"][:K]
        gold = [doc for doc in top if doc in relevant]
        entry = methods.setdefault(row["method"], {"queries": 0, "gold@10": 0, "reached": 0, "reranked": 0,
                                                   "seeded_hits": 0, "hits": 0, "seeded": False})
        entry["queries"] += 1
        entry["gold@10"] += len(gold)
        entry["reached"] += sum(1 for doc in gold if doc not in pool)
        entry["reranked"] += sum(1 for doc in gold if doc in pool)
        seeds = seeds_of(row["page"])
        entry["seeded"] = entry["seeded"] or bool(seeds)
        entry["hits"] += len(row["records"][:K])
        entry["seeded_hits"] += sum(1 for rid in row["records"][:K] if rid in seeds)
    for entry in methods.values():
        entry["reached_share"] = _share(entry["reached"], entry["gold@10"])
        entry["reranked_share"] = _share(entry["reranked"], entry["gold@10"])
        entry["seed_share"] = _share(entry["seeded_hits"], entry["hits"]) if entry["seeded"] else None
    ideal: list[float] = []
    gold_total, outside = 0, 0
    for query_id in sorted(pools):
        judgments = queries[query_id]["judgments"]
        members = list(pools[query_id])
        reranked = sorted(members, key=lambda doc: (-judgments.get(doc, 0), doc))
        ideal.append(metrics.ndcg(reranked, judgments, K))
        relevant = metrics.relevant(judgments)
        gold_total += len(relevant)
        outside += len(relevant - set(members))
    return {
        "base": {"method": base_method(protocol), "profile": BASE, "depth": DEPTH, "queries": len(pools)},
        "oracle": {"rerank_ndcg@10": sum(ideal) / len(ideal) if ideal else None, "gold": gold_total,
                   "gold_outside": outside, "gold_outside_share": _share(outside, gold_total)},
        "methods": methods,
    }
