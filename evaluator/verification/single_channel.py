"""Pages ranked by one channel's scores: the lexical and semantic routes, and PRF's single-channel
profiles, checked against the scores recomputed here (recompute.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evaluator.verification import recompute as rc
from evaluator.verification.failure import Findings
from evaluator.verification.hit_checks import check_order


def check_single(hits: Sequence[Mapping], channel: str, scores: Mapping[str, float], tol: float, spec: Mapping
                 ) -> Findings:
    """A page ranked by one channel's scores (BM25, cosine, or PRF's second pass): as many hits as
    score above the method's min_score up to its limit, each hit's score and channel within the
    channel's tolerance of the recomputation, the ids in its order up to near ties."""
    min_score = spec.get("min_score")
    mine = rc.ordered(scores, depth=spec["limit"], min_score=min_score)
    expected = min(rc.count_at_least(scores, min_score), spec["limit"])
    if len(hits) != expected:
        yield None, "hits", f"{len(hits)} hits, recomputation gives {expected}"
    for i, hit in enumerate(hits, start=1):
        rid = hit["id"]
        if rid not in scores:
            yield i, "id", f"{rid} does not match the query at all in the recomputation"
            continue
        score = scores[rid]
        if not rc.near_tie(hit.get("score", float("nan")), score, tol):
            yield i, "score", f"{hit.get('score')} but recomputed {score!r}"
        entry = (hit.get("channels") or {}).get(channel) or {}
        if entry.get("rank") != i or not rc.near_tie(entry.get("raw_score", float("nan")), score, tol):
            yield i, f"channels.{channel}", f"rank {entry.get('rank')} raw {entry.get('raw_score')}"
        if i <= len(mine) and not rc.near_tie(scores[mine[i - 1][0]], score, tol):
            yield (i, "id", f"{rid} (recomputed {score!r}) where the recomputation ranks {mine[i - 1][0]} "
                            f"({mine[i - 1][1]!r})")
    yield from check_order(hits, exact=False)
