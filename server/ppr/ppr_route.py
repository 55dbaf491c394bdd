"""The ppr route: `POST .../search/ppr` body -> validated request -> PageRank -> page.

The method is `server.ppr.pagerank.rank_ppr` (pure). This module validates the body (the query's
text and vector for the fused base, the query's entities as the fixture recorded them: the
server runs no recognizer), reads the live index (the two channels; the eligible relations of the
profile's kinds, grouped by the entity their evidence names) and lays out the page: `ppr` carries
the seeds (reset integers on the 2^-grid_bits grid), the iteration count and the subgraph's size,
and every hit its mass (None when it is a backfilled base passage) and base rank, which is what
the evaluator's recomputation compares bit for bit (evaluator/verification/verifiers/ppr.py).
"""

from __future__ import annotations

from fractions import Fraction

from ground.canonical import digest
from protocols.profiles.ppr import PPR_PROFILES
from protocols.profiles.v1 import V1_PROFILES
from server import validation
from server.errors import ApiError
from server.ppr.pagerank import entities_by_passage, page_section, rank_ppr
from server.receipts import vector_sha256
from server.retrieval import bm25, cosine
from server.retrieval.fusion import fuse

MAX_ENTITIES = 64  # a question with more entities than this is refused (422)


def _entities(value) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_ENTITIES or not all(
            isinstance(v, str) and 0 < len(v) <= 1024 for v in value):
        raise ApiError(422, "invalid_query_entities",
                       f"query_entities must be a list of at most {MAX_ENTITIES} non-empty strings, "
                       f"got {validation.shown(value)}")
    return sorted(set(value))


def cached_tables(index, kinds) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(entity -> passages, passage -> entities), kept on the index until a record or relation is
    written (`index.writes`): regrouping every relation on each request was most of the route's time."""
    key = ("ppr_tables", tuple(kinds))
    cached = index.derived_indexes.get(key)
    if cached is None or cached[0] != index.writes:
        holders = index_holders(index, kinds)
        cached = (index.writes, holders, entities_by_passage(holders))
        index.derived_indexes[key] = cached
    return cached[1], cached[2]


def index_holders(index, kinds) -> dict[str, list[str]]:
    """entity -> its passages (ascending record ids): endpoints of the eligible relations of `kinds`
    whose evidence_ref names it."""
    found: dict[str, set[str]] = {}
    for kind in kinds:
        for source, entries in index.adjacency.get((kind, "forward"), {}).items():
            for relation_id, target in entries:
                relation = index.relations[relation_id]
                if not index.eligible(relation):
                    continue
                evidence = relation["provenance"]["evidence_ref"]
                found.setdefault(evidence.split(":", 1)[1], set()).update((source, target))
    return {text: sorted(ids) for text, ids in found.items()}


def search_ppr(index, body: dict) -> dict:
    """POST .../search/ppr: validate, rank on the live index, and build the page (no fence)."""
    name = validation.profile_name(body["profile"], PPR_PROFILES)
    profile = PPR_PROFILES[name]
    query = validation.query_text(body["query"])
    space_id = body["space_id"]
    space = validation.bound_space(space_id, index.spaces)
    vector = validation.query_vector(body["query_vector"], "query_vector", space.dimensions)
    entities = _entities(body["query_entities"])
    limit = validation.integer(body["limit"], "limit", 1, profile["limit_max"])
    spec = profile["base"]
    channels = spec["channels"]
    with index.lock:
        lex = bm25.bm25(index, query, channels["lexical"]["depth"])
        sem = cosine.cosine(index, cosine.prepare_query(space, vector),
                              channels["semantic"]["depth"], channels["semantic"]["min_score"])
        rule = V1_PROFILES[spec["profile"]]["fusion"]  # the base fuses by the rule of the hybrid profile it names
        fused = fuse(rule, spec, {"lexical": (lex.ids, lex.scores), "semantic": (sem.ids, sem.scores)})[: spec["depth"]]
        holders, entities_of = cached_tables(index, profile["graph"]["kinds"])
        ranked = rank_ppr(entities, holders, [(e.id, Fraction(*e.score)) for e in fused], profile, limit,
                          entities_of)
        section, order = page_section(ranked)
        hits = []
        for entry in order:
            record = index.records[entry["id"]]
            binding = index.live_binding(space_id, entry["id"])
            hits.append({**entry, "revision": record.revision, "payload": record.payload,
                         "embedding_receipt": None if binding is None else binding.receipt()})
        missing = len(index.records) - space.live_count()
    return {
        "method": "ppr", "profile": name, "profile_digest": digest(profile),
        "parameters": {"limit": limit, "space_id": space_id},
        "query_receipt": {"space_id": space_id, "vector_sha256": vector_sha256(vector)},
        "query_entities": entities,
        "hits": hits,
        "ppr": section,
        "coverage": {"source": True, "candidates": True, "graph": True, "embeddings": missing == 0,
                     "complete": missing == 0},
        "stop_reasons": [],
        "work": {"records_examined": lex.matched + sem.scored, "adjacency_examined": 0,
                 "relations_examined": 0, "nodes_admitted": section["subgraph_nodes"], "affinity_lookups": 0,
                 "affinity_reuses": 0, "candidates_ranked": len(order), "stale_relations_skipped": 0,
                 "embeddings_missing": missing, "affinity_missing": 0},
    }
