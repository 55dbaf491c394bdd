"""Independent checks of an `ann` page (cosine_hnsw_v1): what can be verified without the engine.

The evaluator cannot rebuild the server's HNSW graph, so it checks everything else: every hit is
a prepared record at its prepared revision with its frozen payload and binding receipt (the
shared hit checks), its score is the cosine recomputed here in float64 from the fixture vectors,
the channel repeats rank and score, the order is score desc then record id, the page is as long
as min(limit, bound records), and the page admits it is approximate (coverage.candidates false).
How many of the exact top 10 it found is reported, not checked (evaluator/derived/ann_agreement.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.verification import recompute as rc
from evaluator.verification.failure import Findings
from evaluator.verification.hit_checks import check_order
from evaluator.verification.page_checker import PageChecker


def check_ann(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    hits = page.get("hits") or []
    cosines = checker.cosines(query)
    expected = min(spec["limit"], len(cosines))
    if len(hits) != expected:
        yield None, "hits", f"{len(hits)} hits, {expected} expected (limit {spec['limit']}, {len(cosines)} bindings)"
    if (page.get("coverage") or {}).get("candidates") is not False:
        yield None, "coverage.candidates", "an approximate page must not claim every binding was scored"
    seen = set()
    for i, hit in enumerate(hits, start=1):
        rid = hit["id"]
        if rid in seen:
            yield i, "id", f"{rid} appears twice"
        seen.add(rid)
        score = cosines.get(rid)
        if score is None or not rc.near_tie(hit.get("score", float("nan")), score, rc.COSINE_TOLERANCE):
            yield i, "score", f"{hit.get('score')} but recomputed cosine {score!r}"
        entry = (hit.get("channels") or {}).get("ann") or {}
        if entry.get("rank") != i or entry.get("raw_score") != hit.get("score"):
            yield i, "channels.ann", f"rank {entry.get('rank')} raw {entry.get('raw_score')}"
    yield from check_order(hits, exact=False)
