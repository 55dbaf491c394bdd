"""`lab audit`'s check of the reach section's base pools (evaluator/derived/reach.py): each stored
pool recomputed from the frozen inputs with the evaluator's own fusion (the pools themselves are
fetched by evaluate, evaluator/evaluate/base_pool.py). The recomputation is the checker's
(`Checker.pool_difference`), run where the page checks run: on their workers, beside the pages of
the same query, whose fused lists they have just computed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from evaluator.derived.reach import DEPTH, base_method

# (query id, profile, pool, depth) per pool -> the first differing position of each (None: equal)
PoolCheck = Callable[[Sequence[tuple[str, str, list, int]]], list]


def base_pool_failures(report: Mapping, check_pools: PoolCheck, doc_of: Mapping[str, str]) -> list[str]:
    """`lab audit`: every stored base pool equal to the evaluator's own recomputation of the base's
    top DEPTH from the frozen inputs (a difference only inside a channel near-tie is allowed, as
    the page checks allow it). `doc_of`: record id -> document id, to name what was recomputed."""
    pools = report.get("base_pools")
    method = base_method(report["protocol"])
    if pools is None:
        return [] if method is None else ["base_pools: absent, but the protocol has a base method"]
    if method is None:
        return ["base_pools: present, but the protocol has no base method"]
    if sorted(pools) != sorted(report["plan"]["queries"]):
        return ["base_pools: not one pool per planned query"]
    profile = report["protocol"]["methods"][method]["profile"]
    order = sorted(pools)
    found = check_pools([(query_id, profile, pools[query_id], DEPTH) for query_id in order])
    out = []
    for query_id, difference in zip(order, found):
        if difference is not None:
            first, recomputed = difference
            pool = pools[query_id]
            out.append(f"base_pools[{query_id}]: position {first + 1} holds "
                       f"{pool[first] if first < len(pool) else None}, recomputed {doc_of.get(recomputed)}")
    return out
