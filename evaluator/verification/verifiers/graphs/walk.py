"""Independent check of a `walk` page (`seeded_walk_v1`, docs/graph-v3.md; `entity_walk_v1`,
docs/graph-v4.md).

Recomputed from the frozen inputs with another algorithm than the server's: the base from this
package's own BM25, cosine and fusion; the mass of every record at every step by enumerating each
walk from each seed one by one (the server propagates a frontier level by level); neighbours from
the frozen relations. Every hit's base rank, channel contributions, walk rank, visit mass, proof
(seed mass and every inflow with its relation, source mass, source neighbour count and amount),
score, the order and the whole list must equal the recomputation exactly (rationals). A profile
with an entity step adds, at the steps it names, the amounts sent over the entity relations to
the neighbours that are not graph neighbours, each group with its own alpha and neighbour count.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.verification import recompute as rc
from evaluator.verification.exact import ZERO, Rational, decimal
from evaluator.verification.exact import text as _text
from evaluator.verification.failure import Failure, Findings
from evaluator.verification.fused_lists import base_list
from evaluator.verification.hit_checks import check_exact, check_order
from evaluator.verification.page_checker import PageChecker


def neighbours(checker: PageChecker, kinds) -> dict[str, dict[str, str]]:
    """The neighbour table over the relations of `kinds`, built once per campaign and set of kinds."""
    return checker.derived_table(("walk neighbours", tuple(kinds)), lambda: neighbour_table(checker, list(kinds)))


def neighbour_table(checker: PageChecker, kinds: list[str]) -> dict[str, dict[str, str]]:
    """node -> {neighbour: smallest relation id linking them} over the frozen relations of `kinds`."""
    table: dict[str, dict[str, str]] = {}
    for edge in checker.edges.values():
        if edge.kind not in kinds or edge.source == edge.target:
            continue
        for a, b in ((edge.source, edge.target), (edge.target, edge.source)):
            links = table.setdefault(a, {})
            if b not in links or edge.relation_id < links[b]:
                links[b] = edge.relation_id
    return table


def entity_table(checker: PageChecker, kinds: list[str], graph: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """The entity step's neighbour table: over the frozen relations of `kinds`, each record's
    neighbours that are not its graph neighbours, with the smallest relation id linking them."""
    table = neighbours(checker, kinds)
    return {node: {other: rid for other, rid in links.items() if other not in graph.get(node, {})}
            for node, links in table.items()}


Group = tuple[Mapping[str, Mapping[str, str]], Rational, int]  # (neighbour table, alpha, last step)


def groups_of(checker: PageChecker, profile: Mapping) -> tuple[dict, list[Group]]:
    """The graph neighbour table, and the step groups of a profile: the graph group (every step),
    then the entity step when the profile has one."""
    table = neighbours(checker, profile["graph"]["kinds"])
    groups: list[Group] = [(table, decimal(profile["alpha"]), profile["steps"])]
    if "entity_step" in profile:
        spec = profile["entity_step"]
        groups.append((entity_table(checker, spec["kinds"], table), decimal(spec["alpha"]), spec["up_to_step"]))
    return table, groups


def masses(seeds: Mapping[str, Rational], table: Mapping[str, Mapping[str, str]] | list[Group], steps: int,
           alpha: Rational | None = None) -> list[dict[str, Rational]]:
    """m_t for t = 0..steps, summing every walk of exactly t steps from every seed, walk by walk.
    `table` is one neighbour table spreading `alpha` at every step, or a list of step groups."""
    if alpha is not None:
        assert not isinstance(table, list), "alpha goes with one neighbour table"
        groups: list[Group] = [(table, alpha, steps)]
    else:
        assert isinstance(table, list), "without alpha, `table` is the step groups"
        groups = table
    by_step: list[dict[str, Rational]] = [{} for _ in range(steps + 1)]

    def follow(node: str, mass: Rational, t: int) -> None:
        by_step[t][node] = by_step[t].get(node, ZERO) + mass
        if t == steps:
            return
        for links_of, share_of, last in groups:
            links = links_of.get(node, {})
            if t + 1 > last or not links:
                continue
            share = share_of * mass / len(links)
            for other in links:
                follow(other, share, t + 1)

    for seed, mass in seeds.items():
        follow(seed, mass, 0)
    return by_step


def check_walk(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    profile = checker.profiles[spec["profile"]]
    hits = page["hits"]
    base, base_score, base_ranks = base_list(checker, query, profile["base"])
    base_rank = {rid: r for r, rid in enumerate(base, start=1)}
    seeds = {rid: base_score[rid] for rid in base[: profile["seeds"]]}
    want_anchors = [{"id": rid, "revision": checker.revision_of[rid], "rank": r, "mass": float(mass),
                     "mass_exact": _text(mass)} for r, (rid, mass) in enumerate(seeds.items(), start=1)]
    if page.get("anchors") != want_anchors:
        yield None, "anchors", f"{page.get('anchors')}, recomputed seeds {want_anchors}"
        return
    _, groups = groups_of(checker, profile)
    by_step = masses(seeds, groups, profile["steps"])
    visit: dict[str, Rational] = {}
    for step in by_step:
        for rid, mass in step.items():
            visit[rid] = visit.get(rid, ZERO) + mass
    walk_order = sorted(visit, key=lambda rid: (-visit[rid], rid))[: profile["walk_depth"]]
    walk_rank = {rid: r for r, rid in enumerate(walk_order, start=1)}
    fusion = profile["fusion"]
    weight, k = decimal(fusion["walk_weight"]), fusion["walk_k"]
    final = {rid: base_score.get(rid, ZERO) + (weight / (k + walk_rank[rid]) if rid in walk_rank else 0)
             for rid in set(base_rank) | set(walk_rank)}
    want = sorted(final, key=lambda rid: (-final[rid], rid))[: spec["limit"]]
    channels = profile["base"]["channels"]
    returned = {r.get("id"): r for r in page.get("relations") or []}
    used: set[str] = set()
    for i, hit in enumerate(hits, start=1):
        rid = hit["id"]
        if hit.get("base_rank") != base_rank.get(rid):
            yield i, "base_rank", f"{hit.get('base_rank')}, recomputed {base_rank.get(rid)}"
        values = {}
        ranks = base_ranks.get(rid, {})
        for channel in ("lexical", "semantic"):
            entry = (hit.get("channels") or {}).get(channel) or {}
            if entry.get("rank") != ranks.get(channel):
                yield i, f"channels.{channel}.rank", f"{entry.get('rank')}, recomputed {ranks.get(channel)}"
            rank = ranks.get(channel)
            values[channel] = (ZERO if rank is None
                               else decimal(channels[channel]["weight"]) / (profile["base"]["k"] + rank))
        entry = (hit.get("channels") or {}).get("walk") or {}
        w = walk_rank.get(rid)
        if entry.get("rank") != w:
            yield i, "channels.walk.rank", f"{entry.get('rank')}, recomputed {w}"
        if w is not None and entry.get("raw_score") != float(visit[rid]):
            yield (i, "channels.walk.raw_score", f"{entry.get('raw_score')} is not the recomputed visit mass "
                                                 f"{float(visit[rid])}")
        values["walk"] = ZERO if w is None else weight / (k + w)
        yield from check_exact(hit, i, values)
        proof = hit.get("proof")
        if w is None:
            if proof is not None:
                yield i, "proof", "a hit without a walk rank carries a proof"
            continue
        if proof is None:
            yield i, "proof", "a hit with a walk rank carries no proof"
            continue
        yield from _check_proof(checker, i, rid, w, proof, visit, seeds, by_step, groups, used)
    yield from check_order(hits, exact=True)
    have = [hit["id"] for hit in hits]
    if have != want:
        first = rc.first_difference(have, want)
        yield (first + 1, "id", f"{have[first] if first < len(have) else None}, recomputed "
                                f"{want[first] if first < len(want) else None}")
    if set(returned) != used:
        extra, missing = sorted(set(returned) - used), sorted(used - set(returned))
        yield None, "relations", f"relations returned but unused {extra[:3]}, used but not returned {missing[:3]}"
    for relation_id, rel in returned.items():
        edge = checker.edges.get(relation_id)
        if edge is None or not _same_relation(rel, edge, checker.relation_revision[relation_id]):
            yield None, f"relations[{relation_id}]", "not a prepared relation with that kind, revision and endpoints"
        elif rel.get("provenance") != checker.provenance.get(relation_id):
            yield (None, f"relations[{relation_id}].provenance", "is not the frozen relation's provenance (what "
                                                                "produced it)")


def _same_relation(rel: Mapping, edge, revision: int) -> bool:
    return (rel.get("kind") == edge.kind and rel.get("revision") == revision
            and (rel.get("source") or {}).get("id") == edge.source and (rel.get("target") or {}).get("id") == edge.target)


def _check_proof(checker: PageChecker, i, rid, walk_rank, proof, visit, seeds, by_step, groups, used) -> Findings:
    if proof.get("walk_rank") != walk_rank:
        yield i, "proof.walk_rank", f"{proof.get('walk_rank')}, recomputed {walk_rank}"
    if proof.get("visit_mass_exact") != _text(visit[rid]) or proof.get("visit_mass") != float(visit[rid]):
        yield i, "proof.visit_mass", f"{proof.get('visit_mass_exact')}, recomputed {_text(visit[rid])}"
    seed_mass = seeds.get(rid)
    if proof.get("seed_mass_exact") != (None if seed_mass is None else _text(seed_mass)):
        yield (i, "proof.seed_mass_exact", f"{proof.get('seed_mass_exact')}, recomputed "
                                           f"{None if seed_mass is None else _text(seed_mass)}")
    want = []
    for step in range(1, len(by_step)):
        for source in sorted(by_step[step - 1]):
            for table, alpha, last in groups:
                links = table.get(source, {})
                if step > last or rid not in links:
                    continue
                mass = by_step[step - 1][source]
                relation_id = links[rid]
                edge = checker.edges[relation_id]
                want.append({
                    "step": step, "from": {"id": source, "revision": checker.revision_of[source]},
                    "relation_id": relation_id, "relation_revision": checker.relation_revision[relation_id],
                    "kind": edge.kind, "direction": "forward" if edge.source == source else "backward",
                    "from_mass": float(mass), "from_mass_exact": _text(mass), "from_neighbours": len(links),
                    "amount": float(alpha * mass / len(links)), "amount_exact": _text(alpha * mass / len(links)),
                })
    have = proof.get("inflow")
    if have != want:
        at = rc.first_difference(have or [], want)
        yield (i, "proof.inflow", f"entry {at}: {(have or [None] * (at + 1))[at] if at < len(have or []) else None}, "
                                  f"recomputed {want[at] if at < len(want) else None}")
        return
    total = (seed_mass or ZERO) + sum((rc.parse_fraction(e["amount_exact"], "amount_exact") for e in want),
                                             ZERO)
    if total != visit[rid]:  # the proof's parts must add up to the mass it proves
        yield i, "proof.inflow", f"seed mass and inflows add up to {total}, not the visit mass {visit[rid]}"
    used.update(entry["relation_id"] for entry in want)


def walk_seed_failures(query_id: str, name: str, pages: Mapping[str, Mapping], methods: Mapping[str, Mapping],
                       profiles: Mapping) -> list[Failure]:
    """The cross-method rule of a walk page (evaluator/verification/routes.py): its seeds are the top
    of its base method's page (the protocol's method of the base's profile, docs/graph-v3.md)."""
    profile = profiles[methods[name]["profile"]]
    baseline = next((other for other, method in methods.items() if method["profile"] == profile["base"]["profile"]),
                    None)
    if baseline is None or baseline not in pages:
        return []
    top = [h["id"] for h in pages[baseline]["hits"][: profile["seeds"]]]
    seeds = [a["id"] for a in pages[name].get("anchors") or []]
    if seeds == top:
        return []
    return [Failure(query_id, name, None, "anchors", f"{seeds} differ from the top {profile['seeds']} of {baseline} {top}")]
