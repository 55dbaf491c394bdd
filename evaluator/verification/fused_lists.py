"""The fused base lists: a fused profile's channels recomputed and fused, and the near ties a
page's fusion may fall inside (docs/design.md §7).

The hybrid profiles' lists are the base of the hybrid, graph, walk, PPR, rescue and PRF families, so
one home holds what every such verifier needs:

- `recompute`: a fused profile's channels, BM25 and cosine recomputed by the Checker, each to its
  depth, and their exact fusion (recompute.py's `fuse`);
- `check_fused`: a page of fused hits against those lists: each hit's channel ranks and raw
  scores, its exact score, the order and the ids, a difference allowed only inside a run of
  near-equal channel scores (the server sums in float32 and another order);
- `pool_difference`: a stored pool of ids (no channel ranks) against the recomputed list, reached
  only through near-tie swaps the server's arithmetic could have made;
- `base_list`: a graph family's base (the walk's, PPR's), fused from the lists and cut at its depth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evaluator.verification import recompute as rc
from evaluator.verification.exact import ZERO, Rational, rational
from evaluator.verification.failure import Findings
from evaluator.verification.hit_checks import check_exact, check_order
from evaluator.verification.page_checker import PageChecker

# how far a channel's recomputed score may be from the lab's and still be a tie
CHANNEL_TOLERANCE = {"lexical": rc.BM25_TOLERANCE, "semantic": rc.COSINE_TOLERANCE}
Lists = dict[str, list[tuple[str, float]]]  # channel -> (record id, raw score) best first


def channel_scores(checker: PageChecker, query: Mapping, channel: str) -> rc.Scores:
    """A channel's scores of one query, as the Checker recomputed and keeps them."""
    return checker.bm25_scores(query) if channel == "lexical" else checker.cosines(query)


def recompute(checker: PageChecker, query: Mapping, profile: Mapping, min_score: float) -> tuple[dict, list[str], Lists]:
    """(fused entries, fused order, channel lists) of a fused profile for one query; the semantic
    channel keeps cosines down to the protocol's `min_score`."""
    channels = profile["channels"]
    lists = {name: rc.ordered(channel_scores(checker, query, name), spec["depth"],
                              min_score=min_score if name == "semantic" else None)
             for name, spec in channels.items()}
    fused = rc.fuse(profile["fusion"], {c: [rid for rid, _ in lst] for c, lst in lists.items()},
                    {c: channels[c]["weight"] for c in channels}, profile["k"])
    return fused, rc.fused_order(fused), lists


def pool_difference(have: Sequence[str | None], order: list[str], lists: Lists, profile: Mapping,
                    depth: int) -> tuple[int, str | None] | None:
    """A stored pool of record ids against the profile's fused top `depth`: None when it is that
    list, or one the server's arithmetic could have produced (a difference only inside a channel
    near tie, or reached by swapping near-tied neighbours); else the first position that differs
    and the record recomputed there (None past the recomputed list's end)."""
    want = order[:depth]
    tolerance = CHANNEL_TOLERANCE
    if (list(have) == want or explained_by_near_ties(have, want, lists, tolerance)
            or reached_by_near_tie_swaps(list(have), lists, tolerance, profile, depth)):
        return None
    first = rc.first_difference(have, want)
    return first, want[first] if first < len(want) else None


def check_fused(hits, limit: int, profile: dict, fused: dict, order: list[str],
                lists: dict[str, list]) -> Findings:
    """A fused page against channel lists recomputed here (the hybrid route's, or PRF's expanded
    ones): each hit's channel ranks and raw scores, its exact reciprocal-rank score, the page's
    order and its ids, where a difference is allowed only inside a run of near-equal scores."""
    raw = {c: dict(lst) for c, lst in lists.items()}
    tolerance = CHANNEL_TOLERANCE
    for i, hit in enumerate(hits, start=1):
        values = {}
        for channel, spec_c in profile["channels"].items():
            entry = (hit.get("channels") or {}).get(channel)
            rank = entry.get("rank") if entry else None
            mine = fused.get(hit["id"], {"ranks": {}})["ranks"].get(channel)
            if rank != mine and not _channel_near_tie(lists[channel], hit["id"], rank, tolerance[channel]):
                yield i, f"channels.{channel}.rank", f"{rank}, recomputed {mine}"
            if entry and rank is not None and not rc.near_tie(entry.get("raw_score", float("nan")),
                                                    raw[channel].get(hit["id"], float("nan")), tolerance[channel]):
                yield (i, f"channels.{channel}.raw_score", f"{entry.get('raw_score')}, recomputed "
                                                           f"{raw[channel].get(hit['id'])}")
            values[channel] = ZERO if rank is None else rational(spec_c["weight"]) / (profile["k"] + rank)
        yield from check_exact(hit, i, values)
    yield from check_order(hits, exact=True)
    want = order[:limit]
    have = [h["id"] for h in hits]
    if have != want and not explained_by_near_ties(have, want, lists, tolerance):
        reported = lists_as_reported(hits, lists)
        if reported is not None:
            weights = {c: profile["channels"][c]["weight"] for c in profile["channels"]}
            want = rc.fused_order(rc.fuse(profile["fusion"], reported, weights, profile["k"]))[:limit]
    if have != want and not explained_by_near_ties(have, want, lists, tolerance):
        first = rc.first_difference(have, want)
        yield (first + 1, "id", f"{have[first] if first < len(have) else None}, recomputed "
                                f"{want[first] if first < len(want) else None}")


def _channel_near_tie(lst: list[tuple[str, float]], rid: str, rank: int | None, tol: float) -> bool:
    """A reported channel rank that differs from ours only inside a run of near-equal scores."""
    scores = dict(lst)
    if rank is None:
        return rid not in scores or (len(lst) > 0 and rc.near_tie(scores[rid], lst[-1][1], tol))
    if rank < 1 or rank > len(lst):
        return False
    return rid in scores and rc.near_tie(scores[rid], lst[rank - 1][1], tol)

def lists_as_reported(hits, lists: dict[str, list]) -> dict[str, list[str]] | None:
    """Each recomputed channel list with the page's hits at the channel ranks the page reports,
    the other documents in our order around them. The per-hit check has already allowed a
    reported rank only inside a near tie, so these are the lists the server's arithmetic could
    have produced, and the page must be their exact fusion. A swap of two near-equal cosines
    changes both fused scores, and that can move a third document past the page's cut, which
    a set of near-tied ids alone cannot explain. None when the reported ranks collide."""
    out = {}
    for channel, lst in lists.items():
        ids = [rid for rid, _ in lst]
        placed: dict[int, str] = {}
        for hit in hits:
            entry = (hit.get("channels") or {}).get(channel)
            rank = entry.get("rank") if entry else None
            if rank is None:
                continue
            if not 1 <= rank <= len(ids) or rank - 1 in placed:
                return None
            placed[rank - 1] = hit["id"]
        moved = set(placed.values())
        rest = iter([rid for rid in ids if rid not in moved])
        out[channel] = [placed[i] if i in placed else next(rest) for i in range(len(ids))]
    return out

def reached_by_near_tie_swaps(have: Sequence[str | None], lists: dict[str, list], tolerance: dict[str, float],
                               profile: Mapping, limit: int) -> bool:
    """True when swapping near-tied neighbours in the recomputed channel lists makes their exact
    fusion the stored list `have` (a base pool keeps ids only, no channel ranks to read). Each
    step takes the swap that moves the first difference furthest down, so this searches only
    lists the server's arithmetic could have produced, and accepts only an exact match."""
    weights = {c: profile["channels"][c]["weight"] for c in profile["channels"]}
    current = {c: [rid for rid, _ in lst] for c, lst in lists.items()}
    pairs = [(c, i) for c, lst in lists.items() for i in range(len(lst) - 1)
             if lst[i][1] != lst[i + 1][1] and rc.near_tie(lst[i][1], lst[i + 1][1], tolerance[c])]

    def agreeing(channels) -> int:
        want = rc.fused_order(rc.fuse(profile["fusion"], channels, weights, profile["k"]))[:limit]
        return len(have) + 1 if want == have else rc.first_difference(have, want)

    reached = agreeing(current)
    for _ in range(len(pairs)):
        if reached > len(have):
            return True
        best = None
        for c, i in pairs:
            lst = current[c]
            lst[i], lst[i + 1] = lst[i + 1], lst[i]
            step = agreeing(current)
            lst[i], lst[i + 1] = lst[i + 1], lst[i]
            if step > reached and (best is None or step > best[0]):
                best = (step, c, i)
        if best is None:
            return False
        reached, c, i = best
        current[c][i], current[c][i + 1] = current[c][i + 1], current[c][i]
    return reached > len(have)

def explained_by_near_ties(have, want, lists, tolerance) -> bool:
    """True when every document on which the two fused lists differ sits in a channel near-tie."""
    ambiguous = set().union(*(rc.near_tie_ids(lst, tolerance[channel]) for channel, lst in lists.items()))
    differing = {a for a, b in zip(have, want) if a != b} | {b for a, b in zip(have, want) if a != b}
    return len(have) == len(want) and bool(differing) and differing <= ambiguous


def base_list(checker: PageChecker, query: Mapping, base: Mapping) -> tuple[list[str], dict[str, Rational], dict]:
    """The fused base (ids best first, exact scores, per-record channel ranks), cut at its depth."""
    channels = base["channels"]
    lists = {
        "lexical": [rid for rid, _ in rc.ordered(checker.bm25_scores(query), channels["lexical"]["depth"])],
        "semantic": [rid for rid, _ in rc.ordered(checker.cosines(query), channels["semantic"]["depth"],
                                                  min_score=channels["semantic"]["min_score"])],
    }
    rule = checker.profiles[base["profile"]]["fusion"]  # the rule of the hybrid profile the base names
    fused = rc.fuse(rule, lists, {c: channels[c]["weight"] for c in channels}, base["k"])
    order = rc.fused_order(fused)[: base["depth"]]
    return order, {rid: fused[rid]["score"] for rid in order}, {rid: fused[rid]["ranks"] for rid in order}
