"""Independent check of a `graph` page (`typed_path_balanced_v1`, `typed_path_entity_v1`, docs/retrieval.md):
the anchors from the base list recomputed here, every hit's base and graph channels in exact
rationals, each proof walked step by step along prepared relations, and the whole expansion, its
strongest paths and the final ranking recomputed and compared (near ties of rounding allowed)."""

from __future__ import annotations

from collections.abc import Generator, Mapping

from evaluator.verification import recompute as rc
from evaluator.verification.exact import ZERO, Rational, rational
from evaluator.verification.failure import Failure, Finding, Findings
from evaluator.verification.hit_checks import check_exact, check_order
from evaluator.verification.page_checker import PageChecker
from evaluator.verification.verifiers.graphs.graph import typed_paths as tp


def base_list(checker: PageChecker, query: Mapping, profile: Mapping, seed: str
              ) -> tuple[list[str], Mapping[str, float]]:
    depth = profile["base_depth"]
    if seed == "lexical":
        return [rid for rid, _ in rc.ordered(checker.bm25_scores(query), depth)], {}
    _, order, _ = checker.fused(query, profile["seed_profiles"][seed])
    return order[:depth], checker.cosines(query)


def check_graph(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    profile = checker.profiles[spec["profile"]]
    seed = spec["seed"]
    hits = page["hits"]
    base, cos = base_list(checker, query, profile, seed)
    base_rank = {rid: r for r, rid in enumerate(base, start=1)}
    anchors = base[: profile["anchors"]]
    want_anchors = [{"id": rid, "revision": checker.revision_of[rid], "rank": r} for r, rid in enumerate(anchors, 1)]
    if page.get("anchors") != want_anchors:
        yield (None, "anchors", f"{page.get('anchors')}, recomputed top {profile['anchors']} of the base list "
                                f"{want_anchors}")
        return
    lexical_seed = seed == "lexical"
    # the query's exact affinity per node under the profile's rule, filled as nodes are asked for
    known = checker.work(query).derived.setdefault(("graph affinity", spec["profile"], lexical_seed), {})

    def affinity_of(rid: str) -> Rational:
        value = known.get(rid)
        if value is None:
            value = known[rid] = tp.affinity(cos.get(rid), profile, lexical_seed)
        return value

    returned = {r.get("id"): r for r in page.get("relations") or []}
    used: set[str] = set()
    proved: dict[str, Rational | None] = {}  # hit id -> exact strength of the path its proof shows
    for i, hit in enumerate(hits, start=1):
        channels = hit.get("channels") or {}
        b = (channels.get("base") or {}).get("rank")
        g = (channels.get("graph") or {}).get("rank")
        if b != base_rank.get(hit["id"]):
            yield i, "channels.base.rank", f"{b}, recomputed {base_rank.get(hit['id'])}"
        rule = profile["final_score"]
        values = {"base": ZERO if b is None else rational(rule["base_weight"]) / (rule["offset"] + b),
                  "graph": ZERO if g is None else rational(rule["graph_weight"]) / (rule["offset"] + g)}
        yield from check_exact(hit, i, values)
        proof = hit.get("proof")
        if g is None:
            if proof is not None:
                yield i, "proof", "a hit without a graph rank carries a proof"
            continue
        if proof is None:
            yield i, "proof", "a hit with a graph rank carries no proof"
            continue
        proved[hit["id"]] = yield from _check_proof(checker, hit, i, proof, want_anchors, profile, cos, lexical_seed,
                                                         affinity_of, returned, used)
    yield from check_order(hits, exact=True)
    if set(returned) != used:
        extra, missing = sorted(set(returned) - used), sorted(used - set(returned))
        yield None, "relations", f"relations returned but unused {extra[:3]}, used but not returned {missing[:3]}"
    for rid, rel in returned.items():
        edge = checker.edges.get(rid)
        if edge is None or rel.get("kind") != edge.kind or rel.get("revision") != checker.relation_revision[rid] \
                or (rel.get("source") or {}).get("id") != edge.source or (rel.get("target") or {}).get("id") != edge.target:
            yield None, f"relations[{rid}]", "not a prepared relation with that kind, revision and endpoints"
    yield from _check_expansion(checker, page, hits, spec, profile, anchors, base_rank, affinity_of, proved)


def _check_proof(checker: PageChecker, hit, i, proof, anchors, profile, cos, lexical_seed, affinity_of, returned, used
                 ) -> Generator[Finding, None, Rational | None]:
    """Walk the proof from its anchor; returns the exact recomputed strength of the path it shows
    (None when the proof is not a path), so the caller can tell a near tie from a wrong path."""
    anchor = proof.get("anchor") or {}
    rank = anchor.get("rank")
    if not isinstance(rank, int) or not 1 <= rank <= len(anchors):
        yield i, "proof.anchor.rank", f"{rank} is not an anchor rank"
        return None
    if anchor != anchors[rank - 1]:
        # the strength is derived from the rank, so an anchor id that is not the anchor of that
        # rank would let a path start anywhere
        yield i, "proof.anchor", f"{anchor} is not the page's anchor of rank {rank} {anchors[rank - 1]}"
        return None
    strength = tp.anchor_strength(rank, profile)
    node = anchor.get("id")
    steps = proof.get("steps") or []
    if proof.get("hops") != len(steps):
        yield i, "proof.hops", f"{proof.get('hops')} with {len(steps)} steps"
    for j, step in enumerate(steps):
        where = f"proof.steps[{j}]"
        edge = checker.edges.get(step.get("relation_id"))
        if edge is None:
            yield i, f"{where}.relation_id", f"{step.get('relation_id')} is not a prepared relation"
            return None
        used.add(edge.relation_id)
        if edge.relation_id not in returned:
            yield i, f"{where}.relation_id", f"{edge.relation_id} is not among the page's relations"
        direction = step.get("direction")
        ends = (edge.source, edge.target) if direction == "forward" else (edge.target, edge.source)
        if direction not in ("forward", "backward") or (step.get("from") or {}).get("id") != node \
                or ends[0] != node or (step.get("to") or {}).get("id") != ends[1]:
            yield i, where, f"does not continue the path at {node} along {edge.relation_id} {direction}"
            return None
        if step.get("relation_revision") != checker.relation_revision[edge.relation_id] \
                or step["from"].get("revision") != checker.revision_of[ends[0]] \
                or step["to"].get("revision") != checker.revision_of[ends[1]]:
            yield i, f"{where}.revision", "relation or endpoint revision is not the prepared one"
        node = ends[1]
        if step.get("kind") != edge.kind:
            yield i, f"{where}.kind", f"{step.get('kind')}, relation is {edge.kind}"
        weight = profile["kind_weights"].get(edge.kind, 0.0)
        if step.get("weight") != weight:
            yield i, f"{where}.weight", f"{step.get('weight')}, profile weight {weight}"
        value = affinity_of(node)
        aff = step.get("affinity") or {}
        if not lexical_seed:
            shown = aff.get("cosine")
            if not rc.near_tie(shown if shown is not None else float("nan"),
                               cos.get(node, float("nan")), rc.COSINE_TOLERANCE):
                yield i, f"{where}.affinity.cosine", f"{aff.get('cosine')}, recomputed {cos.get(node)!r}"
            receipt = aff.get("embedding_receipt") or {}
            if receipt.get("vector_sha256") != checker.frozen.doc_receipts[checker.doc_of[node]]:
                yield i, f"{where}.affinity.embedding_receipt", "is not the frozen vector of the destination"
        if not rc.near_tie(aff.get("value", float("nan")), float(value), rc.COSINE_TOLERANCE):
            yield i, f"{where}.affinity.value", f"{aff.get('value')}, recomputed {float(value)!r}"
        factor = tp.step_factor(edge.kind, value, profile)
        if not rc.near_tie(step.get("factor", float("nan")), float(factor), rc.COSINE_TOLERANCE):
            yield i, f"{where}.factor", f"{step.get('factor')}, recomputed {float(factor)!r}"
        strength *= factor
    if node != hit["id"]:
        yield i, "proof.steps", f"path ends at {node}, not at the hit {hit['id']}"
    if not rc.near_tie(proof.get("strength", float("nan")), float(strength), rc.COSINE_TOLERANCE):
        yield i, "proof.strength", f"{proof.get('strength')}, recomputed {float(strength)!r}"
    return strength


def _check_expansion(checker: PageChecker, page, hits, spec, profile, anchors, base_rank, affinity_of, proved) -> Findings:
    """The whole expansion, paths and final ranking recomputed and compared with the page."""
    expansion = tp.expand(anchors, checker.adjacency, checker.edges, profile["kind_weights"], spec["expansion"])
    if list(page.get("stop_reasons") or []) != expansion.stop_reasons:
        yield None, "stop_reasons", f"{page.get('stop_reasons')}, recomputed {expansion.stop_reasons}"
    budget_cut = any(reason != "depth_limit" for reason in expansion.stop_reasons)
    if (page.get("coverage") or {}).get("graph") is not (not budget_cut):
        yield (None, "coverage.graph", f"{(page.get('coverage') or {}).get('graph')} but the expansion "
                                       f"{'was' if budget_cut else 'was not'} cut by a budget")
    work = page.get("work") or {}
    for name, value in (("adjacency_examined", expansion.adjacency_examined),
                        ("nodes_admitted", len(expansion.depth_of))):
        if work.get(name) != value:
            yield None, f"work.{name}", f"{work.get(name)}, recomputed {value}"
    affinities = {rid: affinity_of(rid) for rid in expansion.depth_of}
    paths = tp.strongest_paths(anchors, expansion, affinities, profile, spec["expansion"]["max_depth"])
    order = tp.graph_order(paths)
    graph_rank = {rid: r for r, rid in enumerate(order, start=1)}
    candidates = set(base_rank) | set(graph_rank)
    final = {rid: tp.final_graph_score(base_rank.get(rid), graph_rank.get(rid), profile) for rid in candidates}
    want = sorted(final, key=lambda rid: (-final[rid], rid))[: spec["limit"]]
    have = [h["id"] for h in hits]
    ranked = [(rid, float(paths[rid].strength)) for rid in order]
    ambiguous = rc.near_tie_ids(ranked, rc.COSINE_TOLERANCE)
    swappable = rc.near_tie_neighbours(ranked, rc.COSINE_TOLERANCE)
    for i, hit in enumerate(hits, start=1):
        g = ((hit.get("channels") or {}).get("graph") or {}).get("rank")
        mine = graph_rank.get(hit["id"])
        # a near tie lets the graph rank be that of a near-tied neighbour, never any other
        if g != mine and g not in {graph_rank[other] for other in swappable.get(hit["id"], ())}:
            yield i, "channels.graph.rank", f"{g}, recomputed {mine}"
        proof, path = hit.get("proof"), paths.get(hit["id"])
        if proof is not None and path is not None:
            shown = [s.get("relation_id") for s in proof.get("steps") or []]
            if not rc.near_tie(proof.get("strength", float("nan")), float(path.strength), rc.COSINE_TOLERANCE):
                yield i, "proof.strength", f"{proof.get('strength')} is not the strongest path ({float(path.strength)!r})"
            elif shown != [s[0] for s in path.steps] and proved.get(hit["id"]) == path.strength:
                # another path is acceptable only when its exact strength differs from the
                # strongest by rounding; at an exactly equal strength the tie rules decide
                yield i, "proof.steps", f"path {shown}, preferred path {[s[0] for s in path.steps]}"
    differing = {a for a, b in zip(have, want) if a != b} | {b for a, b in zip(have, want) if a != b}
    if len(have) != len(want) or not differing <= ambiguous:
        first = rc.first_difference(have, want)
        yield (first + 1, "id", f"{have[first] if first < len(have) else None}, recomputed final ranking has "
                                f"{want[first] if first < len(want) else None}")


def graph_anchor_failures(query_id: str, name: str, pages: Mapping[str, Mapping], methods: Mapping[str, Mapping],
                          profiles: Mapping) -> list[Failure]:
    """The cross-method rule of a graph page (evaluator/verification/routes.py): its anchors are the
    top of its seed method's page (the protocol's method of the seed's profile), and at depth zero
    its ranking is that page's."""
    spec = methods[name]
    profile = profiles[spec["profile"]]
    seed_profile = profile["seed_profiles"][spec["seed"]]
    baseline = next((other for other, method in methods.items() if method["profile"] == seed_profile), None)
    if baseline is None or baseline not in pages:
        return []
    out = []
    top = [h["id"] for h in pages[baseline]["hits"][: profile["anchors"]]]
    anchors = [a["id"] for a in pages[name].get("anchors") or []]
    if anchors != top:
        out.append(Failure(query_id, name, None, "anchors", f"{anchors} differ from the top "
                                                            f"{profile['anchors']} of {baseline} {top}"))
    if spec["expansion"]["max_depth"] == 0:
        have = [h["id"] for h in pages[name]["hits"]]
        want = [h["id"] for h in pages[baseline]["hits"]]
        if have != want:
            out.append(Failure(query_id, name, None, "hits", f"depth zero ranking {have} differs from {baseline} {want}"))
    return out
