"""The reach/ceiling section as a table of the public report (derived in evaluator/reporting/reach.py)."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.rendering.tables import Table, num


def reach_table(public: Mapping) -> Table | None:
    """The section as a table of the public report (every number read at its path); None without pools."""
    reach = public.get("reach")
    if not reach:
        return None
    base = reach["base"]
    note = (f"Base pool: {base['method']} ({base['profile']}) top {base['depth']}, {base['queries']} queries. "
            "Reached: the method's top-10 gold outside the pool; re-ranked: inside it; seeds: its top 10 that "
            "are its own seeds (anchors, feedback documents). Oracles over the pool in the first two rows.")
    t = Table("reach", "Reach and ceiling (diagnostic)",
              ["method", "gold@10", "reached share", "re-ranked share", "seed share of top 10"], note=note)
    t.add("oracle: perfect re-rank of the pool (nDCG@10)", num(public, "reach", "oracle", "rerank_ndcg@10"), "", "", "")
    t.add("oracle: gold outside the pool (share of all gold)", num(public, "reach", "oracle", "gold", fmt="d"),
          num(public, "reach", "oracle", "gold_outside_share"), "", "")
    for name in sorted(reach["methods"]):
        entry = reach["methods"][name]
        t.add(name, num(public, "reach", "methods", name, "gold@10", fmt="d"),
              num(public, "reach", "methods", name, "reached_share"),
              num(public, "reach", "methods", name, "reranked_share"),
              num(public, "reach", "methods", name, "seed_share") if entry["seeded"] else "-")
    return t
