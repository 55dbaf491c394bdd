"""The hipporag2 route: `POST .../search/hipporag2` body -> validated request -> seeds -> PageRank -> page.

The query's vector is all it needs (HippoRAG 2 runs no language model at query time without its
recognition filter). The page's `hipporag2` section carries what the evaluator needs to recompute
every integer (evaluator/verification/verifiers/hipporag2.py): the linked facts with their cosine
and grid score, the ranges the scores were normalized over, the digest of the dense seeds, the
phrase seeds, the iteration count and the last step's change; every hit carries its mass (None on
the dense order, when no fact links a phrase).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ground.canonical import digest
from protocols.profiles.hipporag2 import HIPPORAG2_PROFILES
from server import validation
from server.errors import ApiError
from server.hipporag2.graph_table import graph_table
from server.hipporag2.linking import seeds
from server.hipporag2.ranking import rank
from server.receipts import vector_sha256
from server.retrieval import cosine


def dense_digest(dense: np.ndarray) -> str:
    """SHA-256 of the dense seeds as little-endian int64, in ascending passage id order."""
    return hashlib.sha256(np.asarray(dense, dtype="<i8").tobytes()).hexdigest()


def fact_cosines(query: cosine.Query, rows: np.ndarray, linked: int) -> np.ndarray:
    """Every fact's cosine as the seeds read it: exact (cosine_exact_v1) wherever it can decide the
    top `linked` facts or the range's ends, a float32 estimate elsewhere.

    A float32 product of unit vectors is within MARGIN of the exact cosine (the bound of
    server/retrieval/cosine.py's small-space prefilter), so a row whose estimate is more than
    2 MARGIN below the `linked`-th best estimate, and more than 2 MARGIN above the lowest, can be
    neither linked, nor tied with a linked one, nor the minimum or the maximum: the seeds are the
    ones the exact cosines of every fact give, at the cost of one float32 product."""
    if not len(rows):
        return np.zeros(0)
    margin = 2.0 * (query.space.dimensions + 2) * 2.0 ** -24
    # the product over the whole matrix, then the facts' rows: gathering the rows first copied the matrix
    estimate = (query.space.rows[: query.space.count] @ query.unit32)[rows].astype(np.float64)
    kth = np.partition(estimate, len(estimate) - min(linked, len(estimate)))[len(estimate) - min(linked, len(estimate))]
    exact = np.flatnonzero((estimate >= kth - 2 * margin) | (estimate <= estimate.min() + 2 * margin))
    estimate[exact] = cosine.exact_cosines(query, rows[exact])
    return estimate


def search_hipporag2(index, body: dict) -> dict:
    """POST .../search/hipporag2: validate, rank on the live index, and build the page (no fence)."""
    name = validation.profile_name(body["profile"], HIPPORAG2_PROFILES)
    profile = HIPPORAG2_PROFILES[name]
    space_id = body["space_id"]
    space = validation.bound_space(space_id, index.spaces)
    vector = validation.query_vector(body["query_vector"], "query_vector", space.dimensions)
    limit = validation.integer(body["limit"], "limit", 1, profile["limit_max"])
    with index.lock:
        table = graph_table(index, space_id, profile["pagerank"]["transition_bits"])
        if not len(table.passages):
            raise ApiError(409, "no_passages", f"scope {index.scope} holds no passage with a vector in {space_id}")
        query = cosine.prepare_query(space, vector)
        dense = cosine.exact_cosines(query, table.passage_rows)
        facts = fact_cosines(cosine.Query(index.node_spaces[space_id], query.unit64, query.unit32), table.fact_rows,
                             profile["linking"]["facts"])
        found = seeds(facts, dense, table.fact_ends, table.holders, profile)
        ranked = rank(table.walk, table.passages, dense, found, profile, limit, table.walk_rows)
        hits = []
        grid = float(1 << profile["pagerank"]["grid_bits"])
        dense_of = {} if ranked.mass is not None else dict(zip(table.passages, dense.tolist()))
        for i, (rid, mass) in enumerate(ranked.order, start=1):
            record = index.records[rid]
            binding = index.live_binding(space_id, rid)
            # score: the mass's share of the whole on the PageRank order, the cosine on the dense order
            hits.append({"rank": i, "id": rid, "score": dense_of[rid] if mass is None else mass / grid,
                         "mass": mass, "revision": record.revision, "payload": record.payload,
                         "embedding_receipt": None if binding is None else binding.receipt()})
        missing = len(index.records) - space.live_count()
        section = {
            "graph": {"passages": len(table.passages), "phrases": len(table.walk.nodes) - len(table.passages),
                      "facts": len(table.facts), "edges": table.edges},
            "facts": [{"id": table.facts[f.index], "revision": index.nodes[table.facts[f.index]].revision,
                       "cosine": f.cosine, "score": f.score} for f in found.facts],
            "fact_range": list(found.fact_range),
            "dense_range": list(found.dense_range),
            "dense_digest": dense_digest(found.dense),
            "phrases": [{"phrase": one, "units": units} for one, units in found.phrases],
            "iterations": 0 if ranked.mass is None else ranked.mass.iterations,
            "last_change": 0 if ranked.mass is None else ranked.mass.last_change,
        }
    return {
        "method": "hipporag2", "profile": name, "profile_digest": digest(profile),
        "parameters": {"limit": limit, "space_id": space_id},
        "query_receipt": {"space_id": space_id, "vector_sha256": vector_sha256(vector)},
        "hits": hits,
        "hipporag2": section,
        "coverage": {"source": True, "candidates": True, "graph": True, "embeddings": missing == 0,
                     "complete": missing == 0},
        "stop_reasons": [],
        "work": {"records_examined": len(table.passages) + len(table.facts), "adjacency_examined": 0,
                 "relations_examined": 0, "nodes_admitted": len(table.walk.nodes), "affinity_lookups": 0,
                 "affinity_reuses": 0, "candidates_ranked": len(hits), "stale_relations_skipped": 0,
                 "embeddings_missing": missing, "affinity_missing": 0},
    }
