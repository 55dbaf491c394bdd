"""A vector's receipt: the SHA-256 of its little-endian float32 bytes (docs/contracts.md).

One function with one home below everything that names a vector: validation computes it for a
stored binding, the indexes for the rows they hold, the search routes for the query vector.
"""

from __future__ import annotations

import hashlib

import numpy as np


def vector_sha256(vector: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(vector, dtype="<f4").tobytes()).hexdigest()
