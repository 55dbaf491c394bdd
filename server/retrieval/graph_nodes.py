"""What every graph family reads of a scope the same way: its nodes of one kind, the rows of those
that hold a live vector, its eligible relations of one kind, and the two page parts a walk over them
shows (a hit that carries its mass, the digest of the integer seeds). hipporag2, hipporag_ner and
linearrag build their tables from these; a new graph family starts here."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from protocols.route import GRAPH_NODE
from server.errors import ApiError
from server.retrieval import page_parts as parts
from server.retrieval.indexes import ScopeIndex, SpaceMatrix
from server.retrieval.request import VectorQuery


def nodes_of_kind(index: ScopeIndex, kind: str) -> list[str]:
    """The scope's node memories of `kind` (their `metadata.graph_node`), in the index's order."""
    return [rid for rid, node in index.nodes.items() if node.payload["metadata"][GRAPH_NODE] == kind]


def live_rows(space: SpaceMatrix, ids: Iterable[str]) -> tuple[list[str], np.ndarray]:
    """The ids, ascending, that hold a live vector in `space`, and their matrix rows."""
    kept = [rid for rid in sorted(ids) if rid in space.bindings and space.live[space.bindings[rid].row]]
    return kept, np.array([space.bindings[rid].row for rid in kept], dtype=np.int64)


def eligible_relations(index: ScopeIndex, kind: str, prefix: str = "") -> Iterator[tuple[str, str, str]]:
    """(source, target, evidence after `prefix`) of each eligible relation of `kind` whose evidence
    starts with `prefix`, by source then relation id."""
    for source, entries in sorted(index.adjacency.get((kind, "forward"), {}).items()):
        for relation_id, target in entries:
            relation = index.relations[relation_id]
            evidence = relation["provenance"]["evidence_ref"]
            if index.eligible(relation) and evidence.startswith(prefix):
                yield source, target, evidence[len(prefix):]


def seed_digest(units: Sequence[int] | np.ndarray) -> str:
    """SHA-256 of a walk's integer seeds as little-endian int64, in node order (the evaluator
    recomputes the seeds and compares this digest instead of a page listing every one)."""
    return hashlib.sha256(np.asarray(units, dtype="<i8").tobytes()).hexdigest()


def mass_hit(index: ScopeIndex, vq: VectorQuery, rid: str, rank: int, score: float, mass: int | None,
             **own) -> dict:
    """A hit of a walk's order: its integer mass (None on the dense order, where the score is the
    cosine), with the record and its embedding receipt; `own`: the family's own fields, by name."""
    record = index.records[rid]
    return {"rank": rank, "id": rid, "score": score, "mass": mass, "revision": record.revision,
            "payload": record.payload, "embedding_receipt": parts.receipt(index, vq, rid), **own}


def graph_spaces(index: ScopeIndex, space_id: str, code: str, nodes: str, prepared: str
                 ) -> tuple[SpaceMatrix, SpaceMatrix]:
    """The space of the passages and the space of the graph's nodes, refused (409 `code`, naming the
    `nodes` without vectors and how the graph is `prepared`) when the scope lacks either."""
    space, node_space = index.spaces.get(space_id), index.node_spaces.get(space_id)
    if space is None or node_space is None:
        raise ApiError(409, code, f"scope {index.scope} holds no {nodes} vectors in space {space_id}: {prepared}")
    return space, node_space
