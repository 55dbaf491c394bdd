"""The fixture's HippoRAG 2 section: its phrase and fact vectors and the synonym edges they make.

Built in the fixture stage (`lab embed build --hipporag2-graph`), never in the lab: the graph's
phrases and facts (builders/hipporag2_graph.py, from the imported triples of relations.json) are
encoded by the fixture's own encoder as documents are, their vectors L2-normalized as every
fixture vector is, and the synonym edges are found from those stored float32 vectors, so the
evaluator can find them again from the fixture alone (evaluator/verification/verifiers/hipporag2.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from builders.embedding.vectors import encode_vector, normalize_rows, vector_sha256
from builders.hipporag2_graph import build, fact_text, synonyms, triples_of
from ground.canonical import digest
from protocols.profiles.hipporag2 import FIXTURE_SECTION

Encode = Callable[[list[str]], np.ndarray]  # texts -> one row per text, the encoder's raw output


def section(relations: Mapping, passage_ids: Sequence[str], encode: Encode) -> dict:
    """The fixture section: phrases (ascending) and facts (the graph's order) with their vectors,
    and the synonym edges found from the phrase vectors as stored."""
    graph = build(passage_ids, triples_of(relations))
    texts = [fact_text(fact) for fact in graph.facts]
    phrase_rows = _rows(encode, graph.phrases, "phrases")
    fact_rows = _rows(encode, texts, "facts")
    found = synonyms(graph.phrases, phrase_rows) if len(graph.phrases) else {}  # float32 rows: the stored bits
    return {
        "relations_digest": digest(relations),
        "phrases": _entries(graph.phrases, phrase_rows),
        "facts": _entries(texts, fact_rows),
        "synonyms": [[a, b, cosine] for a in sorted(found) for b, cosine in found[a]],
        "left_out": dict(graph.left_out),
    }


def _rows(encode: Encode, texts: list[str], role: str) -> np.ndarray:
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return normalize_rows(np.asarray(encode(texts), dtype=np.float32), texts, f"{FIXTURE_SECTION} {role}")


def _entries(ids: list[str], rows: np.ndarray) -> list[dict]:
    return [{"id": i, "vector": encode_vector(row), "vector_sha256": vector_sha256(row)} for i, row in zip(ids, rows)]
