"""The linearrag route: admitted search -> entity links -> semantic bridging -> reset -> PageRank -> page.

The body carries the question's vector and its entities (lower-cased, as LinearRAG links them) with
their vectors; the fixture's linearrag_graph section encodes them, the lab runs no model. The page's
`linearrag` section carries what the evaluator needs to recompute every number
(evaluator/verification/verifiers/graphs/linearrag.py): each link with its cosine, every sentence taken in
every round with its cosine, the activations and the weights they give, the entity seeds, the dense
range, the digest of the passage seeds, the iteration count and the last step's change; every hit
carries its mass (None on the dense order, when no entity is seeded).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from protocols.families.graphs.linearrag import ENTITY, draw_order
from server.families.linearrag.bridging import Bridged, bridge, passage_weights, seed_units
from server.families.linearrag.graph_table import LinearTable, linear_table
from server.receipts import vector_sha256
from server.retrieval import cosine
from server.retrieval import page_parts as parts
from server.retrieval.graph_nodes import mass_hit, seed_digest
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search, VectorQuery
from server.retrieval.whole_graph_pagerank import pagerank, reset_of


def links(index, table: LinearTable, space_id: str, entities: list[tuple[str, np.ndarray]],
          order: Callable[[str], Any] = str) -> list[tuple[str, float]]:
    """Each question entity's graph entity of highest exact cosine, ties by `order` of the entity text
    (table.entities are ascending, so the v1 order is their position)."""
    if not entities or not table.entities:
        return []
    tie = None if order is str else (lambda i: order(table.entities[i]))
    found = cosine.nearest(index.node_spaces[space_id], table.entity_rows, [vector for _, vector in entities], tie)
    return [(table.entities[i], value) for i, value in found]


def bridged(index, table: LinearTable, vq: VectorQuery, linked: list[tuple[str, float]], rules,
            order: Callable[[str], Any] = str) -> Bridged:
    node_query = cosine.Query(index.node_spaces[vq.receipt["space_id"]], vq.query.unit64, vq.query.unit32)
    return bridge(linked, lambda entity: table.sentences_of.get(entity, ()),
                  lambda sentences: cosine.exact_cosines(node_query, np.array([s.row for s in sentences], dtype=np.int64)),
                  lambda text: table.entities_of.get(text, ()), rules, order)


def section_of(table: LinearTable, entities, linked, found: Bridged, entity_seeds, dense, passage_units) -> dict:
    return {
        "graph": {"passages": len(table.passages), "entities": len(table.entities),
                  "sentences": table.sentence_count, "edges": table.edges},
        "links": [{"entity": text, "vector_sha256": vector_sha256(vector), "node": node, "cosine": value}
                  for (text, vector), (node, value) in zip(entities, linked)],
        "rounds": [[{"entity": entity, "score": score,
                     "sentences": [{"id": taken.id, "cosine": taken.cosine} for taken in sentences]}
                    for entity, score, sentences in spread] for spread in found.rounds],
        "activated": [{"entity": entity, "score": score, "tier": tier, "weight": found.weights[entity]}
                      for entity, (score, tier) in found.activated.items()],
        "entity_seeds": entity_seeds,
        "dense_range": [float(dense.min()), float(dense.max())],
        "passage_digest": seed_digest(passage_units),
    }


def search_linearrag(index: ScopeIndex, search: Search) -> dict:
    """POST .../search/linearrag: link, bridge, rank on the live index and build the page (no fence)."""
    profile = search.profile
    vq, entities = search.linked(index, profile["question_entities"]["max_entities"])
    space_id = vq.receipt["space_id"]
    rules = profile["pagerank"]
    table = linear_table(index, space_id, rules["transition_bits"])
    dense = cosine.exact_cosines(vq.query, table.passage_rows)
    order = draw_order(profile, vq.receipt["vector_sha256"])
    entities = sorted(entities, key=lambda entity: order(entity[0]))  # the body's are ascending
    linked = links(index, table, space_id, entities, order)
    found = bridged(index, table, vq, linked, profile["bridging"], order)
    bits = rules["seed_bits"]
    passage_units = [seed_units(w, bits) for w in passage_weights(dense, found.activated, table.occurrences_of,
                                                                   profile["passages"]).tolist()]
    entity_seeds = [{"entity": e, "units": seed_units(w, bits)} for e, w in sorted(found.weights.items())]
    section = section_of(table, entities, linked, found, entity_seeds, dense, passage_units)
    hits = rank(index, vq, table, dense, passage_units, entity_seeds, rules, search.limit, bool(linked), section)
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=len(table.passages) + len(table.entities), nodes_admitted=len(table.walk.nodes),
                      candidates_ranked=len(hits), embeddings_missing=missing)
    return parts.page(search, {"limit": search.limit, "space_id": space_id}, vq.receipt, hits,
                      parts.coverage(embeddings=missing == 0), work, linearrag=section)


def rank(index, vq: VectorQuery, table: LinearTable, dense: np.ndarray, passage_units: list[int], entity_seeds,
         rules, limit: int, seeded: bool, section: dict) -> list[dict]:
    """The hits: by PageRank mass when an entity is seeded, else on the dense order; fills the
    section's iterations and last change (both 0 on the dense order)."""
    count = len(table.passages)
    if not seeded:
        order = np.lexsort((np.arange(count), -dense))[:limit]
        section.update(iterations=0, last_change=0)
        return [mass_hit(index, vq, table.passages[i], i_rank, float(dense[i]), None)
                for i_rank, i in enumerate(order.tolist(), start=1)]
    units = list(passage_units) + [0] * len(table.entities)
    for seed in entity_seeds:
        units[table.walk.position[ENTITY + seed["entity"]]] += seed["units"]
    mass = pagerank(table.walk, reset_of(units, rules["grid_bits"]), rules["max_iterations"])
    section.update(iterations=mass.iterations, last_change=mass.last_change)
    values = mass.mass[:count]
    order = np.lexsort((np.arange(count), -values))[:limit]
    grid = float(1 << rules["grid_bits"])
    return [mass_hit(index, vq, table.passages[i], i_rank, int(values[i]) / grid, int(values[i]))
            for i_rank, i in enumerate(order.tolist(), start=1)]
