"""HippoRAG 2's graph as the lab holds it, read from a scope's live index (docs/hipporag2.md).

The scope holds the passages (documents), the graph's phrase and fact nodes (memories marked
`graph_node`), each fact's vector (and, for the NER graph, each phrase's), and three relation
kinds: a passage `states` a fact (evidence `triples:N`), a passage `mentions` a phrase (evidence
`ner:LABELS`) and a phrase is `synonym_of` another (evidence `cosine:C`). From the eligible ones:

- a phrase's holders are the passages stating a fact that names it or mentioning it;
- a context edge (passage, phrase) weighs 1 for each phrase a passage holds;
- a relation edge adds N to (subject, object) and to (object, subject) for a passage stating a
  fact N times, unless subject and object are the same phrase;
- a synonym (a, b) sets the ordered pair to its cosine, replacing a relation count there;
- the undirected weight of two nodes is the sum of both orders.

The table is rebuilt when a record, vector or relation of the scope is written (`index.writes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from protocols.families.graphs.hipporag2 import (
    COSINE_REF,
    FACT_ENDS,
    MENTIONS,
    NER_REF,
    NODE_FACT,
    NODE_PHRASE,
    PASSAGE,
    PHRASE,
    STATES,
    SYNONYM_OF,
    TRIPLES_REF,
)
from protocols.route import GRAPH_NODE
from server.errors import ApiError
from server.retrieval.graph_nodes import eligible_relations, graph_spaces, live_rows, nodes_of_kind
from server.retrieval.whole_graph_pagerank import Transitions, transitions


@dataclass(frozen=True)
class GraphTable:
    passages: list[str]  # document record ids with a live vector in the space, ascending
    passage_rows: np.ndarray  # their rows in the space matrix
    facts: list[str]  # fact node record ids with a live vector, ascending
    fact_rows: np.ndarray  # their rows in the node space matrix
    fact_ends: list[tuple[str, str, str]]  # (subject, "", object) per fact
    holders: dict[str, list[str]]  # phrase -> passages (node names are PASSAGE + id)
    phrases: list[str]  # the held phrases with a live vector, ascending (the NER graph's link targets)
    phrase_rows: np.ndarray  # their rows in the node space matrix
    walk: Transitions
    walk_rows: np.ndarray  # each passage's node position in the walk
    edges: int  # undirected edges


def graph_table(index, space_id: str, transition_bits: int) -> GraphTable:
    return index.derived(("hipporag2", space_id, transition_bits), lambda: _build(index, space_id, transition_bits))


def passages_table(index, space_id: str, transition_bits: int) -> GraphTable:
    """The table, refused (409) when no passage has a vector in the space."""
    table = graph_table(index, space_id, transition_bits)
    if not len(table.passages):
        raise ApiError(409, "no_passages", f"scope {index.scope} holds no passage with a vector in {space_id}")
    return table


_PREPARED = "HippoRAG 2's graph is prepared with the fixture's hipporag2_graph section (docs/hipporag2.md)"


def _build(index, space_id: str, transition_bits: int) -> GraphTable:
    space, node_space = graph_spaces(index, space_id, "no_hipporag2_graph", "fact", _PREPARED)
    passages, passage_rows = live_rows(space, index.records)
    facts, fact_rows = live_rows(node_space, nodes_of_kind(index, NODE_FACT))
    ends = {rid: tuple(index.nodes[rid].payload["metadata"][end] for end in FACT_ENDS) for rid in facts}
    stats: dict[tuple[str, str], float] = {}
    holders: dict[str, set[str]] = {}
    for source, target, evidence in eligible_relations(index, STATES, TRIPLES_REF):
        if source not in index.records or target not in ends:
            continue
        subject, obj = ends[target]
        for one in (subject, obj):
            holders.setdefault(one, set()).add(source)
        if subject != obj:
            count = int(evidence)
            for pair in ((PHRASE + subject, PHRASE + obj), (PHRASE + obj, PHRASE + subject)):
                stats[pair] = stats.get(pair, 0.0) + count
    for source, target, _ in eligible_relations(index, MENTIONS, NER_REF):
        if source in index.records and _is_phrase(index, target):
            holders.setdefault(index.nodes[target].content, set()).add(source)
    for one, pids in holders.items():
        for pid in pids:
            stats[(PASSAGE + pid, PHRASE + one)] = 1.0
    for source, target, evidence in eligible_relations(index, SYNONYM_OF, COSINE_REF):
        if not (_is_phrase(index, source) and _is_phrase(index, target)):
            continue
        a, b = index.nodes[source].content, index.nodes[target].content
        stats[(PHRASE + a, PHRASE + b)] = float(evidence)
    undirected: dict[tuple[str, str], float] = {}
    for (a, b), weight in stats.items():
        pair = (a, b) if a < b else (b, a)
        undirected[pair] = undirected.get(pair, 0.0) + weight
    phrases = sorted({node[len(PHRASE):] for pair in undirected for node in pair if node.startswith(PHRASE)})
    nodes = [PASSAGE + pid for pid in passages] + [PHRASE + one for one in phrases]
    walk = transitions(nodes, undirected, transition_bits)
    vectored, rows = live_rows(node_space, nodes_of_kind(index, NODE_PHRASE))
    linkable = sorted((index.nodes[rid].content, row) for rid, row in zip(vectored, rows.tolist())
                      if index.nodes[rid].content in holders)
    return GraphTable(passages, passage_rows, facts, fact_rows, [(ends[rid][0], "", ends[rid][1]) for rid in facts],
                      {one: sorted(pids) for one, pids in holders.items()},
                      [one for one, _ in linkable], np.array([row for _, row in linkable], dtype=np.int64), walk,
                      np.arange(len(passages), dtype=np.int64), len(undirected))  # passages are the first nodes


def _is_phrase(index, rid: str) -> bool:
    node = index.nodes.get(rid)
    return node is not None and node.payload["metadata"][GRAPH_NODE] == NODE_PHRASE
