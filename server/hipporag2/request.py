"""What the two HippoRAG routes read alike from a body: the profile, the space, the query vector and
the limit, each validated as every route validates it (server/validation.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from server import validation


class Request(NamedTuple):
    name: str  # the profile's name
    profile: dict
    space_id: str
    space: object  # the scope's SpaceMatrix of that space
    vector: np.ndarray
    limit: int


def parsed(index, body: dict, profiles: Mapping[str, dict]) -> Request:
    name = validation.profile_name(body["profile"], profiles)
    profile = profiles[name]
    space = validation.bound_space(body["space_id"], index.spaces)
    vector = validation.query_vector(body["query_vector"], "query_vector", space.dimensions)
    return Request(name, profile, body["space_id"], space, vector,
                   validation.integer(body["limit"], "limit", 1, profile["limit_max"]))
