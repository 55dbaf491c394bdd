"""Candidate methods of the graph-v4 development harness (`lab bench graph-v4-dev`).

Prototypes over the title graph plus the entity relations (bench/design/graph_v4_data.py), label-free:
each reads the query text and vector, the two channels, titles, texts and relations, never a
judgment. Each returns the ranking (record ids, best first, at most 100) and the records its graph
part proposed. Exact fractions, ties by record id, as the server's methods.

Families (FAMILY(key=value,...)):
- `ewalk`: the v3 seeded walk (truncated personalized PageRank from the top base records, fused
  back as weight/(k + walk rank)) over the title graph and the entity relations together
  (`graph=union`), or the entity relations alone (`graph=entity`).
- `lanes`: the v3 walk over the title graph as it is, plus a second walk over the entity relations
  fused as its own lane (`entity_weight`).
Both take the entity policy variant: `names` (max documents of a shared name, 0 = off), `titles`
(max titles holding a title part, 0 = off), `words` (max key words).
v3's names (`weighted_rrf_v2`, `graph_hybrid_balanced`, `seeded_walk_v1`) run as served; a frozen
v4 profile runs as served too (`route`), over the frozen builder's relations in the index.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import partial

from bench.design import graph_v3_candidates as v3
from bench.design.graph_v3_data import DevQuery
from bench.design.graph_v4_data import V4Corpus, entity_table, variant_policy

DEPTH = v3.DEPTH
Result = v3.Result
Candidate = Callable[[V4Corpus, DevQuery], Result]
Table = dict[str, set[str]]


def walk_visit(scores: dict[str, Fraction], base: list[str], tables: list[Table], seeds: int, steps: int,
               alpha: Fraction) -> dict[str, Fraction]:
    """Visit masses of the truncated walk from the top `seeds` base records over the union of
    `tables` (each record's neighbours: the distinct other endpoints in any of them)."""
    frontier = {rid: scores[rid] for rid in base[:seeds]}
    visit = dict(frontier)
    for _ in range(steps):
        moved: dict[str, Fraction] = {}
        for rid, mass in frontier.items():
            out: set[str] = set()
            for table in tables:
                out |= table.get(rid, set())
            out.discard(rid)
            if not out:
                continue
            share = alpha * mass / len(out)
            for nb in out:
                moved[nb] = moved.get(nb, Fraction(0)) + share
        for rid, mass in moved.items():
            visit[rid] = visit.get(rid, Fraction(0)) + mass
        frontier = moved
    return visit


def _fuse_rank(final: dict[str, Fraction], visit: dict[str, Fraction], weight: Fraction, k: int,
               depth: int = DEPTH) -> list[str]:
    order = sorted(visit, key=lambda r: (-visit[r], r))[:depth]
    for rank, rid in enumerate(order, start=1):
        final[rid] = final.get(rid, Fraction(0)) + weight / (k + rank)
    return order


def ewalk(seeds: int = 4, steps: int = 2, alpha: str = "1/2", weight: str = "3/4", k: int = 2,
          graph: str = "union", names: int | None = None, titles: int | None = None,
          words: int | None = None) -> Candidate:
    a, w = Fraction(alpha), Fraction(weight)
    policy = variant_policy(names, titles, words)

    def run(corpus: V4Corpus, query: DevQuery) -> Result:
        scores = v3.base_scores(corpus.dev, query)
        base = v3.ordered(scores)
        entity = entity_table(corpus, policy)
        tables = [entity] if graph == "entity" else [corpus.dev.neighbours, entity]
        visit = walk_visit(scores, base, tables, seeds, steps, a)
        final = dict(scores)
        order = _fuse_rank(final, visit, w, k)
        return Result(v3.ordered(final), frozenset(set(order) - set(base[:seeds])))
    return run


def lanes(seeds: int = 4, steps: int = 2, alpha: str = "1/2", weight: str = "3/4", k: int = 2,
          entity_weight: str = "1/4", entity_seeds: int | None = None, entity_steps: int = 1,
          names: int | None = None, titles: int | None = None, words: int | None = None) -> Candidate:
    """v3's walk lane over the title graph plus an entity walk lane of its own weight."""
    a, w, ew = Fraction(alpha), Fraction(weight), Fraction(entity_weight)
    policy = variant_policy(names, titles, words)

    def run(corpus: V4Corpus, query: DevQuery) -> Result:
        scores = v3.base_scores(corpus.dev, query)
        base = v3.ordered(scores)
        final = dict(scores)
        title_visit = walk_visit(scores, base, [corpus.dev.neighbours], seeds, steps, a)
        order = _fuse_rank(final, title_visit, w, k)
        entity_visit = walk_visit(scores, base, [entity_table(corpus, policy)], entity_seeds or seeds,
                                  entity_steps, a)
        entity_order = _fuse_rank(final, entity_visit, ew, k)
        proposed = (set(order) | set(entity_order)) - set(base[:seeds])
        return Result(v3.ordered(final), frozenset(proposed))
    return run


def hop(anchors: int = 4, graph: str = "union", order: str = "cos", weight: str = "3/4", k: int = 2,
        depth: int = 100, title_walk: bool = False, names: int | None = None, titles: int | None = None,
        words: int | None = None) -> Candidate:
    """One hop from the top `anchors` base records over `graph` (title, entity or union); the
    records reached (anchors excluded) ordered by `order`: `cos` (the query's cosine with the
    record), `mass` (one walk step's mass: the anchor's fused score over its neighbour count,
    summed), `mass_cos` (mass times (1 + cos)/2), `count` (how many anchors reach it, then cos);
    fused as weight/(k + rank). `title_walk` adds v3's walk lane over the title graph first."""
    w = Fraction(weight)
    policy = variant_policy(names, titles, words)

    def run(corpus: V4Corpus, query: DevQuery) -> Result:
        scores = v3.base_scores(corpus.dev, query)
        base = v3.ordered(scores)
        final = dict(scores)
        proposed: set[str] = set()
        if title_walk:
            visit = walk_visit(scores, base, [corpus.dev.neighbours], 4, 2, Fraction(1, 2))
            proposed |= set(_fuse_rank(final, visit, Fraction(3, 4), 2))
        tables = {"title": [corpus.dev.neighbours], "entity": [entity_table(corpus, policy)],
                  "union": [corpus.dev.neighbours, entity_table(corpus, policy)]}[graph]
        tops = base[:anchors]
        mass: dict[str, Fraction] = {}
        count: dict[str, int] = {}
        for a in tops:
            out: set[str] = set()
            for table in tables:
                out |= table.get(a, set())
            out -= set(tops)
            for rid in out:
                mass[rid] = mass.get(rid, Fraction(0)) + scores[a] / len(out)
                count[rid] = count.get(rid, 0) + 1
        q = query.vector.astype("float64")
        q = q / float((q @ q) ** 0.5)
        cos = {rid: float(corpus.vectors[rid] @ q) for rid in mass}
        key = {"cos": lambda r: (-cos[r], r),
               "mass": lambda r: (-mass[r], r),
               "mass_cos": lambda r: (-(float(mass[r]) * (1 + cos[r]) / 2), r),
               "count": lambda r: (-count[r], -cos[r], r)}[order]
        ranked = sorted(mass, key=key)[:depth]
        for rank, rid in enumerate(ranked, start=1):
            final[rid] = final.get(rid, Fraction(0)) + w / (k + rank)
        proposed |= set(ranked)
        return Result(v3.ordered(final), frozenset(proposed - set(tops)))
    return run


def twalk(seeds: int = 4, steps: int = 2, alpha: str = "1/2", entity_alpha: str = "1/4", weight: str = "3/4",
          k: int = 2, names: int | None = None, titles: int | None = None, words: int | None = None,
          order: str = "mass", exclude_seeds: bool = False, entity_steps: int | None = None) -> Candidate:
    """The v3 walk with two kinds of step: a record sends alpha * mass / n_title to each of its
    title-graph neighbours and entity_alpha * mass / n_entity to each of its entity neighbours that
    are not title neighbours (each group split evenly), so the title graph spreads as in v3 and
    the entity relations add mass of their own."""
    a, ea, w = Fraction(alpha), Fraction(entity_alpha), Fraction(weight)
    policy = variant_policy(names, titles, words)

    def run(corpus: V4Corpus, query: DevQuery) -> Result:
        scores = v3.base_scores(corpus.dev, query)
        base = v3.ordered(scores)
        title, entity = corpus.dev.neighbours, entity_table(corpus, policy)
        frontier = {rid: scores[rid] for rid in base[:seeds]}
        visit = dict(frontier)
        for step in range(1, steps + 1):
            moved: dict[str, Fraction] = {}
            for rid, mass in frontier.items():
                t_out = title.get(rid, set()) - {rid}
                e_out = set() if entity_steps is not None and step > entity_steps else \
                    entity.get(rid, set()) - t_out - {rid}
                for out, part in ((t_out, a), (e_out, ea)):
                    if out:
                        share = part * mass / len(out)
                        for nb in out:
                            moved[nb] = moved.get(nb, Fraction(0)) + share
            for rid, mass in moved.items():
                visit[rid] = visit.get(rid, Fraction(0)) + mass
            frontier = moved
        final = dict(scores)
        if exclude_seeds:
            for rid in base[:seeds]:
                visit.pop(rid, None)
        if order != "mass":
            q = query.vector.astype("float64")
            q = q / float((q @ q) ** 0.5)
            cos = {rid: Fraction(max(float(corpus.vectors[rid] @ q), 0.0)) for rid in visit}
            if order == "mass_cos":
                visit = {rid: m * (1 + cos[rid]) / 2 for rid, m in visit.items()}
            elif order == "mass_cos1":
                visit = {rid: m * cos[rid] for rid, m in visit.items()}
            elif order == "mass_cos2":
                visit = {rid: m * cos[rid] * cos[rid] for rid, m in visit.items()}
            elif order == "rrf":
                by_mass = sorted(visit, key=lambda r: (-visit[r], r))
                by_cos = sorted(visit, key=lambda r: (-cos[r], r))
                visit = {rid: Fraction(0) for rid in visit}
                for lst in (by_mass, by_cos):
                    for rank, rid in enumerate(lst, start=1):
                        visit[rid] += Fraction(1, 2 + rank)
        ranked = _fuse_rank(final, visit, w, k)
        return Result(v3.ordered(final), frozenset(set(ranked) - set(base[:seeds])))
    return run


def served(route: str, **fields) -> Candidate:
    """A method the server serves, over the index (title graph + the frozen entity relations)."""
    inner = v3.route(route, **fields)
    return lambda corpus, query: inner(corpus.dev, query)


FAMILIES: dict[str, Callable[..., Candidate]] = {"ewalk": ewalk, "lanes": lanes, "hop": hop, "twalk": twalk}

def _on_dev(fn: Callable, corpus, query):
    return fn(corpus.dev, query)


CANDIDATES: dict[str, Candidate] = {name: partial(_on_dev, fn) for name, fn in v3.CANDIDATES.items()}
# the frozen method, served by server/families/walk/ over the frozen builder's relations in the index
CANDIDATES["entity_walk_v1"] = served("walk", profile="entity_walk_v1")


def candidate(spec: str) -> Candidate:
    """A named candidate, or FAMILY(key=value,...) of FAMILIES."""
    if spec in CANDIDATES:
        return CANDIDATES[spec]
    family, _, rest = spec.partition("(")
    if family not in FAMILIES or not rest.endswith(")"):
        raise ValueError(f"unknown candidate {spec!r}: a name of {sorted(CANDIDATES)} or FAMILY(k=v,...) "
                         f"with FAMILY one of {sorted(FAMILIES)}")
    params = {}
    for item in filter(None, rest[:-1].split(",")):
        key, _, value = item.partition("=")
        params[key.strip()] = v3._value(value.strip())
    return FAMILIES[family](**params)
