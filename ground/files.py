"""Atomic, never-overwriting artifact files (docs/design.md §3)."""

from __future__ import annotations

import gc
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ground.errors import RefusedInput


def refuse_existing(*paths: str | Path) -> None:
    """Refuse any output path that already exists (a file, a directory or a dangling link)."""
    for path in paths:
        if os.path.lexists(path):
            raise RefusedInput(f"refusing to overwrite existing output: {path}")


def refuse_same_path(**named: str | Path) -> None:
    """Refuse two roles (say output and measurements) that resolve to the same file."""
    seen: dict[str, str] = {}
    for role, path in named.items():
        flag = "--" + role.replace("_", "-")
        resolved = os.path.realpath(path)
        if resolved in seen:
            raise RefusedInput(f"{seen[resolved]} and {flag} name the same path: {path}")
        seen[resolved] = flag


def encode(value: Any, *, compact: bool = False) -> bytes:
    """The exact bytes `save` writes for `value`: UTF-8 JSON, indented by 2 (or compact), one final
    newline. Committed protocol files are these bytes, so a regenerated file compares byte for byte.

    Indented by default; `compact` (no whitespace) is for the artifacts too large to read by eye:
    Python's C encoder only runs without indentation, and the pure-Python one took 5x as long on a
    sample report (docs/full-scale.md).
    """
    layout = {"separators": (",", ":")} if compact else {"indent": 2}
    return (json.dumps(value, ensure_ascii=False, allow_nan=False, **layout) + "\n").encode("utf-8")


def save(path: str | Path, value: Any, *, compact: bool = False) -> None:
    """Write `value` as JSON (`encode`) atomically (`save_bytes`)."""
    save_bytes(path, encode(value, compact=compact))


def save_bytes(path: str | Path, data: bytes) -> None:
    """Write bytes atomically: temp file in the same directory, fsync, rename, fsync the directory.

    A crash at any point leaves either no file or the complete file, never a torn one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def load_json(path: str | Path, what: str = "file") -> Any:
    """Read a JSON artifact, refusing a missing file or malformed JSON with a precise message."""
    # Parsed JSON holds no reference cycles, so the cyclic collector has nothing to find in it; left
    # on, it ran 16 full passes over a growing heap while evaluate loaded the full-dev inputs
    # (2.5 of 11 s). It is paused for the parse only and left as the caller had it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle, parse_constant=refuse_json_constant)
    except FileNotFoundError:
        raise RefusedInput(f"{what} not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
        raise RefusedInput(f"{what} {path} is not valid JSON: {exc}") from None
    finally:
        if collecting:
            gc.enable()


def load_validated(path: str | Path, what: str, validate, error: type[RefusedInput]) -> Any:
    """Read a JSON artifact and validate it, raising `error` (naming the path) on any fault."""
    try:
        value = load_json(path, what)
    except error:
        raise
    except RefusedInput as exc:
        raise error(str(exc)) from None
    try:
        return validate(value)
    except error as exc:
        raise error(f"{what} {path}: {exc}") from None


def refuse_json_constant(name: str) -> Any:
    """`parse_constant` hook: NaN and Infinity are not JSON, and no artifact may hold them."""
    raise ValueError(f"non-finite number {name} is not allowed")
