"""What every graph format hands the shared import: passages, each with its corpus key and raw triples."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ground.errors import RefusedInput

# how a graph passage names its corpus passage
BY_TITLE_TEXT = "title_text"  # (title, text), exactly
BY_CHUNK_ID = "chunk_id"  # HippoRAG 2's "chunk-" + md5(title + "\n" + text)
BY_DOCUMENT_ID = "document_id"  # the lab's own document id (source.json)


class GraphFileError(RefusedInput):
    """An external graph file that is missing, not the pinned one, or malformed."""


@dataclass
class GraphPassage:
    """One passage as the graph holds it: `key` names the corpus passage by `by`; `triples` are the
    triples exactly as the file wrote them (validated by importer/graph_import.py); `where` names
    the place in the file for messages, and `origins` the place of each triple where it is not
    `where`'s (a JSON-lines line, a relationships row). Lines and table rows are counted from 1
    in every format; a JSON path (`docs[3].extracted_triples[0]`) indexes from 0, as JSON does."""

    by: str
    key: Any
    triples: list
    where: str
    origins: list[str] = field(default_factory=list)

    def origin(self, i: int) -> str:
        """Where triple i was written: its own place, else its JSON path under its passage's."""
        return self.origins[i] if i < len(self.origins) else f"{self.where}.extracted_triples[{i}]"


Reader = Callable[[Mapping[str, Path]], list[GraphPassage]]


def json_value(path: Path) -> Any:
    """A whole JSON file read as HippoRAG's own loader reads it (the standard library, which takes
    the literal NaN that HippoRAG's files hold at their top level); refused with the line and
    column where it is not JSON (a truncated file, another format)."""
    import json

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise GraphFileError(f"graph file {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        early = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        raise GraphFileError(f"graph file {path}: not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
                             + ("; the file ends early: truncated?" if early else "")) from None
