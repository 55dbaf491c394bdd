"""How a graph family's page links each question entity to a graph node, checked alike for every
family that links (hipporag_ner's phrases, LinearRAG's entities): each entry names the entity and
its vector's receipt, a node of the graph, that node's cosine within the tolerance, and no node
nearer by more than twice the tolerance (a near tie may go either way)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from builders.embedding import vector_sha256
from evaluator.verification.failure import Findings


def link_failures(listed: Any, field: str, node_field: str, nodes: Sequence[str],
                  cosines_of: Callable[[np.ndarray], np.ndarray], entities: Sequence[tuple[str, np.ndarray]],
                  tolerance: float, expected: int) -> Findings:
    """The first difference of the page's `field` (a list of `expected` entries, one per entity,
    each naming its node under `node_field`) from the links recomputed over `nodes`."""
    if not isinstance(listed, list) or len(listed) != expected:
        yield None, field, f"{listed!r}: the question has {len(entities)} entities to link"
        return
    position: dict[Any, int] = {one: i for i, one in enumerate(nodes)}  # a page's node may be anything
    for j, (entry, (text, vector)) in enumerate(zip(listed, entities)):
        where = f"{field}[{j}]"
        if not isinstance(entry, dict) or entry.get("entity") != text or entry.get("vector_sha256") != vector_sha256(vector):
            yield None, where, f"{entry!r}: the question's entity is {text!r} with vector {vector_sha256(vector)}"
            return
        i = position.get(entry.get(node_field))
        if i is None:
            yield None, f"{where}.{node_field}", f"{text!r}: {entry.get(node_field)!r} is no node of the graph"
            return
        cosines = cosines_of(vector)
        cosine = entry.get("cosine")
        if not isinstance(cosine, float) or abs(cosine - cosines[i]) > tolerance:
            yield None, f"{where}.cosine", f"{text!r}: {cosine!r} to {nodes[i]!r}, recomputed {cosines[i]!r}"
            return
        best = int(np.argmax(cosines))
        if cosines[best] > cosines[i] + 2 * tolerance:
            yield (None, f"{where}.{node_field}", f"{text!r}: linked to {nodes[i]!r} ({cosines[i]!r}), but "
                                                  f"{nodes[best]!r} is nearer ({cosines[best]!r})")
            return

