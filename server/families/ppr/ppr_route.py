"""The ppr route: admitted search -> PageRank -> page.

The method is `server.families.ppr.pagerank.rank_ppr` (pure). This module validates the body (the query's
text and vector for the fused base, the query's entities as the fixture recorded them: the
server runs no recognizer), reads the live index (the two channels; the eligible relations of the
profile's kinds, grouped by the entity their evidence names) and lays out the page: `ppr` carries
the seeds (reset integers on the 2^-grid_bits grid), the iteration count and the subgraph's size,
and every hit its mass (None when it is a backfilled base passage) and base rank, which is what
the evaluator's recomputation compares bit for bit (evaluator/verification/verifiers/graphs/ppr.py).
"""

from __future__ import annotations

from fractions import Fraction

from server import validation
from server.errors import ApiError
from server.families.ppr.pagerank import entities_by_passage, page_section, rank_ppr
from server.retrieval import page_parts as parts
from server.retrieval.fusion import fused_base
from server.retrieval.graph_nodes import mass_hit
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search

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
    def build():
        holders = index_holders(index, kinds)
        return holders, entities_by_passage(holders)

    return index.derived(("ppr_tables", tuple(kinds)), build)


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


def search_ppr(index: ScopeIndex, search: Search) -> dict:
    """POST .../search/ppr: rank on the live index and build the page (no fence)."""
    profile = search.profile
    query = search.text()
    vq = search.vector(index)
    entities = _entities(search.field("query_entities"))
    base = fused_base(index, profile["base"], query, vq.query)
    holders, entities_of = cached_tables(index, profile["graph"]["kinds"])
    ranked = rank_ppr(entities, holders, [(e.id, Fraction(*e.score)) for e in base.fused], profile, search.limit,
                      entities_of)
    section, order = page_section(ranked)
    hits = [mass_hit(index, vq, entry["id"], entry["rank"], entry["score"], entry["mass"], base_rank=entry["base_rank"])
            for entry in order]
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=base.examined, nodes_admitted=section["subgraph_nodes"],
                      candidates_ranked=len(order), embeddings_missing=missing)
    return parts.page(search, {"limit": search.limit, "space_id": vq.receipt["space_id"]}, vq.receipt, hits,
                      parts.coverage(embeddings=missing == 0), work, query_entities=entities, ppr=section)
