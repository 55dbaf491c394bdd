"""Reading the pinned source files: raw-byte hash checks and streamed rows, JSONL or a JSON array.

A file is hashed before it is parsed, and hashed again while it is parsed, so the rows the import
uses are exactly the bytes the protocol pinned (a file swapped between passes is refused too).

Both shapes the datasets ship in are read as streams: JSON lines (MuSiQue) one line at a time with
the standard library, a JSON array (the official HotpotQA and 2WikiMultihopQA files, the HotpotQA
dev file being 46 MB on one line) item by item with ijson's C backend, so memory holds one row at a
time. ijson reports no position, so when it refuses an array the file is parsed once more by the
standard library, which names the line and column (docs/import.md, "Malformed JSON").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import ijson

from ground.canonical import sha256_file
from ground.errors import RefusedInput
from ground.files import refuse_json_constant

WHITESPACE = b" \t\r\n"


class SourceFileError(RefusedInput):
    """A source file that is missing, differs from its pinned hash, or is malformed."""


@dataclass(frozen=True)
class PinnedFile:
    """A source file as the protocol pins it: its role (train/dev, questions/corpus), name, raw
    SHA-256 and, when the protocol states it, its size in bytes."""

    role: str
    name: str
    sha256: str
    path: Path
    size: int | None = None


def pinned_files(protocol: dict, source_dir: str | Path) -> dict[str, PinnedFile]:
    """The protocol's source files resolved in `source_dir` (names come only from the protocol)."""
    source_dir = Path(source_dir)
    return {
        role: PinnedFile(role, entry["name"], entry["sha256"], source_dir / entry["name"], entry.get("bytes"))
        for role, entry in protocol["source_files"].items()
    }


def require_present(pinned: PinnedFile) -> None:
    """Refuse a pinned file that is not where the data folder says, naming the flag that moves it."""
    if not pinned.path.is_file():
        raise SourceFileError(f"source file {pinned.role} not found: {pinned.path}: pass the folder that holds "
                              f"{pinned.path.name} as --data-dir DIR"
                              + (f" (the protocol pins {pinned.size:,} bytes, sha256 {pinned.sha256})"
                                 if pinned.size is not None else ""))


def verify_hash(pinned: PinnedFile) -> None:
    """Refuse a missing file or one whose raw SHA-256 (or pinned size) differs from the protocol's.

    Nothing of the file is parsed before this passes: another file under the pinned name is
    refused by its bytes, whatever its rows would say."""
    require_present(pinned)
    actual = sha256_file(pinned.path)
    size = pinned.path.stat().st_size
    if actual != pinned.sha256 or (pinned.size is not None and size != pinned.size):
        pins = f"{pinned.size:,} bytes, sha256 {pinned.sha256}" if pinned.size is not None else pinned.sha256
        raise SourceFileError(
            f"source file {pinned.path} has {size:,} bytes and sha256 {actual}; the protocol pins {pins}: "
            f"not the pinned file, refused before reading a row"
            if pinned.size is not None else
            f"source file {pinned.path} has sha256 {actual}, the protocol pins {pinned.sha256}"
        )


class _HashingReader:
    """A binary file whose every byte read, by read() or line iteration, feeds one SHA-256."""

    def __init__(self, handle: BinaryIO):
        self.handle = handle
        self.sha256 = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.sha256.update(data)
        return data

    def __iter__(self) -> Iterator[bytes]:
        for line in self.handle:
            self.sha256.update(line)
            yield line

    def drain(self) -> None:
        """Hash the rest of the file (a parser may stop reading before the last bytes)."""
        while self.read(1 << 20):
            pass


def stream_rows(pinned: PinnedFile) -> Iterator[tuple[str, Any]]:
    """Yield (where, parsed row) in file order; `where` names the file and the line (JSONL) or the
    1-based row of the array. Refuses at the end if the bytes read differ from the pin."""
    with open(pinned.path, "rb") as handle:
        reader = _HashingReader(handle)
        first = first_byte(pinned.path)
        if first == b"[":
            yield from _array_rows(reader, pinned.path)
        elif first in (b"{", b""):
            yield from _jsonl_rows(reader, pinned.path)
        else:
            raise SourceFileError(
                f"{pinned.path}: neither a JSON array nor JSON lines (first character {first.decode('latin-1')!r})")
        reader.drain()
    actual = reader.sha256.hexdigest()
    if actual != pinned.sha256:
        raise SourceFileError(f"source file {pinned.path} changed while it was read (sha256 {actual})")


def first_byte(path: Path) -> bytes:
    """The first byte of a file that is not JSON whitespace (b"" for a blank file)."""
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 16):
            stripped = chunk.lstrip(WHITESPACE)
            if stripped:
                return stripped[:1]
    return b""


def _jsonl_rows(reader: _HashingReader, path: Path) -> Iterator[tuple[str, Any]]:
    for number, raw in enumerate(reader, start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(raw.decode("utf-8"), parse_constant=refuse_json_constant)
        except json.JSONDecodeError as exc:
            raise SourceFileError(
                f"{where}: malformed JSON on line {number}, column {exc.colno}: {exc.msg}") from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise SourceFileError(f"{where}: malformed JSON on line {number}: {exc}") from None
        yield where, row


def _array_rows(reader: _HashingReader, path: Path) -> Iterator[tuple[str, Any]]:
    number = 0
    try:
        # use_float: numbers as the standard library reads them (ijson's default is Decimal)
        for row in ijson.items(reader, "item", use_float=True):
            number += 1
            yield f"{path}: row {number}", row
    except ijson.JSONError as exc:
        raise SourceFileError(_locate_malformed(path, number, str(exc))) from None
    except UnicodeDecodeError as exc:
        raise SourceFileError(f"{path}: malformed JSON after row {number}: {exc}") from None


def _locate_malformed(path: Path, rows_read: int, ijson_message: str) -> str:
    """The line and column of the first fault, from a standard-library parse of the whole file.

    Only a file already refused by the streaming parser gets here, so holding it whole once is
    the price of a precise message, never of a successful import.
    """
    reason = ijson_message.strip().splitlines()[0] if ijson_message.strip() else "malformed JSON"
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{path}: malformed JSON after row {rows_read}: {exc}"
    try:
        json.loads(text, parse_constant=refuse_json_constant)
    except json.JSONDecodeError as exc:
        return (f"{path}:{exc.lineno}:{exc.colno}: malformed JSON on line {exc.lineno}, column {exc.colno} "
                f"(after row {rows_read}): {exc.msg}")
    except ValueError as exc:  # a non-finite constant: the standard library gives no position
        return f"{path}: malformed JSON after row {rows_read}: {exc}"
    return f"{path}: malformed JSON after row {rows_read}: {reason}"
