"""The PPR family's independent verifier: the page's seeds, iteration count and masses recomputed
from the frozen relations, the fixture's query entities and the base, by another algorithm.

The server (server/families/ppr/pagerank.py) pushes each node's share to its neighbours one node at a time in
Python integers over dictionaries. Here the subgraph is a sparse incidence of integer indices and
every iteration is one vectorized pass in numpy int64 (masses stay below 2^grid_bits <= 2^48, so
no sum can overflow): shares = mass // (2 * degree), gathered along the edge list and summed per
target with np.add.at. Integer floors are exact, so the two agree on every bit or one is wrong;
the reset integers are recomputed from exact rationals with a floor of their own
(numerator * 2^G // denominator). A page whose seeds, iteration count, subgraph size, masses or
order differ from this recomputation fails with the first difference named.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction

import numpy as np

from evaluator.verification import recompute as rc
from evaluator.verification.failure import Findings
from evaluator.verification.fused_lists import CHANNEL_TOLERANCE, base_list
from evaluator.verification.page_checker import PageChecker

MAX_SWAPS = 2  # near-tie swaps tried together when the page's seeds are not the recomputed base's
BEYOND_CUT = 4  # channel entries past a channel's depth kept, so that a near tie across the cut can swap in


def _holders(relations: Sequence[Mapping], kinds: Sequence[str]) -> dict[str, list[str]]:
    table: dict[str, set[str]] = {}
    for rel in relations:
        if rel.get("kind") not in kinds:
            continue
        evidence = rel["provenance"]["evidence_ref"]
        text = evidence[evidence.index(":") + 1:]
        ends = table.setdefault(text, set())
        for end in (rel["source"], rel["target"]):
            ends.add(end["id"] if isinstance(end, Mapping) else end)
    return {text: sorted(ids) for text, ids in table.items()}


def recompute(query_entities: Sequence[str], relations: Sequence[Mapping], base: Sequence[tuple[str, Fraction]],
              profile: Mapping, limit: int) -> dict:
    holders = _holders(relations, profile["graph"]["kinds"])
    bits = profile["arithmetic"]["grid_bits"]
    weights: dict[str, Fraction] = {}
    matched = [t for t in dict.fromkeys(sorted(query_entities)) if t in holders]
    for text in matched:
        weights["e:" + text] = Fraction(1, len(holders[text]))
    entity_sum = sum(weights.values()) if weights else Fraction(1)
    passage_weight = Fraction(profile["reset"]["passage_weight"])
    scores = sum((s for _, s in base), Fraction(0))
    if passage_weight and scores:
        for rid, s in base:
            if s:
                key = "p:" + rid
                weights[key] = weights.get(key, Fraction(0)) + passage_weight * entity_sum * s / scores
    total = sum(weights.values(), Fraction(0))
    reset = {}
    for node, w in weights.items():
        q = w / total
        reset[node] = (q.numerator << bits) // q.denominator
    # the subgraph, grown layer by layer over an explicit bipartite incidence
    passages_of = {"e:" + t: ["p:" + r for r in ids] for t, ids in holders.items()}
    entities_of: dict[str, list[str]] = {}
    for entity, ps in passages_of.items():
        for p in ps:
            entities_of.setdefault(p, []).append(entity)
    near = lambda n: passages_of.get(n, []) if n.startswith("e:") else entities_of.get(n, [])  # noqa: E731
    layer, seen = set(reset), set(reset)
    for _ in range(profile["subgraph"]["radius"]):
        layer = {m for n in layer for m in near(n) if m not in seen}
        seen |= layer
    nodes = sorted(seen)
    index = {n: i for i, n in enumerate(nodes)}
    src, dst = [], []
    for n in nodes:
        for m in near(n):
            if m in index:
                src.append(index[n])
                dst.append(index[m])
    src_a, dst_a = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
    degree = np.bincount(src_a, minlength=len(nodes)).astype(np.int64)
    r = np.zeros(len(nodes), dtype=np.int64)
    for n, v in reset.items():
        r[index[n]] = v
    walked: np.ndarray = r.copy()
    safe = np.where(degree > 0, 2 * degree, 1)
    for _ in range(profile["iterations"]):
        share = np.where(degree > 0, walked // safe, 0)
        nxt = r // 2
        np.add.at(nxt, dst_a, share[src_a])
        walked = nxt
    masses = {n: int(walked[i]) for n, i in index.items()}
    ranked = sorted((n[2:] for n in nodes if n.startswith("p:") and masses[n] > 0),
                    key=lambda rid: (-masses["p:" + rid], rid))
    base_rank = {rid: i + 1 for i, (rid, _) in enumerate(base)}
    order: list[tuple[str, int | None, int | None]] = [(rid, masses["p:" + rid], base_rank.get(rid)) for rid in ranked]
    order += [(rid, None, base_rank[rid]) for rid, _ in base if rid not in set(ranked)]
    return {"iterations": profile["iterations"], "subgraph_nodes": len(nodes),
            "seeds": [{"node": n, "reset": reset[n]} for n in sorted(reset)],
            "hits": [{"rank": i, "id": rid, "score": _hit_score(mass, br, bits),
                      "mass": mass, "base_rank": br}
                     for i, (rid, mass, br) in enumerate(order[:limit], start=1)]}


def _hit_score(mass: int | None, base_rank: int | None, bits: int) -> float:
    """Its mass on the grid, or for a hit backfilled from the base list minus its base rank."""
    if mass is not None:
        return float(Fraction(mass, 1 << bits))
    assert base_rank is not None, "a hit without mass comes from the base list"
    return -float(base_rank)


def ppr_failures(section: Mapping, hits: Sequence[Mapping], want: Mapping) -> Findings:
    """The page's PPR section and hits against `recompute`: every difference, first ones first."""
    for key in ("iterations", "subgraph_nodes"):
        if section.get(key) != want[key]:
            yield None, f"ppr.{key}", f"{section.get(key)!r}, the recomputation gives {want[key]!r}"
    if list(section.get("seeds", [])) != want["seeds"]:
        have = {s.get("node"): s.get("reset") for s in section.get("seeds", [])}
        wanted = {s["node"]: s["reset"] for s in want["seeds"]}
        node = next((n for n in sorted(set(have) | set(wanted)) if have.get(n) != wanted.get(n)), None)
        yield (None, "ppr.seeds", f"differ at {node!r}: page {have.get(node)!r}, recomputation "
                                  f"{wanted.get(node)!r}")
    for i, (got, exp) in enumerate(zip(hits, want["hits"]), start=1):
        differing = [key for key in exp if dict(got).get(key) != exp[key]] or sorted(set(got) - set(exp))
        if differing:
            yield i, differing[0], f"page {dict(got)} against {exp}"
    if len(hits) != len(want["hits"]):
        yield None, "hits", f"page has {len(hits)} hits, the recomputation {len(want['hits'])}"


def channel_lists(checker: PageChecker, query: Mapping, base: Mapping) -> dict[str, list[tuple[str, float]]]:
    """Each base channel recomputed here with its raw scores, a few entries past its depth."""
    channels = base["channels"]
    return {"lexical": rc.ordered(checker.bm25_scores(query), channels["lexical"]["depth"] + BEYOND_CUT),
            "semantic": rc.ordered(checker.cosines(query), channels["semantic"]["depth"] + BEYOND_CUT,
                                   min_score=channels["semantic"]["min_score"])}


def near_tie_bases(lists: Mapping[str, Sequence[tuple[str, float]]], base: Mapping, rule: str,
                   tolerance: Mapping[str, float]) -> Iterator[list[tuple[str, Fraction]]]:
    """The fused bases the server's arithmetic could have produced: the channel lists with up to
    MAX_SWAPS pairs of near-equal neighbours swapped (inside a channel's depth or across its cut),
    each cut at its depth and fused by the base's rule, in order of fewer swaps first."""
    channels = base["channels"]
    pairs = [(c, i) for c, lst in lists.items() for i in range(min(len(lst) - 1, channels[c]["depth"]))
             if lst[i][1] != lst[i + 1][1] and rc.near_tie(lst[i][1], lst[i + 1][1], tolerance[c])]
    weights = {c: channels[c]["weight"] for c in channels}
    for count in range(1, MAX_SWAPS + 1):
        for chosen in itertools.combinations(pairs, count):
            ids = {c: [rid for rid, _ in lst] for c, lst in lists.items()}
            for c, i in chosen:
                ids[c][i], ids[c][i + 1] = ids[c][i + 1], ids[c][i]
            fused = rc.fuse(rule, {c: ids[c][: channels[c]["depth"]] for c in ids}, weights, base["k"])
            order = rc.fused_order(fused)[: base["depth"]]
            yield [(rid, Fraction(int(fused[rid]["score"].numerator), int(fused[rid]["score"].denominator)))
                   for rid in order]


def check_ppr(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    """The route's verifier (evaluator/verification/routes.py): the base by the evaluator's own
    fusion, the relations from the frozen file under their lab record ids, the query's entities
    from the fixture; then `recompute` and every difference reported."""
    profile = checker.profiles[spec["profile"]]
    entities = checker.frozen.query_entities(query["id"])
    if page.get("query_entities") != entities:
        yield None, "query_entities", f"{page.get('query_entities')}, the fixture's {entities}"
        return
    order, scores, _ = base_list(checker, query, profile["base"])
    base = [(rid, Fraction(int(scores[rid].numerator), int(scores[rid].denominator))) for rid in order]
    relations = [{"kind": rel["kind"], "source": checker.record_of[rel["source"]],
                  "target": checker.record_of[rel["target"]], "provenance": rel["provenance"]}
                 for rel in checker.frozen.relations["relations"] if rel["kind"] in profile["graph"]["kinds"]]
    hits = [{key: hit.get(key) for key in ("rank", "id", "score", "mass", "base_rank")} for hit in page.get("hits") or []]
    rule = checker.profiles[profile["base"]["profile"]]["fusion"]
    yield from page_failures(page.get("ppr") or {}, hits, entities, relations, base,
                             lambda: channel_lists(checker, query, profile["base"]), rule, profile, spec["limit"])


def page_failures(section: Mapping, hits: Sequence[Mapping], entities: Sequence[str], relations: Sequence[Mapping],
                  base: Sequence[tuple[str, Fraction]], lists, rule: str, profile: Mapping, limit: int) -> Findings:
    """The page against the recomputation from our base; when passage seeds are on and it differs,
    against each base a near tie in the channels allows (`lists()` gives the channels), exactly.
    Passage seeds weigh every base score, so one near tie the server broke the other way at a
    channel's cut moves them all."""
    failures = [*ppr_failures(section, hits, recompute(entities, relations, base, profile, limit))]
    if failures and Fraction(profile["reset"]["passage_weight"]):
        for alternative in near_tie_bases(lists(), profile["base"], rule, CHANNEL_TOLERANCE):
            if not any(ppr_failures(section, hits, recompute(entities, relations, alternative, profile, limit))):
                return
    yield from failures
