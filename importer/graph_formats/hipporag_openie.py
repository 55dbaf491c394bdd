"""HippoRAG's OpenIE output, both generations (docs/graph-import.md).

- v1 (`hipporag_openie_v1`, the legacy branch's `openie_*_results_*.json`): an object whose `docs`
  list holds, per passage, `title`, `text`, `passage` (= title + newline + text),
  `extracted_entities` and `extracted_triples`; matched to the corpus by title and text.
- v2 (`hipporag_openie_v2`, HippoRAG 2's `openie_results_ner_*.json`): `docs` entries with `idx`
  = "chunk-" + md5(passage), `passage`, `extracted_entities`, `extracted_triples`; matched by that
  id, which must be the md5 of its own passage.

Other top-level keys (`ents_by_doc`, costs, averages that may be NaN) are read and ignored, as
HippoRAG's loader ignores them. `extracted_entities` is read and not used: HippoRAG builds its
phrase nodes from the triples.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from importer.graph_formats.base import BY_CHUNK_ID, BY_TITLE_TEXT, GraphFileError, GraphPassage, json_value

V1_KEYS = {"title", "text", "passage", "extracted_entities", "extracted_triples"}
V2_KEYS = {"idx", "passage", "extracted_entities", "extracted_triples"}


def chunk_id(passage: str) -> str:
    return "chunk-" + hashlib.md5(passage.encode("utf-8")).hexdigest()


def _docs(path: Path, keys: set[str], name: str) -> list[dict]:
    value = json_value(path)
    if not isinstance(value, dict) or not isinstance(value.get("docs"), list):
        raise GraphFileError(f"graph file {path}: not {name}: expected an object with a `docs` list")
    for i, doc in enumerate(value["docs"]):
        if not isinstance(doc, dict) or not keys <= set(doc):
            missing = sorted(keys - set(doc)) if isinstance(doc, dict) else sorted(keys)
            raise GraphFileError(f"graph file {path}: docs[{i}]: not {name}: missing {', '.join(missing)}")
        if not isinstance(doc["passage"], str) or not isinstance(doc["extracted_triples"], list):
            raise GraphFileError(f"graph file {path}: docs[{i}]: passage must be a string and "
                                 "extracted_triples a list")
    return value["docs"]


def read_v1(paths: Mapping[str, Path]) -> list[GraphPassage]:
    path = paths["graph"]
    out = []
    for i, doc in enumerate(_docs(path, V1_KEYS, "HippoRAG v1 OpenIE output")):
        title, text = doc["title"], doc["text"]
        if not isinstance(title, str) or not isinstance(text, str) or doc["passage"] != f"{title}\n{text}":
            raise GraphFileError(f"graph file {path}: docs[{i}]: passage is not title + newline + text")
        out.append(GraphPassage(BY_TITLE_TEXT, (title, text), doc["extracted_triples"], f"docs[{i}]"))
    return out


def read_v2(paths: Mapping[str, Path]) -> list[GraphPassage]:
    path = paths["graph"]
    out = []
    for i, doc in enumerate(_docs(path, V2_KEYS, "HippoRAG 2 OpenIE output")):
        if doc["idx"] != chunk_id(doc["passage"]):
            raise GraphFileError(f"graph file {path}: docs[{i}]: idx {doc['idx']!r} is not chunk- + md5 of its passage")
        out.append(GraphPassage(BY_CHUNK_ID, doc["idx"], doc["extracted_triples"], f"docs[{i}]"))
    return out


READERS = {"hipporag_openie_v1": read_v1, "hipporag_openie_v2": read_v2}
