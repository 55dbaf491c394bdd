"""The lab's own plain format, `lab_triples_v1`, for any tool not listed (docs/graph-import.md).

JSON Lines, one triple a line: `{"passage": P, "subject": S, "predicate": R, "object": O}`, where P
is a corpus document id (source.json's `id`) or `{"title": T, "text": X}` matched exactly. Blank
lines are skipped; a passage's triples may be spread over the file. A passage without triples
cannot be written in this format, so `corpus_passages_without_triples` never counts here; a
corpus passage with no line is `corpus_passages_not_in_graph`. Read one line at a time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ground.files import refuse_json_constant
from importer.graph_formats.base import BY_DOCUMENT_ID, BY_TITLE_TEXT, GraphFileError, GraphPassage

KEYS = {"passage", "subject", "predicate", "object"}


def read(paths: Mapping[str, Path]) -> list[GraphPassage]:
    path = paths["graph"]
    passages: dict[tuple, GraphPassage] = {}
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            where = f"line {number}"
            try:
                row = json.loads(raw, parse_constant=refuse_json_constant)
            except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
                raise GraphFileError(f"graph file {path}: {where}: not a JSON object ({exc})") from None
            if not isinstance(row, dict) or set(row) != KEYS:
                keys = sorted(row) if isinstance(row, dict) else type(row).__name__
                raise GraphFileError(f"graph file {path}: {where}: expected exactly the keys passage, subject, "
                                     f"predicate, object; got {keys}")
            by, key = _passage_key(row["passage"], path, where)
            entry = passages.get((by, key))
            if entry is None:
                entry = passages[(by, key)] = GraphPassage(by, key, [], where)
            entry.triples.append([row["subject"], row["predicate"], row["object"]])
            entry.origins.append(where)
    return list(passages.values())


def _passage_key(value: object, path: Path, where: str) -> tuple[str, object]:
    if isinstance(value, str) and value:
        return BY_DOCUMENT_ID, value
    if isinstance(value, dict) and set(value) == {"title", "text"} and all(isinstance(v, str) for v in value.values()):
        return BY_TITLE_TEXT, (value["title"], value["text"])
    raise GraphFileError(f"graph file {path}: {where}: passage must be a corpus document id or "
                         '{"title": ..., "text": ...}')


READERS = {"lab_triples_v1": read}
