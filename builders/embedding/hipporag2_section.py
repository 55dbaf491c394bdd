"""The fixture's HippoRAG 2 section: its phrase and fact vectors and the synonym edges they make.

Built in the fixture stage (`lab embed build --hipporag2-graph`), never in the lab: the graph's
phrases and facts (builders/hipporag2_graph.py) are encoded by the fixture's own encoder as
documents are, their vectors L2-normalized as every fixture vector is, and the synonym edges are
found from those stored float32 vectors, so the evaluator can find them again from the fixture
alone (evaluator/hipporag2_nodes.py).

Which graph (`graph`): an imported graph's triples (hipporag2_v1), or, for a document_ner_graph_v1
relations file, its NER entities (hipporag_ner_v1): no facts, and `query_phrases`, the vectors of
the questions' own entities (the fixture's query_entities) as phrases, which link to the graph's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from builders.embedding.vectors import encode_vector, normalize_rows, vector_sha256
from builders.hipporag2_graph import build, build_ner, fact_text, ner_output_of, phrase, synonyms, triples_of
from ground.canonical import digest
from ground.errors import RefusedInput
from protocols.profiles.hipporag2 import FIXTURE_SECTION, SECTION_GRAPHS

Encode = Callable[[list[str]], np.ndarray]  # texts -> one row per text, the encoder's raw output


def graph_kind(relations: Mapping) -> str:
    """An imported graph's triples when the relations hold one, else the NER output's entities."""
    return SECTION_GRAPHS[0] if relations.get("imported") else SECTION_GRAPHS[1]


def query_phrases(query_entities: Mapping) -> list[str]:
    """Every question's entities as phrases, distinct, ascending (the empty phrase dropped)."""
    return sorted({one for entry in query_entities["queries"] for text, _ in entry["entities"] if (one := phrase(text))})


def section(relations: Mapping, passage_ids: Sequence[str], encode: Encode, query_entities: Mapping | None = None
            ) -> dict:
    """The fixture section: phrases (ascending) and facts (the graph's order) with their vectors,
    the synonym edges found from the phrase vectors as stored, and for the NER graph the questions'
    phrases with their vectors."""
    kind = graph_kind(relations)
    if kind == SECTION_GRAPHS[0]:
        graph = build(passage_ids, triples_of(relations))
    else:
        if query_entities is None:
            raise RefusedInput("the NER graph's section links the questions' entities: build the fixture with "
                               "--query-entities too (docs/hipporag2.md)")
        graph = build_ner(passage_ids, ner_output_of(relations))
    texts = [fact_text(fact) for fact in graph.facts]
    phrase_rows = _rows(encode, graph.phrases, "phrases")
    fact_rows = _rows(encode, texts, "facts")
    found = synonyms(graph.phrases, phrase_rows) if len(graph.phrases) else {}  # float32 rows: the stored bits
    out = {
        "graph": kind,
        "relations_digest": digest(relations),
        "phrases": _entries(graph.phrases, phrase_rows),
        "facts": _entries(texts, fact_rows),
        "synonyms": [[a, b, cosine] for a in sorted(found) for b, cosine in found[a]],
        "left_out": dict(graph.left_out),
    }
    if kind == SECTION_GRAPHS[1]:
        asked = query_phrases(query_entities)
        out["query_phrases"] = _entries(asked, _rows(encode, asked, "query_phrases"))
    return out


def _rows(encode: Encode, texts: list[str], role: str) -> np.ndarray:
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return normalize_rows(np.asarray(encode(texts), dtype=np.float32), texts, f"{FIXTURE_SECTION} {role}")


def _entries(ids: list[str], rows: np.ndarray) -> list[dict]:
    return [{"id": i, "vector": encode_vector(row), "vector_sha256": vector_sha256(row)} for i, row in zip(ids, rows)]
