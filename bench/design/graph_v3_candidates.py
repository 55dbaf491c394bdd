"""Candidate second-hop methods of the graph-v3 development harness (`lab bench graph-v3-dev`).

Prototypes, label-free: each reads the query text, the query vector, document titles and texts,
vectors and relations, never a judgment. Each returns the ranking (record ids, best first, at most
100) and the set of records its expansion proposed (for the "where are the misses" shares).
Scores are exact rationals (fractions) and ties break on record id, as the server's methods do.
The method frozen from them (seeded_walk_v1) runs through the server's code (`server/families/walk/`), not through these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from bench.design.graph_v3_data import DevCorpus, DevQuery
from protocols.routes import PROFILES
from server.retrieval.bm25 import bm25, query_terms
from server.retrieval.cosine import cosine, prepare_query
from server.retrieval.fusion import fuse
from server.routes import search

DEPTH = 100


@dataclass(frozen=True)
class Result:
    ranking: list[str]
    proposed: frozenset[str] = frozenset()


Candidate = Callable[[DevCorpus, DevQuery], Result]


def hybrid_body(corpus: DevCorpus, query: DevQuery, profile: str) -> dict:
    return {"query": query.question, "query_vector": [float(x) for x in query.vector],
            "space_id": corpus.space_id, "limit": DEPTH, "profile": profile}


def base_scores(corpus: DevCorpus, query: DevQuery) -> dict[str, Fraction]:
    """weighted_rrf_v2 over the best 100 of each channel, exact."""
    profile = PROFILES["weighted_rrf_v2"]
    space = corpus.index.spaces[corpus.space_id]
    lexical = bm25(corpus.index, query.question, DEPTH)
    semantic = cosine(corpus.index, prepare_query(space, query.vector), DEPTH, -1.0)
    fused = fuse(profile["fusion"], profile, {"lexical": (lexical.ids, lexical.scores), "semantic": (semantic.ids, semantic.scores)})
    return {entry.id: Fraction(*entry.score) for entry in fused[:DEPTH]}


def ordered(scores: dict[str, Fraction]) -> list[str]:
    return sorted(scores, key=lambda rid: (-scores[rid], rid))[:DEPTH]


def route(name: str, **extra) -> Candidate:
    """A method already served: the page's ranking."""
    def run(corpus: DevCorpus, query: DevQuery) -> Result:
        if name in ("hybrid", "walk"):
            body = hybrid_body(corpus, query, extra["profile"])
        else:
            body = hybrid_body(corpus, query, extra["profile"]) | {"seed": extra["seed"]}
        page = search(corpus.index, name, body)
        graph = frozenset(hit["id"] for hit in page["hits"]
                          if hit.get("proof") and (hit["proof"].get("hops") or hit["proof"].get("inflow")))
        return Result([hit["id"] for hit in page["hits"]], graph)
    return run


# ---------------------------------------------------------------------------- reformulation


def anchor_text(corpus: DevCorpus, anchor: str, part: str, question: str) -> str:
    title = corpus.titles[anchor]
    text = corpus.texts[anchor]
    if part == "title":
        return title
    if part == "text":
        return text
    if part == "body":  # the paragraph without its title line
        return text[len(title) + 1:]
    if part == "novel":  # only the anchor's terms the question lacks: what the question still needs
        asked = set(query_terms(question))
        return " ".join(t for t in query_terms(text[len(title) + 1:]) if t not in asked)
    raise ValueError(part)


def reformulate(anchors: int = 3, part: str = "body", depth: int = 10, weight: str = "1/4", k: int = 2,
                decay: bool = True, combine: str = "fuse", keep: int = 8) -> Candidate:
    """Second hop: for each of the top `anchors` base documents, search again with the question
    plus (part of) the anchor; each reformulated list (anchors themselves dropped, cut at depth)
    adds weight / (k + rank) (over the anchor's base rank when decay) to a record's base score
    (combine fuse), or its best new records take the slots below the base's top `keep` (insert)."""
    w = Fraction(weight)

    def run(corpus: DevCorpus, query: DevQuery) -> Result:
        scores = base_scores(corpus, query)
        base = ordered(scores)
        tops = base[:anchors]
        extra: dict[str, Fraction] = {}
        for a_rank, anchor in enumerate(tops, start=1):
            text = query.question + " " + anchor_text(corpus, anchor, part, query.question)
            found = [rid for rid in bm25(corpus.index, text, depth + anchors).ids if rid not in tops][:depth]
            for rank, rid in enumerate(found, start=1):
                part_score = w / (k + rank) / (a_rank if decay else 1)
                extra[rid] = extra.get(rid, Fraction(0)) + part_score
        if combine == "fuse":
            final = dict(scores)
            for rid, value in extra.items():
                final[rid] = final.get(rid, Fraction(0)) + value
            return Result(ordered(final), frozenset(extra))
        # insert: the base's top `keep` stay; below them, second-hop records not already placed
        # (best extra first) and then the rest of the base
        head = base[:keep]
        new = [rid for rid in sorted(extra, key=lambda r: (-extra[r], r)) if rid not in head]
        slots = 10 - keep
        chosen = new[:slots]
        tail = [rid for rid in base[keep:] if rid not in chosen]
        return Result((head + chosen + tail)[:DEPTH], frozenset(extra))
    return run


# ---------------------------------------------------------------------------- personalized PageRank


def ppr(seeds: int = 10, alpha: float = 0.5, iterations: int = 20, weight: str = "1/4", k: int = 2) -> Candidate:
    """HippoRAG-style without an LLM: PageRank over the undirected title graph, restarts spread
    over the top `seeds` base documents by their fused score; the PPR rank fused into the base."""
    w = Fraction(weight)

    def run(corpus: DevCorpus, query: DevQuery) -> Result:
        scores = base_scores(corpus, query)
        base = ordered(scores)
        restart = {rid: float(scores[rid]) for rid in base[:seeds]}
        total = sum(restart.values())
        restart = {rid: v / total for rid, v in restart.items()}
        mass = dict(restart)
        for _ in range(iterations):
            nxt = {rid: (1 - alpha) * v for rid, v in restart.items()}
            for rid, v in mass.items():
                out = corpus.neighbours.get(rid)
                if not out:
                    nxt[rid] = nxt.get(rid, 0.0) + alpha * v
                    continue
                share = alpha * v / len(out)
                for nb in out:
                    nxt[nb] = nxt.get(nb, 0.0) + share
            mass = nxt
        graph_order = sorted(mass, key=lambda r: (-mass[r], r))[:DEPTH]
        final = dict(scores)
        for rank, rid in enumerate(graph_order, start=1):
            final[rid] = final.get(rid, Fraction(0)) + w / (k + rank)
        return Result(ordered(final), frozenset(set(graph_order) - set(base[:seeds])))
    return run




def multi_hop(corpus: DevCorpus, query: DevQuery, gate: str) -> bool:
    """Label-free gates: `disagree` = the two channels' top records differ; `long` = at least 12
    query terms; `relational` = the question holds a relation cue of the rescue family's list."""
    if gate == "disagree":
        space = corpus.index.spaces[corpus.space_id]
        lexical = bm25(corpus.index, query.question, 1).ids
        semantic = cosine(corpus.index, prepare_query(space, query.vector), 1, -1.0).ids
        return lexical[:1] != semantic[:1]
    if gate == "long":
        return len(query_terms(query.question)) >= 12
    if gate == "relational":
        from protocols.families.lists.rescue import RELATION_CUES
        return bool(set(query_terms(query.question)) & set(RELATION_CUES))
    raise ValueError(gate)


def walk(seeds: int = 10, steps: int = 2, alpha: str = "1/2", weight: str = "1/4", k: int = 2,
         exclude_seeds: bool = False, gate: str = "none") -> Candidate:
    """Truncated personalized PageRank, exact: mass starts on the top `seeds` base documents in
    proportion to their fused score and spreads `steps` times over the undirected title graph
    (each step keeps alpha of the mass moving, split evenly over the neighbours); the visit mass
    ranks the graph list, fused into the base as weight / (k + rank)."""
    a, w = Fraction(alpha), Fraction(weight)

    def run(corpus: DevCorpus, query: DevQuery) -> Result:
        scores = base_scores(corpus, query)
        base = ordered(scores)
        if gate != "none" and not multi_hop(corpus, query, gate):
            return Result(base)
        frontier = {rid: scores[rid] for rid in base[:seeds]}
        visit = dict(frontier)
        for _ in range(steps):
            moved: dict[str, Fraction] = {}
            for rid, mass in frontier.items():
                out = corpus.neighbours.get(rid)
                if not out:
                    continue
                share = a * mass / len(out)
                for nb in out:
                    moved[nb] = moved.get(nb, Fraction(0)) + share
            for rid, mass in moved.items():
                visit[rid] = visit.get(rid, Fraction(0)) + mass
            frontier = moved
        if exclude_seeds:
            for rid in base[:seeds]:
                visit.pop(rid, None)
        graph_order = sorted(visit, key=lambda r: (-visit[r], r))[:DEPTH]
        final = dict(scores)
        for rank, rid in enumerate(graph_order, start=1):
            final[rid] = final.get(rid, Fraction(0)) + w / (k + rank)
        return Result(ordered(final), frozenset(set(graph_order) - set(base[:seeds])))
    return run



def reform_lanes(corpus: DevCorpus, query: DevQuery, base: list[str], anchors: int, part: str, depth: int,
                 weight: Fraction, k: int, decay: bool) -> dict[str, Fraction]:
    tops = base[:anchors]
    extra: dict[str, Fraction] = {}
    for a_rank, anchor in enumerate(tops, start=1):
        text = query.question + " " + anchor_text(corpus, anchor, part, query.question)
        found = [rid for rid in bm25(corpus.index, text, depth + anchors).ids if rid not in tops][:depth]
        for rank, rid in enumerate(found, start=1):
            extra[rid] = extra.get(rid, Fraction(0)) + weight / (k + rank) / (a_rank if decay else 1)
    return extra


def walk_mass(corpus: DevCorpus, scores: dict[str, Fraction], base: list[str], seeds: int, steps: int,
              alpha: Fraction) -> dict[str, Fraction]:
    frontier = {rid: scores[rid] for rid in base[:seeds]}
    visit = dict(frontier)
    for _ in range(steps):
        moved: dict[str, Fraction] = {}
        for rid, mass in frontier.items():
            out = corpus.neighbours.get(rid)
            if not out:
                continue
            share = alpha * mass / len(out)
            for nb in out:
                moved[nb] = moved.get(nb, Fraction(0)) + share
        for rid, mass in moved.items():
            visit[rid] = visit.get(rid, Fraction(0)) + mass
        frontier = moved
    return visit


def mix(anchors: int = 3, part: str = "body", depth: int = 10, reform_weight: str = "1/4", k: int = 2,
        decay: bool = True, seeds: int = 10, steps: int = 1, alpha: str = "1/2", walk_weight: str = "1/4",
        walk_k: int = 2, walk_depth: int = 100, gate: str = "none") -> Candidate:
    """Base + reformulated BM25 lanes (reform_weight) + a walk lane (walk_weight), all fused."""
    rw, ww, a = Fraction(reform_weight), Fraction(walk_weight), Fraction(alpha)

    def run(corpus: DevCorpus, query: DevQuery) -> Result:
        scores = base_scores(corpus, query)
        base = ordered(scores)
        final = dict(scores)
        proposed: set[str] = set()
        if rw:
            extra = reform_lanes(corpus, query, base, anchors, part, depth, rw, k, decay)
            proposed |= set(extra)
            for rid, value in extra.items():
                final[rid] = final.get(rid, Fraction(0)) + value
        if ww:
            visit = walk_mass(corpus, scores, base, seeds, steps, a)
            order = sorted(visit, key=lambda r: (-visit[r], r))[:walk_depth]
            proposed |= set(order) - set(base[:seeds])
            for rank, rid in enumerate(order, start=1):
                final[rid] = final.get(rid, Fraction(0)) + ww / (walk_k + rank)
        return Result(ordered(final), frozenset(proposed))
    return run


FAMILIES: dict[str, Callable[..., Candidate]] = {"reform": reformulate, "ppr": ppr, "walk": walk, "mix": mix}

CANDIDATES: dict[str, Candidate] = {
    "weighted_rrf_v2": route("hybrid", profile="weighted_rrf_v2"),
    "graph_hybrid_balanced": route("graph", profile="typed_path_balanced_v1", seed="hybrid"),
    "seeded_walk_v1": route("walk", profile="seeded_walk_v1"),  # the frozen method, served by server/families/walk/
}


def _value(text: str) -> int | float | bool | str:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def candidate(spec: str) -> Candidate:
    """A named candidate, or FAMILY(key=value,...), e.g. `ppr(seeds=10,alpha=0.5,weight=1/4)`."""
    if spec in CANDIDATES:
        return CANDIDATES[spec]
    family, _, rest = spec.partition("(")
    if family not in FAMILIES or not rest.endswith(")"):
        raise ValueError(f"unknown candidate {spec!r}: a name of {sorted(CANDIDATES)} or FAMILY(k=v,...) "
                         f"with FAMILY one of {sorted(FAMILIES)}")
    params = {}
    for item in filter(None, rest[:-1].split(",")):
        key, _, value = item.partition("=")
        params[key.strip()] = _value(value.strip())
    return FAMILIES[family](**params)
