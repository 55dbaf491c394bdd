"""The reach/ceiling section as tables of the public report (derived in evaluator/derived/reach.py)."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.views.tables import Table, num


def reach_tables(public: Mapping) -> list[Table]:
    """The section as two tables of the public report (every number read at its path): each
    method's reach, then the base pool's ceilings, each value under a header that names it; none
    without pools."""
    reach = public.get("reach")
    if not reach:
        return []
    base = reach["base"]
    note = (f"Base pool: {base['method']} ({base['profile']}) top {base['depth']}, {base['queries']} queries. "
            "gold@10: the gold passages in the method's top 10; reached: the share of those outside the pool; "
            "re-ranked: inside it; seeds: the share of its top 10 that are its own seeds (anchors, feedback "
            "documents).")
    t = Table("reach", "Reach (diagnostic)",
              ["method", "gold@10", "reached share", "re-ranked share", "seed share of top 10"], note=note)
    for name in sorted(reach["methods"]):
        entry = reach["methods"][name]
        t.add(name, num(public, "reach", "methods", name, "gold@10", fmt="d"),
              num(public, "reach", "methods", name, "reached_share"),
              num(public, "reach", "methods", name, "reranked_share"),
              num(public, "reach", "methods", name, "seed_share") if entry["seeded"] else "-")
    ceiling = Table("reach-ceiling", "Ceilings of the base pool (diagnostic)", ["ceiling", "value"],
                    note=f"What any re-ranking of the {base['method']} top {base['depth']} could reach, and the "
                         "gold it cannot.")
    ceiling.add("nDCG@10 of a perfect re-rank of the pool", num(public, "reach", "oracle", "rerank_ndcg@10"))
    ceiling.add("gold passages, all queries", num(public, "reach", "oracle", "gold", fmt="d"))
    ceiling.add("gold passages outside the pool", num(public, "reach", "oracle", "gold_outside", fmt="d"))
    ceiling.add("share of the gold outside the pool", num(public, "reach", "oracle", "gold_outside_share"))
    return [t, ceiling]
