"""LinearRAG's graph as the lab holds it, read from a scope's live index (docs/linearrag.md).

The scope holds the passages (documents), the graph's entity and sentence nodes (memories marked
`graph_node`, each bound to its vector), a `holds_entity` relation from a passage to each of its
entities (evidence `count:N`) and a `names_entity` relation from a sentence to each entity it names.
From the eligible ones:

- a passage-entity edge weighs the entity's count over the passage's total count, exactly;
- an entity's sentences, ascending by text, are the sentences naming it, and a sentence's entities,
  ascending, the entities it names;
- the walk's nodes are the passages with a live vector (ascending ids) then the entities with one
  (ascending texts).

The table is rebuilt when a record, vector or relation of the scope is written (`index.writes`);
an entity's occurrences in the passages' lower-cased texts are counted once per table, when a
question first activates it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from protocols.families.graphs.linearrag import (
    COUNT_REF,
    ENTITY,
    HOLDS_ENTITY,
    NAMES_ENTITY,
    NODE_ENTITY,
    NODE_SENTENCE,
    PASSAGE,
)
from server.errors import ApiError
from server.retrieval.graph_nodes import eligible_relations, graph_spaces, live_rows, nodes_of_kind
from server.retrieval.whole_graph_pagerank import Transitions, transitions


@dataclass(frozen=True)
class Sentence:
    text: str
    id: str  # its node's record id
    row: int  # its row in the node space


@dataclass
class LinearTable:
    passages: list[str]  # document record ids with a live vector in the space, ascending
    passage_rows: np.ndarray  # their rows in the space matrix
    lowered: list[str]  # each passage's text, lower-cased
    entities: list[str]  # entity texts with a live vector, ascending
    entity_rows: np.ndarray  # their rows in the node space
    sentences_of: dict[str, list[Sentence]]  # entity -> the sentences naming it, ascending by text
    entities_of: dict[str, list[str]]  # sentence text -> the entities it names, ascending
    sentence_count: int
    walk: Transitions  # passages first (their walk positions are 0..P-1), then entities
    edges: int  # passage-entity edges
    occurrences: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def occurrences_of(self, entity: str) -> tuple[np.ndarray, np.ndarray]:
        """(passage positions, counts) of the entity's lower-cased text in the passages' lower-cased texts."""
        found = self.occurrences.get(entity)
        if found is None:
            needle = entity.lower()
            hits = [(i, text.count(needle)) for i, text in enumerate(self.lowered) if needle in text]
            found = (np.array([i for i, _ in hits], dtype=np.int64), np.array([n for _, n in hits], dtype=np.int64))
            self.occurrences[entity] = found
        return found


def linear_table(index, space_id: str, transition_bits: int) -> LinearTable:
    return index.derived(("linearrag", space_id, transition_bits), lambda: _build(index, space_id, transition_bits))


_PREPARED = "LinearRAG's graph is prepared with the fixture's linearrag_graph section (docs/linearrag.md)"


def _build(index, space_id: str, transition_bits: int) -> LinearTable:
    space, node_space = graph_spaces(index, space_id, "no_linearrag_graph", "entity", _PREPARED)
    passages, passage_rows = live_rows(space, index.records)
    if not passages:
        raise ApiError(409, "no_passages", f"scope {index.scope} holds no passage with a vector in {space_id}")
    entity_ids, entity_rows = live_rows(node_space, nodes_of_kind(index, NODE_ENTITY))
    text_of = {rid: index.nodes[rid].content for rid in entity_ids}
    order = sorted(range(len(entity_ids)), key=lambda i: text_of[entity_ids[i]])
    entities = [text_of[entity_ids[i]] for i in order]
    entity_rows = entity_rows[order] if len(order) else entity_rows
    sentence_ids, sentence_rows = live_rows(node_space, nodes_of_kind(index, NODE_SENTENCE))
    sentence_of = {rid: Sentence(index.nodes[rid].content, rid, int(row)) for rid, row in zip(sentence_ids, sentence_rows)}
    counts: dict[str, dict[str, int]] = {}
    for source, target, evidence in eligible_relations(index, HOLDS_ENTITY):
        if source in index.records and target in text_of and evidence.startswith(COUNT_REF):
            counts.setdefault(source, {})[text_of[target]] = int(evidence[len(COUNT_REF):])
    sentences_of: dict[str, list[Sentence]] = {}
    entities_of: dict[str, list[str]] = {}
    for source, target, _ in eligible_relations(index, NAMES_ENTITY):
        if source in sentence_of and target in text_of:
            sentences_of.setdefault(text_of[target], []).append(sentence_of[source])
            entities_of.setdefault(sentence_of[source].text, []).append(text_of[target])
    weights = {}
    live = set(passages)
    for pid, held in counts.items():
        if pid in live:
            total = sum(held.values())
            for entity, count in held.items():
                weights[(PASSAGE + pid, ENTITY + entity)] = Fraction(count, total)
    nodes = [PASSAGE + pid for pid in passages] + [ENTITY + entity for entity in entities]
    return LinearTable(passages, passage_rows, [index.records[pid].content.lower() for pid in passages], entities,
                       entity_rows, {e: sorted(found, key=lambda s: s.text) for e, found in sentences_of.items()},
                       {s: sorted(found) for s, found in entities_of.items()}, len(sentence_ids),
                       transitions(nodes, weights, transition_bits), len(weights))
