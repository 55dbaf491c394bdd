"""The base pools of the reach/ceiling section (evaluator/derived/reach.py): weighted_rrf_v2's top
100 for every query, fetched once per query after the timed jobs (so no measured job waits for it)
and checked against the evaluator's independent recomputation like every page.

A protocol's methods run at limit 10; the section needs the base's top 100, so the base method is
asked once more per query with limit 100 (the hybrid route's largest). The page must pass the
hybrid check at that limit (evaluator/verification/fused_lists.py `check_fused`) and its first hits
must be the verified row of the base method; the pool is stored as document ids in the report
(`base_pools`), which the seal covers and from which export and audit derive the section.

The requests go out on the campaign's clients while the pages already received are checked (the
lab and the checks each take a core), and the checker keeps the base profile's fused lists of
every query from the timed jobs (`Checker(keep=...)`), so a pool's check rereads them instead of
scanning every document's cosine again. Measured on the full-dev twin (2,417 queries, 37,844
passages, the same lab and inputs, one run each): 66 s for the pools before, 24 s after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from evaluator.derived.reach import DEPTH, base_method, base_spec
from evaluator.verification.fused_lists import check_fused
from evaluator.verification.verify import Checker, Failure


class BasePoolError(Exception):
    def __init__(self, message: str, where: dict):
        super().__init__(message)
        self.where = where


def check_base_pools(pages: Iterable[tuple[str, dict]], checker: Checker, protocol: Mapping,
                     queries: Mapping[str, Mapping], doc_of: Mapping[str, str],
                     rows: Mapping[tuple[str, str], Mapping], log: Callable[[str], None]) -> dict | None:
    """{query id: the base's top DEPTH document ids}; None when the protocol has no base method.
    `pages`: (query id, the lab's page for `base_spec(protocol)`) for every planned query."""
    spec, method = base_spec(protocol), base_method(protocol)
    if spec is None or method is None:  # one names the other: a pool has both
        return None
    pools: dict[str, list[str]] = {}
    for query_id, page in pages:
        hits = page.get("hits") or []
        fused, order, lists = checker.fused(queries[query_id], spec["profile"])
        profile = checker.profiles[spec["profile"]]
        failures = [Failure(query_id, method, *found)
                    for found in check_fused(hits, spec["limit"], profile, fused, order, lists)]
        if failures:
            raise BasePoolError(f"base pool check failed: {failures[0]}", failures[0].as_dict())
        records = [hit["id"] for hit in hits]
        row = rows.get((query_id, method))
        if row is not None and records[: len(row["records"])] != row["records"]:
            raise BasePoolError(f"base pool of {query_id}: its top {len(row['records'])} is not the verified "
                                f"{method} row", {"query": query_id, "method": method, "field": "base_pool"})
        pools[query_id] = [doc_of[rid] for rid in records]
    log(f"evaluate: base pools fetched and checked ({len(pools)} queries, {method} top {DEPTH})")
    return pools
