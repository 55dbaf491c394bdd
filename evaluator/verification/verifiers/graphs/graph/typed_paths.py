"""The typed paths of a `graph` page, recomputed from the frozen relations (docs/design.md §7).

The expansion follows docs/design.md §7 and the budget rules the lab documents: breadth-first from the
anchors in rank order, level by level; each frontier node's positive-weight adjacency (both
directions, every kind) is examined in relation-id order; an examined entry costs one unit of
max_scan, a newly admitted edge one unit of max_edges, a newly reached node one unit of max_nodes;
the first budget that would be exceeded stops everything; reaching max_depth while a node of the
last level still has a positive-weight relation that was not admitted is `depth_limit`. Strengths
are exact rationals of the recomputed float64 cosines, so structural ties (the same node, lexical
affinity 1) stay ties. Written again from the specification, never shared with
server/families/graph/typed_paths.py.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluator.verification.exact import ZERO, Rational, rational
from evaluator.verification.recompute import Edge, constant


@dataclass(frozen=True)
class Path:
    """A walk from an anchor: exact strength, anchor rank and steps (relation id, direction, to)."""

    anchor: str
    anchor_rank: int
    strength: Rational
    steps: tuple[tuple[str, str, str], ...]

    @property
    def hops(self) -> int:
        return len(self.steps)


@dataclass
class Expansion:
    depth_of: dict[str, int]
    edges: dict[str, Edge]  # admitted, in admission order
    stop_reasons: list[str]
    adjacency_examined: int = 0


def expand(anchors: Sequence[str], adj: Mapping[str, list], edges: Mapping[str, Edge], weights: Mapping[str, float],
           limits: Mapping[str, int]) -> Expansion:
    result = Expansion(depth_of={a: 0 for a in anchors}, edges={}, stop_reasons=[])
    frontier = list(anchors)

    def positive(node):
        return [e for e in adj.get(node, ()) if weights.get(e[2], 0.0) > 0]

    for depth in range(1, limits["max_depth"] + 1):
        following = []
        for node in frontier:
            for relation_id, _direction, _kind, other in positive(node):
                if result.adjacency_examined == limits["max_scan"]:
                    result.stop_reasons.append("scan_limit")
                    return result
                result.adjacency_examined += 1
                if relation_id in result.edges:
                    continue
                if len(result.edges) == limits["max_edges"]:
                    result.stop_reasons.append("edge_limit")
                    return result
                if other not in result.depth_of:
                    if len(result.depth_of) == limits["max_nodes"]:
                        result.stop_reasons.append("node_limit")
                        return result
                    result.depth_of[other] = depth
                    following.append(other)
                result.edges[relation_id] = edges[relation_id]
        frontier = following
    # depth_limit: a node of the last level still has a positive-weight relation left unadmitted
    if any(entry[0] not in result.edges for node in frontier for entry in positive(node)):
        result.stop_reasons.append("depth_limit")
    return result


def affinity(cosine: float | None, profile: Mapping, lexical_seed: bool) -> Rational:
    rule = profile["affinity"]
    if lexical_seed:
        return constant(rule["lexical_seed_affinity"])
    value = rule["missing_embedding_cosine"] if cosine is None else cosine
    return constant(rule["base"]) + constant(rule["scale"]) * rational(max(value, 0.0))


def step_factor(kind: str, destination_affinity: Rational, profile: Mapping) -> Rational:
    return constant(profile["step_factor"]) * constant(profile["kind_weights"].get(kind, 0.0)) * destination_affinity


def anchor_strength(rank: int, profile: Mapping) -> Rational:
    rule = profile["anchor_strength"]
    return constant(rule["numerator"]) / (rule["offset"] + rank)


def better(a: Path, b: Path) -> bool:
    """Path preference: strength desc, hops asc, anchor rank asc, relation ids in order."""
    if a.strength != b.strength:
        return a.strength > b.strength
    key_a = (-a.strength, a.hops, a.anchor_rank, tuple(s[0] for s in a.steps))
    key_b = (-b.strength, b.hops, b.anchor_rank, tuple(s[0] for s in b.steps))
    return key_a < key_b


def strongest_paths(anchors: Sequence[str], expansion: Expansion, affinities: Mapping[str, Rational],
                    profile: Mapping, max_depth: int) -> dict[str, Path]:
    """Strongest walk of at most max_depth admitted edges to every reachable node.

    Layer j holds the best walk of exactly j steps to each node; a best (j+1)-step walk extends a
    best j-step walk, since every factor is positive.
    """
    incident: dict[str, list[tuple[Edge, str, str]]] = {}
    for edge in expansion.edges.values():
        incident.setdefault(edge.source, []).append((edge, "forward", edge.target))
        incident.setdefault(edge.target, []).append((edge, "backward", edge.source))
    layer = {a: Path(a, r, anchor_strength(r, profile), ()) for r, a in enumerate(anchors, start=1)}
    best = dict(layer)
    for _ in range(max_depth):
        following: dict[str, Path] = {}
        for node, path in layer.items():
            for edge, direction, other in incident.get(node, ()):
                factor = step_factor(edge.kind, affinities[other], profile)
                walk = Path(path.anchor, path.anchor_rank, path.strength * factor,
                            path.steps + ((edge.relation_id, direction, other),))
                if other not in following or better(walk, following[other]):
                    following[other] = walk
        for node, walk in following.items():
            if node not in best or better(walk, best[node]):
                best[node] = walk
        layer = following
    return best


def graph_order(paths: Mapping[str, Path]) -> list[str]:
    """Graph rank: strength desc, hops asc, anchor rank asc, record id asc."""
    return sorted(paths, key=lambda rid: (-paths[rid].strength, paths[rid].hops, paths[rid].anchor_rank, rid))


def final_graph_score(base_rank: int | None, graph_rank: int | None, profile: Mapping) -> Rational:
    rule = profile["final_score"]
    return _final_graph_score(base_rank, graph_rank, rule["base_weight"], rule["graph_weight"], rule["offset"])


@functools.lru_cache(maxsize=65536)
def _final_graph_score(base_rank: int | None, graph_rank: int | None, base_weight, graph_weight, offset) -> Rational:
    # a function of two ranks and the rule: the same pairs recur on every page
    score = ZERO
    if base_rank is not None:
        score += constant(base_weight) / (offset + base_rank)
    if graph_rank is not None:
        score += constant(graph_weight) / (offset + graph_rank)
    return score
