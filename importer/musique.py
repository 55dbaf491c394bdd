"""Reading MuSiQue JSONL files: raw-byte hash checks, streamed rows, the row format.

A file is hashed before it is parsed, and hashed again while it is parsed, so the rows the import
uses are exactly the bytes the protocol pinned (a file swapped between passes is refused too).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from importer.selection import row_stratum
from protocols.canonical import sha256_file
from protocols.errors import RefusedInput
from protocols.fields import Fields, join
from protocols.files import refuse_json_constant


class SourceFileError(RefusedInput):
    """A MuSiQue source file that is missing, differs from its pinned hash, or is malformed."""


@dataclass(frozen=True)
class PinnedFile:
    """A source file as the protocol pins it: its role (train/dev), name and raw SHA-256."""

    role: str
    name: str
    sha256: str
    path: Path


def pinned_files(protocol: dict, source_dir: str | Path) -> dict[str, PinnedFile]:
    """The protocol's source files resolved in `source_dir` (names come only from the protocol)."""
    source_dir = Path(source_dir)
    return {
        role: PinnedFile(role, entry["name"], entry["sha256"], source_dir / entry["name"])
        for role, entry in protocol["source_files"].items()
    }


def verify_hash(pinned: PinnedFile) -> None:
    """Refuse a missing file or one whose raw SHA-256 differs from the protocol's."""
    if not pinned.path.is_file():
        raise SourceFileError(f"source file {pinned.role} not found: {pinned.path}")
    actual = sha256_file(pinned.path)
    if actual != pinned.sha256:
        raise SourceFileError(
            f"source file {pinned.path} has sha256 {actual}, the protocol pins {pinned.sha256}"
        )


def stream_rows(pinned: PinnedFile) -> Iterator[tuple[int, dict]]:
    """Yield (line number, validated row) and refuse at the end if the bytes read differ from the pin."""
    h = hashlib.sha256()
    with open(pinned.path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            h.update(raw)
            if not raw.strip():
                continue
            where = f"{pinned.path}:{number}"
            try:
                row = json.loads(raw.decode("utf-8"), parse_constant=refuse_json_constant)
            except (UnicodeDecodeError, ValueError) as exc:
                raise SourceFileError(f"{where}: malformed JSON on line {number}: {exc}") from None
            validate_row(row, where)
            yield number, row
    if h.hexdigest() != pinned.sha256:
        raise SourceFileError(f"source file {pinned.path} changed while it was read (sha256 {h.hexdigest()})")


def validate_row(row: Any, where: str) -> None:
    """The parts of the official row format the import relies on, checked for every row."""
    f = Fields(SourceFileError)
    f.obj(row, where, ("id", "paragraphs", "question", "question_decomposition", "answer",
                       "answer_aliases", "answerable"), extra=True)
    try:
        row_stratum(row, where)
    except RefusedInput as exc:
        raise SourceFileError(str(exc)) from None
    f.string(row["question"], join(where, "question"))
    f.string(row["answer"], join(where, "answer"), nonempty=False)
    f.strings(row["answer_aliases"], join(where, "answer_aliases"))
    paragraphs = f.array(row["paragraphs"], join(where, "paragraphs"), nonempty=True)
    indexes: dict[int, bool] = {}
    for i, paragraph in enumerate(paragraphs):
        path = join(join(where, "paragraphs"), i)
        f.obj(paragraph, path, ("idx", "title", "paragraph_text", "is_supporting"), extra=True)
        idx = f.integer(paragraph["idx"], join(path, "idx"))
        if idx in indexes:
            f.fail(join(path, "idx"), f"duplicate paragraph idx {idx}")
        f.string(paragraph["title"], join(path, "title"), nonempty=False)
        f.string(paragraph["paragraph_text"], join(path, "paragraph_text"), nonempty=False)
        if not isinstance(paragraph["is_supporting"], bool):
            f.fail(join(path, "is_supporting"), "expected a boolean")
        indexes[idx] = paragraph["is_supporting"]
    steps = f.array(row["question_decomposition"], join(where, "question_decomposition"), nonempty=True)
    for i, step in enumerate(steps):
        path = join(join(where, "question_decomposition"), i)
        f.obj(step, path, ("paragraph_support_idx",), extra=True)
        idx = f.integer(step["paragraph_support_idx"], join(path, "paragraph_support_idx"))
        if idx not in indexes:
            f.fail(join(path, "paragraph_support_idx"), f"no paragraph has idx {idx}")
        if not indexes[idx]:
            f.fail(join(path, "paragraph_support_idx"), f"paragraph {idx} is not marked is_supporting")
