"""The hipporag_ner route: admitted search -> entity links -> seeds -> PageRank -> page.

The body carries the query's vector and its entities as phrases with their vectors (the fixture's
hipporag2_graph section encodes them; the lab runs no model). Each entity links to the graph's
phrase of highest exact cosine (ties by phrase): a float32 product ranks every phrase, and the
exact cosine (cosine_exact_v1) decides among those within twice the float32 bound of the best, so
the link is the one exact cosines of every phrase give. The page's `hipporag_ner` section carries
the links with their cosines, the phrase seeds, the dense range and digest, the iteration count
and the last step's change (evaluator/verification/verifiers/graphs/hipporag2/ner_verifier.py recomputes each).
"""

from __future__ import annotations

import numpy as np

from server.errors import ApiError
from server.families.hipporag2.graph_table import GraphTable, passages_table
from server.families.hipporag2.linking import EntityLink, entity_seeds
from server.families.hipporag2.page import graph_size, hits, page, seeds_and_walk
from server.families.hipporag2.ranking import rank
from server.receipts import vector_sha256
from server.retrieval import cosine
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search


def nearest(node_space, table: GraphTable, entities: list[tuple[str, np.ndarray]]) -> list[EntityLink]:
    """Each entity's phrase of highest exact cosine, ties by phrase (the table's order)."""
    if not entities:
        return []
    if not len(table.phrases):
        raise ApiError(409, "no_phrase_vectors", "the scope's graph has no phrase with a vector: hipporag_ner links "
                                                 "entities to the NER graph's phrases (docs/hipporag2.md)")
    found = cosine.nearest(node_space, table.phrase_rows, [vector for _, vector in entities])
    return [EntityLink(text, table.phrases[i], value) for (text, _), (i, value) in zip(entities, found)]


def search_hipporag_ner(index: ScopeIndex, search: Search) -> dict:
    """POST .../search/hipporag_ner: link, rank on the live index and build the page (no fence)."""
    profile = search.profile
    vq, entities = search.linked(index, profile["linking"]["max_entities"])
    space_id = vq.receipt["space_id"]
    table = passages_table(index, space_id, profile["pagerank"]["transition_bits"])
    links = nearest(index.node_spaces[space_id], table, entities)
    dense = cosine.exact_cosines(vq.query, table.passage_rows)
    found = entity_seeds(links, dense, table.holders, profile)
    ranked = rank(table.walk, table.passages, dense, found, profile, search.limit, table.walk_rows)
    section = {
        "graph": graph_size(table),
        "entities": [{"entity": link.entity, "vector_sha256": vector_sha256(one), "phrase": link.phrase,
                      "cosine": link.cosine} for link, (_, one) in zip(links, entities)],
        **seeds_and_walk(ranked),
    }
    found_hits = hits(index, vq, table, ranked, dense, profile["pagerank"]["grid_bits"])
    return page(index, search, vq, found_hits, section, table, len(table.passages) + len(table.phrases))
