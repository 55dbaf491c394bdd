"""Independent verification of rescue pages (docs/rescue.md), written again from the specification.

Nothing is taken from the server: the base is refused from recomputed BM25 and cosine lists, the
seeds from the fixture titles with `builders.normalize`, the expander bonuses and the lane from the
prepared relations, and the gate from the query text and the two recomputed channel lists. The
lane is recomputed with one breadth-first search per seed (the server labels all seeds in one
level-by-level pass), so agreement is evidence, not an echo.

`check_rescue(checker, query, page, spec)` plugs into `evaluator.verification.verify.Checker.check_page`;
`expected_rescue` is the recomputation on explicit inputs, usable by tests and audit alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from builders.normalize import normalize_text, normalized_tokens, title_is_eligible
from evaluator.verification import recompute as rc
from evaluator.verification.failure import Findings
from evaluator.verification.page_checker import PageChecker
from protocols.fusion import check_fusion_bindings


def dec(value) -> Fraction:
    """A catalog number read as the decimal it is written as (0.05 is 1/20, not the binary float)."""
    return Fraction(str(value))


def text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


@dataclass
class Expected:
    base: list[str]  # base block order after the expander
    fused: dict[str, Fraction]
    normalized: dict[str, Fraction]
    bonus: dict[str, list[tuple[str, list[str]]]]  # doc -> [(top seed, relation ids)]
    rescored: dict[str, Fraction]
    base_rank: dict[str, int]
    seeds: list[dict]
    gate: dict
    lane: list[dict]  # {"id", "seed", "hops", "score", "steps": [(relation id, from, to)], "lane_rank"}
    final: list[tuple[str, Fraction, bool]]
    channel_ranks: dict[str, dict[str, int]] = field(default_factory=dict)
    lane_before_cap: int = 0


def _undirected(edges: Mapping[str, rc.Edge], kinds: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """node -> [(neighbour, relation id)] over relations of the followed kinds, both directions."""
    out: dict[str, list[tuple[str, str]]] = {}
    for edge in edges.values():
        if edge.kind in kinds:
            out.setdefault(edge.source, []).append((edge.target, edge.relation_id))
            out.setdefault(edge.target, []).append((edge.source, edge.relation_id))
    for entries in out.values():
        entries.sort()
    return out


def _distances(start: str, adj: Mapping[str, list[tuple[str, str]]], max_hops: int) -> dict[str, int]:
    dist, frontier = {start: 0}, [start]
    for hop in range(1, max_hops + 1):
        nxt = []
        for node in frontier:
            for other, _ in adj.get(node, ()):
                if other not in dist:
                    dist[other] = hop
                    nxt.append(other)
        frontier = nxt
    return dist


def _weighted_reciprocal_rank(ranks: Mapping[str, Mapping[str, int]], base: Mapping) -> dict[str, Fraction]:
    """Per record, the sum over the channels that ranked it (in channel order) of weight / (k + rank)."""
    fused: dict[str, Fraction] = {}
    for name, ranked in ranks.items():
        for rid, r in ranked.items():
            fused[rid] = fused.get(rid, Fraction(0)) + dec(base["channels"][name]["weight"]) / (base["k"] + r)
    return fused


BASE_FUSERS = {"weighted_reciprocal_rank": _weighted_reciprocal_rank}  # the base's `fusion`, by name
check_fusion_bindings("evaluator/verification/verifiers/lists/rescue.py", BASE_FUSERS)


def expected_rescue(query: str, lexical: Sequence[tuple[str, float]], semantic: Sequence[tuple[str, float]],
                    titles: Mapping[str, str], edges: Mapping[str, rc.Edge], profile: Mapping, mode: str) -> Expected:
    """The whole rescue ranking from explicit inputs (channel lists best first, titles by record)."""
    base_spec = profile["base"]
    ranks: dict[str, dict[str, int]] = {}
    for name, lst in (("lexical", lexical), ("semantic", semantic)):
        spec = base_spec["channels"][name]
        ranks[name] = {rid: r for r, (rid, _) in enumerate(lst[: spec["depth"]], start=1)}
    fused = BASE_FUSERS[base_spec["fusion"]](ranks, base_spec)
    order = sorted(fused, key=lambda rid: (-fused[rid], rid))[: base_spec["depth"]]
    fused = {rid: fused[rid] for rid in order}
    top = fused[order[0]] if order else Fraction(1)
    normalized = {rid: fused[rid] / top for rid in order}
    base_rank = {rid: r for r, rid in enumerate(order, start=1)}

    seeds_spec = profile["seeds"]
    query_norm = " " + normalize_text(query) + " "
    matched = []
    for rid, title in titles.items():
        t = normalize_text(title)
        if title_is_eligible(t) and f" {t} " in query_norm:
            matched.append((-len(t.split(" ")), t, rid))
    matched.sort()
    seeds: dict[str, dict] = {}
    for _, _, rid in matched:
        seeds.setdefault(rid, {"id": rid, "origins": ["query_title"],
                               "score": dec(seeds_spec["query_titles"]["seed_score"]), "base_rank": base_rank.get(rid)})
    top_docs = order[: seeds_spec["base_top"]]
    for rid in top_docs:
        entry = seeds.setdefault(rid, {"id": rid, "origins": [], "score": normalized[rid], "base_rank": base_rank[rid]})
        entry["origins"].append("base")
        entry["score"] = max(entry["score"], normalized[rid])
    seed_list = list(seeds.values())[: seeds_spec["cap"]]
    distinct_titles = len({t for _, t, _ in matched})

    gate = _gate(query, lexical, semantic, order, normalized, distinct_titles, mode, profile["gate"])

    bonus: dict[str, list[tuple[str, list[str]]]] = {rid: [] for rid in order}
    rescored = dict(normalized)
    if profile.get("expander") is not None:
        adj = _undirected(edges, profile["expander"]["kinds"])
        for rid in order:
            linked: dict[str, list[str]] = {}
            for other, relation_id in adj.get(rid, ()):
                if other in top_docs:
                    linked.setdefault(other, []).append(relation_id)
            bonus[rid] = [(s, sorted(linked[s])) for s in sorted(linked)]
            rescored[rid] = normalized[rid] + dec(profile["expander"]["hop_weight"]) * len(linked)
    block = sorted(order, key=lambda rid: (-rescored[rid], rid))

    lane: list[dict] = []
    before_cap = 0
    if gate["fired"]:
        lane, before_cap = _lane(seed_list, edges, profile["lane"], set(order))
    if profile["combine"] == "append":
        offset = profile["final_score"]["offset"]
        ids = [(rid, False) for rid in block] + [(hit["id"], True) for hit in lane]
        final = [(rid, Fraction(1, offset + r), resc) for r, (rid, resc) in enumerate(ids, start=1)]
    else:
        weight = dec(profile["fusion"]["graph_weight"])
        scores = dict(fused)
        flags = {rid: False for rid in order}
        if weight != 0:
            for hit in lane:
                scores[hit["id"]] = weight / (profile["fusion"]["k"] + hit["lane_rank"])
                flags[hit["id"]] = True
        final = [(rid, scores[rid], flags[rid]) for rid in sorted(scores, key=lambda rid: (-scores[rid], rid))]
    return Expected(block, fused, normalized, bonus, rescored, base_rank, seed_list, gate, lane, final, ranks,
                    before_cap)


def _lane(seeds: list[dict], edges: Mapping[str, rc.Edge], spec: Mapping, base: set[str]) -> tuple[list[dict], int]:
    adj = _undirected(edges, spec["kinds"])
    dist = {s["id"]: _distances(s["id"], adj, spec["max_hops"]) for s in seeds}
    position = {s["id"]: i for i, s in enumerate(seeds)}
    best: dict[str, tuple[int, dict]] = {}
    for seed in seeds:
        for node, hop in dist[seed["id"]].items():
            current = best.get(node)
            key = (hop, -seed["score"], position[seed["id"]])
            if current is None or key < (current[0], -current[1]["score"], position[current[1]["id"]]):
                best[node] = (hop, seed)
    decay = dec(spec["hop_decay"])
    reached = []
    for node, (hop, seed) in best.items():
        reached.append({"id": node, "seed": seed, "hops": hop, "score": seed["score"] * decay ** hop,
                        "steps": _path(node, seed["id"], hop, best, adj)})
    lane = sorted((h for h in reached if h["id"] not in base), key=lambda h: (-h["score"], h["hops"], h["id"]))
    for r, hit in enumerate(lane, start=1):
        hit["lane_rank"] = r
    return lane[: spec["cap"]], len(lane)


def lane_budget_cut(seeds: Sequence[str], edges: Mapping[str, rc.Edge], spec: Mapping) -> bool:
    """Whether the lane's traversal from these seeds must stop on a budget (docs/rescue.md, step 4).

    A complete traversal examines every followed adjacency entry of each node closer than max_hops
    to the seed set and reaches every node within max_hops; it is cut exactly when either count
    exceeds its budget (max_scan entries, max_nodes nodes). Recomputed here, so a page cannot skip
    the lane's verification by claiming a cut.
    """
    adj = _undirected(edges, spec["kinds"])
    closest: dict[str, int] = {}
    for seed in seeds:
        for node, hop in _distances(seed, adj, spec["max_hops"]).items():
            closest[node] = min(hop, closest.get(node, hop))
    scanned = sum(len(adj.get(node, ())) for node, hop in closest.items() if hop < spec["max_hops"])
    return scanned > spec["max_scan"] or len(closest) > spec["max_nodes"]


def _path(node: str, seed: str, hop: int, best: Mapping, adj: Mapping) -> list[tuple[str, str, str]]:
    """The walk the rule picks: back through the smallest-id parent labelled with the same seed."""
    steps = []
    while hop > 0:
        parents = sorted((other, rel) for other, rel in adj.get(node, ())
                         if other in best and best[other][0] == hop - 1 and best[other][1]["id"] == seed)
        parent, relation_id = parents[0]
        steps.append((relation_id, parent, node))
        node, hop = parent, hop - 1
    return steps[::-1]


def _gate(query, lexical, semantic, order, normalized, distinct_titles, mode, spec) -> dict:
    tokens = normalized_tokens(query)
    cues = sorted({t for t in tokens if t in spec["relation_cues"]})
    n = spec["agreement"]["top"]
    a, b = {rid for rid, _ in lexical[:n]}, {rid for rid, _ in semantic[:n]}
    jaccard = Fraction(len(a & b), len(a | b)) if a and b else Fraction(0)
    first = normalized[order[0]] if order else Fraction(0)
    second = normalized[order[1]] if len(order) > 1 else Fraction(0)
    gap = first - second
    reasons = [name for name, holds in (
        ("relation_cue", bool(cues)),
        ("entity_heavy", distinct_titles >= spec["entity_heavy_min_titles"]),
        ("low_agreement", jaccard < dec(spec["agreement"]["low_below"])),
        ("low_confidence", gap < dec(spec["confidence"]["low_below"])),
    ) if holds]
    veto = spec["veto"]
    vetoed = len(tokens) <= veto["max_tokens"] and jaccard >= dec(veto["min_agreement"]) and not cues
    auto = bool(reasons) and not vetoed
    return {"mode": mode, "auto_decision": auto, "fired": auto if mode == "auto" else mode == "force",
            "reasons": reasons, "vetoed": vetoed,
            "signals": {"query_tokens": len(tokens), "relation_cues": cues, "query_titles": distinct_titles,
                        "agreement_jaccard": float(jaccard), "agreement_jaccard_exact": text(jaccard),
                        "confidence_gap": float(gap), "confidence_gap_exact": text(gap)}}


# ---------------------------------------------------------------- comparing with a page


def align_near_ties(lst: list[tuple[str, float]], reported: Mapping[str, int], tolerance: float) -> list[tuple[str, float]]:
    """Reorder runs of near-equal recomputed scores to the server's reported ranks.

    float64 recomputation and the server's arithmetic may order two scores that differ by rounding
    either way; within such a run (and only there) the page's own ranks decide: a document the page
    ranks inside the run takes that rank, the others fill the remaining places in recomputed order
    (the page does not show every channel entry, only those of its hits).
    """
    out: list[tuple[str, float]] = []
    run: list[tuple[str, float]] = []
    for entry in lst + [None]:
        if run and (entry is None or not rc.near_tie(run[-1][1], entry[1], tolerance)):
            out.extend(_place(run, len(out) + 1, reported))
            run = []
        if entry is not None:
            run.append(entry)
    return out


def _place(run: list[tuple[str, float]], first: int, reported: Mapping[str, int]) -> list[tuple[str, float]]:
    if len(run) == 1:
        return run
    slots: dict[int, tuple[str, float]] = {}
    rest = []
    for entry in run:
        rank = reported.get(entry[0])
        if rank is not None and first <= rank < first + len(run) and rank not in slots:
            slots[rank] = entry
        else:
            rest.append(entry)
    free = iter(rest)
    return [slots[r] if r in slots else next(free) for r in range(first, first + len(run))]


def check_rescue(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    """Recompute the page of one rescue method for one query and report every difference."""
    profile = checker.profiles[spec["profile"]]
    channels = profile["base"]["channels"]
    reported = {name: {h["id"]: (h.get("channels") or {}).get(name, {}).get("rank") for h in page["hits"]}
                for name in ("lexical", "semantic")}
    reported = {name: {rid: r for rid, r in ranks.items() if r is not None} for name, ranks in reported.items()}
    lexical = align_near_ties(rc.ordered(checker.bm25_scores(query)), reported["lexical"], rc.BM25_TOLERANCE)
    semantic = align_near_ties(rc.ordered(checker.cosines(query), min_score=channels["semantic"]["min_score"]),
                               reported["semantic"], rc.COSINE_TOLERANCE)
    lexical, semantic = lexical[: channels["lexical"]["depth"]], semantic[: channels["semantic"]["depth"]]
    documents = checker.frozen.documents  # a property that builds the map: read it once
    titles = {rid: documents[doc]["title"] for rid, doc in checker.doc_of.items()}
    want = expected_rescue(query["question"], lexical, semantic, titles, checker.edges, profile,
                           spec["graph_mode"])
    cut = want.gate["fired"] and lane_budget_cut([s["id"] for s in want.seeds], checker.edges, profile["lane"])
    claimed = bool({"max_scan", "max_nodes"} & set(page.get("stop_reasons") or []))
    if claimed != cut:
        yield (None, "stop_reasons", f"{page.get('stop_reasons')}: the recomputed lane traversal "
                                     f"{'is' if cut else 'is not'} cut by a budget")
    if (page.get("coverage") or {}).get("graph") is not (not cut):
        yield None, "coverage.graph", f"{(page.get('coverage') or {}).get('graph')}, recomputed {not cut}"
    yield from compare_page(page, want, spec, profile, checker.revision_of, checker.relation_revision, checker.edges,
                            {"lexical": dict(lexical), "semantic": dict(semantic)}, cut)


def compare_page(page: Mapping, want: Expected, spec: Mapping, profile: Mapping, revision_of: Mapping[str, int],
                 relation_revision: Mapping[str, int], edges: Mapping[str, rc.Edge], raw: Mapping[str, Mapping],
                 lane_cut: bool) -> Findings:
    hits = page.get("hits") or []
    if page.get("gate") != want.gate:
        yield None, "gate", f"{page.get('gate')}, recomputed {want.gate}"
    seeds = [{"id": s["id"], "revision": revision_of[s["id"]], "origins": s["origins"], "base_rank": s["base_rank"],
              "score": float(s["score"]), "score_exact": text(s["score"])} for s in want.seeds]
    if page.get("seeds") != seeds:
        yield None, "seeds", f"{[s.get('id') for s in page.get('seeds') or []]}, recomputed {[s['id'] for s in seeds]}"
    top = sorted(want.base_rank, key=want.base_rank.__getitem__)[: profile["seeds"]["base_top"]]
    anchors = [{"id": rid, "revision": revision_of[rid], "rank": want.base_rank[rid]} for rid in top]
    if page.get("anchors") != anchors:
        yield None, "anchors", "are not the recomputed top base documents"
    final = want.final[: spec["limit"]]
    if lane_cut:  # a cut traversal is not recomputed; only the base block and each proof are checked
        final = [entry for entry in final if not entry[2]]
        hits_checked = [h for h in hits if not h.get("rescued")]
    else:
        hits_checked = hits
    have = [h.get("id") for h in hits_checked]
    if have != [rid for rid, _, _ in final]:
        first = rc.first_difference(have, [r for r, _, _ in final])
        yield (first + 1, "id", f"{have[first] if first < len(have) else None}, recomputed "
                                f"{final[first][0] if first < len(final) else None} ({len(have)} vs {len(final)} hits)")
        return
    lane = {hit["id"]: hit for hit in want.lane}
    used: set[str] = set()
    for i, (hit, (rid, score, rescued)) in enumerate(zip(hits_checked, final), start=1):
        if hit.get("rescued") is not rescued:
            yield i, "rescued", f"{hit.get('rescued')}, recomputed {rescued}"
        if hit.get("score_exact") != text(score) or hit.get("score") != float(score):
            yield i, "score_exact", f"{hit.get('score_exact')}, recomputed {text(score)}"
        yield from _check_channels(hit, i, want, profile, raw, lane)
        yield from _check_base(hit, i, want, revision_of, used)
        yield from _check_proof(hit, i, lane.get(rid), revision_of, relation_revision, edges, used)
    if lane_cut:
        for i, hit in enumerate(hits, start=1):
            if hit.get("rescued") and any(not h.get("rescued") for h in hits[i:]):
                yield i, "rescued", "a rescued candidate ranks above a base candidate"
    if not lane_cut:
        rescued_ranks = [i for i, h in enumerate(hits, start=1) if h.get("rescued")]
        summary = {"base_size": len(want.base), "lane_size": len(want.lane), "lane_before_cap": want.lane_before_cap,
                   "first_rescued_rank": rescued_ranks[0] if rescued_ranks else None}
        if page.get("rescue") != summary:
            yield None, "rescue", f"{page.get('rescue')}, recomputed {summary}"
        stops = ["lane_cap"] if want.lane_before_cap > len(want.lane) else []
        if list(page.get("stop_reasons") or []) != stops:
            yield None, "stop_reasons", f"{page.get('stop_reasons')}, recomputed {stops}"
    returned = {r.get("id"): r for r in page.get("relations") or []}
    if not lane_cut and set(returned) != used:
        yield (None, "relations", f"returned but unused {sorted(set(returned) - used)[:3]}, "
                                  f"used but not returned {sorted(used - set(returned))[:3]}")
    for relation_id, rel in returned.items():
        edge = edges.get(relation_id)
        if edge is None or rel.get("kind") != edge.kind or rel.get("revision") != relation_revision[relation_id]:
            yield None, f"relations[{relation_id}]", "not a prepared relation of that kind and revision"


def _check_channels(hit, i, want: Expected, profile, raw, lane) -> Findings:
    channels = hit.get("channels") or {}
    spec, k = profile["base"]["channels"], profile["base"]["k"]
    for name in ("lexical", "semantic"):
        entry = channels.get(name) or {}
        rank = want.channel_ranks[name].get(hit["id"]) if hit["id"] in want.fused else None
        part = Fraction(0) if rank is None else dec(spec[name]["weight"]) / (k + rank)
        if entry.get("rank") != rank or entry.get("contribution_exact") != text(part):
            yield (i, f"channels.{name}", f"rank {entry.get('rank')} {entry.get('contribution_exact')}, "
                                          f"recomputed {rank} {text(part)}")
        tolerance = rc.BM25_TOLERANCE if name == "lexical" else rc.COSINE_TOLERANCE
        if rank is not None and not rc.near_tie(_number(entry.get("raw_score")), raw[name][hit["id"]], tolerance):
            yield i, f"channels.{name}.raw_score", f"{entry.get('raw_score')}, recomputed {raw[name][hit['id']]!r}"
    if profile["combine"] == "fuse":
        entry = channels.get("graph") or {}
        mine = lane.get(hit["id"])
        weight = dec(profile["fusion"]["graph_weight"])
        part = Fraction(0) if mine is None or weight == 0 else weight / (profile["fusion"]["k"] + mine["lane_rank"])
        if entry.get("contribution_exact") != text(part):
            yield i, "channels.graph", f"{entry.get('contribution_exact')}, recomputed {text(part)}"


def _number(value) -> float:
    """A reported float, or NaN (which compares unequal to everything) when it is missing; a raw
    score of exactly 0.0 is a number, not a missing value."""
    return float("nan") if value is None else value


def _check_base(hit, i, want: Expected, revision_of, used: set[str]) -> Findings:
    rid = hit["id"]
    detail = hit.get("base")
    if rid not in want.fused:
        if detail is not None:
            yield i, "base", "a rescued candidate carries base detail"
        return
    expected_bonus = [{"id": seed, "revision": revision_of[seed], "relations": relations}
                      for seed, relations in want.bonus[rid]]
    have_bonus = [{"id": b.get("id"), "revision": b.get("revision"),
                   "relations": [r.get("relation_id") for r in b.get("relations") or []]}
                  for b in (detail or {}).get("bonus_seeds") or []]
    if detail is None or detail.get("rank") != want.base_rank[rid] or detail.get("fused_exact") != text(want.fused[rid]) \
            or detail.get("normalized_exact") != text(want.normalized[rid]):
        yield (i, "base", f"rank/fused/normalized differ from the recomputed base ({want.base_rank[rid]}, "
                          f"{text(want.fused[rid])}, {text(want.normalized[rid])})")
        return
    if have_bonus != expected_bonus:
        yield i, "base.bonus_seeds", f"{have_bonus}, recomputed from the relations {expected_bonus}"
    bonus = want.rescored[rid] - want.normalized[rid]
    if detail.get("bonus_exact") != text(bonus) or detail.get("rescored_exact") != text(want.rescored[rid]):
        yield (i, "base.bonus_exact", f"{detail.get('bonus_exact')} / {detail.get('rescored_exact')}, recomputed "
                                      f"{text(bonus)} / {text(want.rescored[rid])}")
    for b in have_bonus:
        used.update(b["relations"])


def _check_proof(hit, i, mine, revision_of, relation_revision, edges, used: set[str]) -> Findings:
    proof = hit.get("proof")
    if mine is None:
        if proof is not None:
            yield i, "proof", "a base candidate carries a rescue proof"
        return
    if proof is None:
        yield i, "proof", "a rescued candidate carries no proof"
        return
    seed = proof.get("seed") or {}
    if seed.get("id") != mine["seed"]["id"] or seed.get("score_exact") != text(mine["seed"]["score"]):
        yield (i, "proof.seed", f"{seed.get('id')} {seed.get('score_exact')}, recomputed {mine['seed']['id']} "
                                f"{text(mine['seed']['score'])}")
    if proof.get("hops") != mine["hops"] or proof.get("lane_rank") != mine["lane_rank"] \
            or proof.get("lane_score_exact") != text(mine["score"]):
        yield (i, "proof", f"hops {proof.get('hops')} lane rank {proof.get('lane_rank')} score "
                           f"{proof.get('lane_score_exact')}, recomputed {mine['hops']} {mine['lane_rank']} {text(mine['score'])}")
    have = [(s.get("relation_id"), (s.get("from") or {}).get("id"), (s.get("to") or {}).get("id"))
            for s in proof.get("steps") or []]
    if have != mine["steps"]:
        yield i, "proof.steps", f"{have}, recomputed {mine['steps']}"
        return
    for j, step in enumerate(proof.get("steps") or []):
        edge = edges[step["relation_id"]]
        direction = "forward" if step["from"]["id"] == edge.source else "backward"
        if step.get("direction") != direction or step.get("kind") != edge.kind \
                or step.get("relation_revision") != relation_revision[edge.relation_id] \
                or step["from"].get("revision") != revision_of[step["from"]["id"]] \
                or step["to"].get("revision") != revision_of[step["to"]["id"]]:
            yield i, f"proof.steps[{j}]", "direction, kind or a revision differs from the prepared relation"
        used.add(edge.relation_id)
