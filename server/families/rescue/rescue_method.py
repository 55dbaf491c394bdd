"""The rescue family: append-not-fuse graph rescue with expander rescore, gate and fused ablations.

Everything here is a pure function of explicit inputs (the two channel lists, the title table, a
neighbour lookup over eligible relations), so the same code answers a live request (through
server/families/rescue/rescue_route.py) and a hand-built test corpus. docs/rescue.md states every rule; protocols/families/lists/rescue.py holds every parameter.

Arithmetic is exact (`Fraction`) wherever a score is rank-derived or compared for a tie, so equal
scores are exactly equal and ties fall to the record id, never to float rounding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from server.families.rescue import titles as title_rules
from server.retrieval.exact import exact_order, to_text
from server.retrieval.fusion import fuse_lists


@dataclass(frozen=True)
class Edge:
    """One eligible relation seen from `node`: `direction` forward when node is its source."""

    relation_id: str
    relation_revision: int
    kind: str
    source: str
    target: str

    def other(self, node: str) -> str:
        return self.target if node == self.source else self.source

    def direction(self, node: str) -> str:
        return "forward" if node == self.source else "backward"


# node id -> its eligible relations of the followed kinds, in any order (sorted here)
Neighbours = Callable[[str], Sequence[Edge]]


def sorted_edges(node: str, neighbours: Neighbours, kinds: Sequence[str]) -> list[Edge]:
    """A node's edges of the followed kinds by (other end, relation id): the one walking order."""
    return sorted((edge for edge in neighbours(node) if edge.kind in kinds),
                  key=lambda edge: (edge.other(node), edge.relation_id))


@dataclass
class Work:
    adjacency_examined: int = 0
    nodes_admitted: int = 0
    stale_skipped: int = 0
    relations_seen: set[str] = field(default_factory=set)
    stop_reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ChannelHit:
    rank: int
    raw_score: float


@dataclass
class BaseHit:
    id: str
    fused: Fraction
    normalized: Fraction
    channels: dict[str, ChannelHit]
    base_rank: int
    bonus_seeds: list[tuple[str, list[Edge]]] = field(default_factory=list)
    rescored: Fraction = Fraction(0)


@dataclass(frozen=True)
class Seed:
    id: str
    origins: tuple[str, ...]
    score: Fraction
    base_rank: int | None


@dataclass
class LaneHit:
    id: str
    seed: Seed
    hops: int
    score: Fraction
    steps: list[tuple[Edge, str, str]]  # (edge, from, to) in walking order
    lane_rank: int = 0


@dataclass
class Ranked:
    """A rescue ranking before payloads: the final order and everything that explains it."""

    base: list[BaseHit]
    lane: list[LaneHit]
    final: list[tuple[str, Fraction, bool]]  # (id, score, rescued)
    seeds: list[Seed]
    gate: dict
    work: Work
    lane_before_cap: int


def fuse_base(lexical: Sequence[tuple[str, float]], semantic: Sequence[tuple[str, float]],
              base: Mapping) -> list[BaseHit]:
    """The two channels (each already ranked best first) fused by the base's rule, cut at the base
    depth (server/retrieval/fusion.py, as every fused base list), each with its share of the best."""
    fused = fuse_lists(base, _pairs(lexical), _pairs(semantic))
    top = Fraction(*fused[0].score) if fused else Fraction(1)
    return [BaseHit(entry.id, Fraction(*entry.score), Fraction(*entry.score) / top,
                    {name: ChannelHit(part.rank, part.raw_score) for name, part in entry.channels.items()}, rank)
            for rank, entry in enumerate(fused, start=1)]


def _pairs(ranked: Sequence[tuple[str, float]]) -> tuple[list[str], list[float]]:
    return [rid for rid, _ in ranked], [raw for _, raw in ranked]


def select_seeds(query: str, title_table: Mapping[str, list[str]], base: Sequence[BaseHit],
                 seeds_profile: Mapping) -> tuple[list[Seed], int]:
    """Query-title seeds first, then the top base documents; returns (seeds, distinct titles matched)."""
    matched = title_rules.titles_in_query(query, title_table)
    matched.sort(key=lambda pair: (-len(pair[0].split(" ")), pair[0], pair[1]))
    title_score = Fraction(str(seeds_profile["query_titles"]["seed_score"]))
    base_rank = {hit.id: hit.base_rank for hit in base}
    order: list[str] = []
    origins: dict[str, list[str]] = {}
    scores: dict[str, Fraction] = {}
    for _, record_id in matched:
        if record_id not in origins:
            order.append(record_id)
            origins[record_id] = []
            scores[record_id] = title_score
        if "query_title" not in origins[record_id]:
            origins[record_id].append("query_title")
    for hit in base[: seeds_profile["base_top"]]:
        if hit.id not in origins:
            order.append(hit.id)
            origins[hit.id] = []
            scores[hit.id] = hit.normalized
        origins[hit.id].append("base")
        scores[hit.id] = max(scores[hit.id], hit.normalized)
    seeds = [Seed(rid, tuple(origins[rid]), scores[rid], base_rank.get(rid))
             for rid in order[: seeds_profile["cap"]]]
    return seeds, len({title for title, _ in matched})


def expand_bonus(base: list[BaseHit], neighbours: Neighbours, expander: Mapping, base_top: int,
                 work: Work) -> list[BaseHit]:
    """Add hop_weight per distinct top-base seed one relation away; return the re-sorted base."""
    hop_weight = Fraction(str(expander["hop_weight"]))
    by_id = {hit.id: hit for hit in base}
    links: dict[str, dict[str, list[Edge]]] = {}
    for seed in base[:base_top]:
        for edge in sorted_edges(seed.id, neighbours, expander["kinds"]):
            work.adjacency_examined += 1
            work.relations_seen.add(edge.relation_id)
            other = edge.other(seed.id)
            if other in by_id:
                links.setdefault(other, {}).setdefault(seed.id, []).append(edge)
    for hit in base:
        seeds = links.get(hit.id, {})
        hit.bonus_seeds = [(sid, sorted(seeds[sid], key=lambda e: e.relation_id)) for sid in sorted(seeds)]
        hit.rescored = hit.normalized + hop_weight * len(seeds)
    return best_first(base, lambda hit: hit.rescored, lambda hit: hit.id)


def traverse(seeds: Sequence[Seed], neighbours: Neighbours, lane: Mapping, work: Work) -> dict[str, LaneHit]:
    """Level-by-level search from all seeds at once, every node labelled at its closest hop.

    A node at set-distance h keeps the best seed (score desc, seed position asc) among the seeds at
    distance exactly h: its parents all sit at distance h - 1 carrying their own best label, so the
    label propagates correctly level by level (docs/rescue.md gives the argument).
    """
    decay = Fraction(str(lane["hop_decay"]))
    powers = [decay ** hop for hop in range(lane["max_hops"] + 1)]
    # a seed's label rank: score desc, then seed position; smaller is better (ints compare fast)
    by_label = sorted(range(len(seeds)), key=lambda i: (-seeds[i].score, i))
    label = {seeds[i].id: rank for rank, i in enumerate(by_label)}
    reached: dict[str, LaneHit] = {}
    for seed in seeds:
        reached[seed.id] = LaneHit(seed.id, seed, 0, seed.score, [])
    frontier = [seed.id for seed in seeds]
    work.nodes_admitted = len(reached)
    scanned = 0
    for hop in range(1, lane["max_hops"] + 1):
        frontier.sort(key=lambda rid: (label[reached[rid].seed.id], rid))
        found: dict[str, LaneHit] = {}
        for node in frontier:
            parent = reached[node]
            parent_label = label[parent.seed.id]
            for edge in sorted_edges(node, neighbours, lane["kinds"]):
                if scanned >= lane["max_scan"]:
                    _stop(work, "max_scan")
                    break
                scanned += 1
                work.adjacency_examined += 1
                work.relations_seen.add(edge.relation_id)
                other = edge.other(node)
                if other in reached:
                    continue
                current = found.get(other)
                if current is None:
                    if len(reached) + len(found) >= lane["max_nodes"]:
                        _stop(work, "max_nodes")
                        continue
                elif parent_label >= label[current.seed.id]:
                    continue  # only a strictly better seed replaces the first parent found
                found[other] = LaneHit(other, parent.seed, hop, parent.seed.score * powers[hop],
                                       parent.steps + [(edge, node, other)])
        reached.update(found)
        work.nodes_admitted = len(reached)
        frontier = sorted(found)
        if not frontier:
            break
    return reached


def best_first(items: list, score: Callable, tie: Callable) -> list:
    """Items by exact score desc, then tie asc: sorted on correctly rounded floats (cheap), and
    only runs of equal floats re-sorted on the exact Fractions (server/retrieval/exact.py's argument)."""
    return exact_order(items, lambda item: (score(item).numerator, score(item).denominator), tie)


def _stop(work: Work, reason: str) -> None:
    if reason not in work.stop_reasons:
        work.stop_reasons.append(reason)


def rescue_lane(reached: Mapping[str, LaneHit], base_ids: set[str], cap: int) -> tuple[list[LaneHit], int]:
    """Reached nodes not in the base, best first, capped; also the count before the cap."""
    lane = best_first([hit for rid, hit in reached.items() if rid not in base_ids],
                      lambda hit: hit.score, lambda hit: (hit.hops, hit.id))
    for rank, hit in enumerate(lane, start=1):
        hit.lane_rank = rank
    return lane[:cap], len(lane)


def gate_decision(query: str, lexical: Sequence[tuple[str, float]], semantic: Sequence[tuple[str, float]],
                  base: Sequence[BaseHit], distinct_titles: int, mode: str, gate: Mapping) -> dict:
    """What `auto` decides (always computed), and whether the lane is appended under `mode`."""
    tokens = title_rules.normalized_tokens(query)
    cues = sorted(set(tokens) & set(gate["relation_cues"]))
    top = gate["agreement"]["top"]
    lex_top = {rid for rid, _ in lexical[:top]}
    sem_top = {rid for rid, _ in semantic[:top]}
    union = lex_top | sem_top
    jaccard = Fraction(len(lex_top & sem_top), len(union)) if lex_top and sem_top else Fraction(0)
    first = base[0].normalized if base else Fraction(0)
    second = base[1].normalized if len(base) > 1 else Fraction(0)
    gap = first - second
    reasons = []
    if cues:
        reasons.append("relation_cue")
    if distinct_titles >= gate["entity_heavy_min_titles"]:
        reasons.append("entity_heavy")
    if jaccard < Fraction(str(gate["agreement"]["low_below"])):
        reasons.append("low_agreement")
    if gap < Fraction(str(gate["confidence"]["low_below"])):
        reasons.append("low_confidence")
    veto = gate["veto"]
    vetoed = (len(tokens) <= veto["max_tokens"] and jaccard >= Fraction(str(veto["min_agreement"]))
              and not cues)
    auto = bool(reasons) and not vetoed
    fired = {"auto": auto, "off": False, "force": True}[mode]
    return {
        "mode": mode, "auto_decision": auto, "fired": fired, "reasons": reasons, "vetoed": vetoed,
        "signals": {
            "query_tokens": len(tokens), "relation_cues": cues, "query_titles": distinct_titles,
            "agreement_jaccard": float(jaccard), "agreement_jaccard_exact": to_text(jaccard),
            "confidence_gap": float(gap), "confidence_gap_exact": to_text(gap),
        },
    }


def rank_rescue(query: str, lexical: Sequence[tuple[str, float]], semantic: Sequence[tuple[str, float]],
                title_table: Mapping[str, list[str]], neighbours: Neighbours, profile: Mapping,
                mode: str, work: Work | None = None) -> Ranked:
    """The whole method on explicit inputs; `profile` is a RESCUE_PROFILES entry."""
    work = Work() if work is None else work
    base = fuse_base(lexical, semantic, profile["base"])
    seeds, distinct_titles = select_seeds(query, title_table, base, profile["seeds"])
    gate = gate_decision(query, lexical, semantic, base, distinct_titles, mode, profile["gate"])
    base_top = profile["seeds"]["base_top"]
    if profile["expander"] is not None:
        base = expand_bonus(base, neighbours, profile["expander"], base_top, work)
    else:
        for hit in base:
            hit.rescored = hit.normalized
    lane: list[LaneHit] = []
    before_cap = 0
    if gate["fired"]:
        reached = traverse(seeds, neighbours, profile["lane"], work)
        lane, before_cap = rescue_lane(reached, {hit.id for hit in base}, profile["lane"]["cap"])
        if before_cap > len(lane):
            _stop(work, "lane_cap")
    if profile["combine"] == "append":
        final = append_final(base, lane, profile["final_score"]["offset"])
    else:
        final = fuse_final(base, lane, profile)
    return Ranked(base, lane, final, seeds, gate, work, before_cap)


def append_final(base: Sequence[BaseHit], lane: Sequence[LaneHit], offset: int) -> list[tuple[str, Fraction, bool]]:
    """Base block first in its (rescored) order, the lane below it; every score 1/(offset + rank)."""
    ids = [(hit.id, False) for hit in base] + [(hit.id, True) for hit in lane]
    return [(rid, Fraction(1, offset + rank), rescued) for rank, (rid, rescued) in enumerate(ids, start=1)]


def fuse_final(base: Sequence[BaseHit], lane: Sequence[LaneHit], profile: Mapping) -> list[tuple[str, Fraction, bool]]:
    """The ablation: the lane as a third RRF channel (weight w, its lane rank) over base and lane.

    At weight 0 the channel is skipped, so the list is the base exactly (a test proves it).
    """
    fusion = profile["fusion"]
    weight = Fraction(str(fusion["graph_weight"]))
    scores = {hit.id: hit.fused for hit in base}
    rescued = {hit.id: False for hit in base}
    if weight != 0:
        for hit in lane:
            scores[hit.id] = scores.get(hit.id, Fraction(0)) + weight / (fusion["k"] + hit.lane_rank)
            rescued.setdefault(hit.id, True)
    order = best_first(list(scores), scores.__getitem__, lambda rid: rid)
    return [(rid, scores[rid], rescued[rid]) for rid in order]

