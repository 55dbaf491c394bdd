"""`lab audit`'s check of the reach section's base pools (evaluator/reporting/reach.py): each stored
pool recomputed from the frozen inputs with the evaluator's own fusion (the pools themselves are
fetched by evaluate, evaluator/campaign/base_pool.py)."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.reporting.reach import DEPTH, base_method
from evaluator.verification import recompute as rc
from evaluator.verification.verify import Checker


def base_pool_failures(report: Mapping, checker: Checker) -> list[str]:
    """`lab audit`: every stored base pool equal to the evaluator's own recomputation of the base's
    top DEPTH from the frozen inputs (a difference only inside a channel near-tie is allowed, as
    the page checks allow it)."""
    pools = report.get("base_pools")
    method = base_method(report["protocol"])
    if pools is None:
        return [] if method is None else ["base_pools: absent, but the protocol has a base method"]
    if method is None:
        return ["base_pools: present, but the protocol has no base method"]
    if sorted(pools) != sorted(report["plan"]["queries"]):
        return ["base_pools: not one pool per planned query"]
    profile = report["protocol"]["methods"][method]["profile"]
    tolerance = {"lexical": rc.BM25_TOLERANCE, "semantic": rc.COSINE_TOLERANCE}
    out = []
    for query_id in sorted(pools):
        _, order, lists = checker.hybrid(checker.queries[query_id], profile)
        want = order[:DEPTH]
        have = [checker.record_of.get(doc) for doc in pools[query_id]]
        if (have != want and not checker._explained_by_near_ties(have, want, lists, tolerance)
                and not checker._reached_by_near_tie_swaps(have, lists, tolerance, checker.profiles[profile], DEPTH)):
            first = rc.first_difference(have, want)
            out.append(f"base_pools[{query_id}]: position {first + 1} holds "
                       f"{pools[query_id][first] if first < len(have) else None}, recomputed "
                       f"{checker.doc_of.get(want[first]) if first < len(want) else None}")
    return out
