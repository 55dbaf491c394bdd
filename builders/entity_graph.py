"""`document_entity_graph_v1`: the title graph plus edges between paragraphs that share a rare name.

The title graph (`document_title_graph_v1`, builders/title_graph.py) links a paragraph to a document only
when it mentions that document's *whole* title. Many bridges of a multi-hop question are not
written that way: two paragraphs name the same director ("directed by Raoul Walsh") and neither is
his page. This builder reads names from capitalization alone (builders/names.py) and adds one
relation kind, `shares_name`: two paragraphs whose texts hold the same name key, when at most
`max_documents` paragraphs of the corpus hold it (a rare name is a specific one: "United States"
links nothing, "Raoul Walsh" does).

A relation is undirected (a walk follows both ways): one per pair of paragraphs, source = the
smaller id, its evidence the key that linked them (the longest shared key, then the smallest),
written out in `evidence_ref` so a page's proof names the name. The title graph's relations are
kept byte for byte (their own method and revision), so every method that follows only the title
graph's kinds ranks exactly as under `document_title_graph_v1`.

Like the title graph, the builder sees exactly {id, title, paragraph_text} per document: no
question, answer or judgment can shape an edge. Linear in corpus size: one pass over each text's
words, then one pass over the keys (a key links at most max_documents * (max_documents - 1) / 2
pairs). The evaluator recomputes the relations with its own code (evaluator/entity_relations.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from builders import title_graph
from builders.names import JOINERS, LEADING, MIN_SINGLE_CHARS, name_runs, run_keys
from builders.relation_record import relation_record
from ground.canonical import digest

METHOD = "document_entity_graph_v1"
FORMAT = title_graph.FORMAT
KIND = "shares_name"
EVIDENCE_PREFIX = "shared_name:"

ENTITY_POLICY = {
    "names": {
        "normalization": "unicode NFKC; \\w+ words; a key is casefolded, its words joined by one space",
        "capitalized": "first character uppercase",
        "run": "maximal run of capitalized words, with joiners and numbers after a capitalized word; words "
               "separated by whitespace or one hyphen only",
        "joiners": sorted(JOINERS),
        "leading_words_dropped": sorted(LEADING),
        "trailing_joiners_dropped": True,
        "key": "sub-run of a run starting with a capitalized word, not ending with a joiner",
        "max_key_words": 4,
        "eligible_key": f"not a dropped leading word, not all digits, several words or >= {MIN_SINGLE_CHARS} "
                        "characters",
    },
    "shared_name": {
        "text": "paragraph_text only",
        "documents": [2, 3],  # a key held by this many paragraphs links each pair of them
    },
    "kind": KIND,
    "direction": "undirected: one relation per pair of paragraphs, source = smaller id",
    "evidence": "the longest shared key (most words), then the smallest",
    "edge_id": "edge- + digest([source, target, kind])",
    "evidence_ref": EVIDENCE_PREFIX + "<key>",
}

POLICY: dict[str, Any] = {
    "method": METHOD,
    "inputs": list(title_graph.PROJECTION_FIELDS),
    "title_graph": title_graph.POLICY,
    "entity": ENTITY_POLICY,
}
KINDS = title_graph.KINDS + (KIND,)


def build_relations(projection: list[dict], source_digest: str) -> dict:
    """The whole relations.json value for a projection: the title graph's relations, then the
    entity relations, in one list sorted by edge id (see docs/graph-v4.md)."""
    documents = title_graph._checked_projection(projection)
    relations = title_graph.merged(title_graph._relations(documents), _entity_relations(documents, ENTITY_POLICY))
    return title_graph.relations_file(METHOD, POLICY, KINDS, documents, relations, source_digest)


def build_for_source(source: dict, source_digest: str) -> dict:
    return build_relations(title_graph.project(source), source_digest)


def text_keys(documents: list[dict], policy: Mapping) -> dict[str, set[str]]:
    """id -> the eligible name keys of its paragraph text."""
    max_words = policy["names"]["max_key_words"]
    out = {}
    for doc in documents:
        keys: set[str] = set()
        for run in name_runs(doc["paragraph_text"]):
            keys |= run_keys(run, max_words)
        out[doc["id"]] = keys
    return out


def entity_links(documents: list[dict], policy: Mapping) -> dict[tuple[str, str], str]:
    """(smaller id, larger id) -> the key that links them, for every pair of paragraphs sharing a
    key held by `policy["shared_name"]["documents"]` paragraphs; documents sorted by id."""
    low, high = policy["shared_name"]["documents"]
    holders: dict[str, list[str]] = defaultdict(list)  # key -> ids whose text holds it, ascending
    for doc_id, keys in text_keys(documents, policy).items():
        for key in keys:
            holders[key].append(doc_id)
    chosen: dict[tuple[str, str], tuple[int, str]] = {}  # pair -> best (-words, key)
    for key, ids in holders.items():
        if low <= len(ids) <= high:
            rank = (-key.count(" "), key)
            for i, a in enumerate(ids):
                for b in ids[i + 1:]:
                    if (a, b) not in chosen or rank < chosen[(a, b)]:
                        chosen[(a, b)] = rank
    return {pair: key for pair, (_, key) in chosen.items()}


def _entity_relations(documents: list[dict], policy: Mapping) -> list[dict]:
    revision = digest(POLICY)
    out = []
    for (source, target), key in sorted(entity_links(documents, policy).items()):
        out.append(relation_record("edge-" + digest([source, target, KIND]), KIND, source, target,
                                   origin="tool_observation", method=METHOD, revision=revision,
                                   evidence=EVIDENCE_PREFIX + key, model=None))
    return out
