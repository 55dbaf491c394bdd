"""What the two HippoRAG routes' pages share: the ranked hits, the graph's size and the envelope.

A hit carries its integer mass on the PageRank order (its score the mass's share of the whole) and
None on the dense order (its score the cosine), so the evaluator can check either exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import numpy as np

from ground.canonical import digest
from server.hipporag2.graph_table import GraphTable
from server.hipporag2.ranking import Ranked
from server.receipts import vector_sha256


def hits(index, space_id: str, table: GraphTable, ranked: Ranked, dense: np.ndarray, grid_bits: int) -> list[dict]:
    grid = float(1 << grid_bits)
    dense_of = {} if ranked.mass is not None else dict(zip(table.passages, dense.tolist()))
    out = []
    for i, (rid, mass) in enumerate(ranked.order, start=1):
        record = index.records[rid]
        binding = index.live_binding(space_id, rid)
        out.append({"rank": i, "id": rid, "score": dense_of[rid] if mass is None else mass / grid,
                    "mass": mass, "revision": record.revision, "payload": record.payload,
                    "embedding_receipt": None if binding is None else binding.receipt()})
    return out


def graph_size(table: GraphTable) -> dict:
    return {"passages": len(table.passages), "phrases": len(table.walk.nodes) - len(table.passages),
            "facts": len(table.facts), "edges": table.edges}


def dense_digest(dense: np.ndarray) -> str:
    """SHA-256 of the dense seeds as little-endian int64, in ascending passage id order."""
    return hashlib.sha256(np.asarray(dense, dtype="<i8").tobytes()).hexdigest()


def seeds_and_walk(ranked: Ranked) -> dict:
    """The section's tail: the dense range and digest, the phrase seeds, the iteration count and
    the last step's change (both 0 on the dense order)."""
    found = ranked.seeds
    return {"dense_range": list(found.dense_range), "dense_digest": dense_digest(found.dense),
            "phrases": [{"phrase": one, "units": units} for one, units in found.phrases],
            "iterations": 0 if ranked.mass is None else ranked.mass.iterations,
            "last_change": 0 if ranked.mass is None else ranked.mass.last_change}


def page(route: str, name: str, profile: Mapping, limit: int, space_id: str, vector: np.ndarray, found: list[dict],
         section: dict, table: GraphTable, missing: int, examined: int) -> dict:
    """The page: `section` under the route's name; `missing` passages without a vector in the space."""
    return {
        "method": route, "profile": name, "profile_digest": digest(profile),
        "parameters": {"limit": limit, "space_id": space_id},
        "query_receipt": {"space_id": space_id, "vector_sha256": vector_sha256(vector)},
        "hits": found,
        route: section,
        "coverage": {"source": True, "candidates": True, "graph": True, "embeddings": missing == 0,
                     "complete": missing == 0},
        "stop_reasons": [],
        "work": {"records_examined": examined, "adjacency_examined": 0,
                 "relations_examined": 0, "nodes_admitted": len(table.walk.nodes), "affinity_lookups": 0,
                 "affinity_reuses": 0, "candidates_ranked": len(found), "stale_relations_skipped": 0,
                 "embeddings_missing": missing, "affinity_missing": 0},
    }
