"""What the two HippoRAG routes' pages share: the ranked hits, the graph's size and the envelope.

A hit carries its integer mass on the PageRank order (its score the mass's share of the whole) and
None on the dense order (its score the cosine), so the evaluator can check either exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from server.families.hipporag2.graph_table import GraphTable
from server.families.hipporag2.ranking import Ranked
from server.retrieval import page_parts as parts
from server.retrieval.graph_nodes import mass_hit, seed_digest
from server.retrieval.request import Search, VectorQuery


def hits(index, vq: VectorQuery, table: GraphTable, ranked: Ranked, dense: np.ndarray, grid_bits: int) -> list[dict]:
    grid = float(1 << grid_bits)
    dense_of = {} if ranked.mass is not None else dict(zip(table.passages, dense.tolist()))
    return [mass_hit(index, vq, rid, i, dense_of[rid] if mass is None else mass / grid, mass)
            for i, (rid, mass) in enumerate(ranked.order, start=1)]


def graph_size(table: GraphTable) -> dict:
    return {"passages": len(table.passages), "phrases": len(table.walk.nodes) - len(table.passages),
            "facts": len(table.facts), "edges": table.edges}


def seeds_and_walk(ranked: Ranked) -> dict:
    """The section's tail: the dense range and digest, the phrase seeds, the iteration count and
    the last step's change (both 0 on the dense order)."""
    found = ranked.seeds
    return {"dense_range": list(found.dense_range), "dense_digest": seed_digest(found.dense),
            "phrases": [{"phrase": one, "units": units} for one, units in found.phrases],
            "iterations": 0 if ranked.mass is None else ranked.mass.iterations,
            "last_change": 0 if ranked.mass is None else ranked.mass.last_change}


def page(index, search: Search, vq: VectorQuery, found: list[dict], section: dict, table: GraphTable,
         examined: int) -> dict:
    """The page: `section` under the route's name."""
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=examined, nodes_admitted=len(table.walk.nodes), candidates_ranked=len(found),
                      embeddings_missing=missing)
    named: dict[str, Any] = {search.route: section}  # the section under the route's own name
    return parts.page(search, {"limit": search.limit, "space_id": vq.receipt["space_id"]}, vq.receipt, found,
                      parts.coverage(embeddings=missing == 0), work, **named)
