"""What a search route reads from its body, the same way on every route.

The route table (server/routes.py) has already checked that the body holds exactly the route's
fields. `admit` then checks what every route's body holds alike, one way and with one message per
fault for all of them: the profile among the route's catalog entries (absent, when the route lets
it be: the first), and the limit within the route's declared rule (protocols/route.py). The
family's handler reads its own fields with the `Search`'s methods: the query text, numbers within
bounds, the query vector against the scope's bound spaces, the entity vectors, a field of its own.
Each fault is a 422 with a precise message (docs/contracts.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ground.canonical import digest
from protocols.route import Route
from server import validation
from server.errors import ApiError
from server.receipts import vector_sha256
from server.retrieval.cosine import Query, prepare_query
from server.retrieval.indexes import ScopeIndex


def invalid(message: str, code: str = "wrong_type") -> ApiError:
    return ApiError(422, code, message)


def profile_digests(route: Route) -> dict[str, str]:
    """The digest a page of each profile carries (computed once per route, at import)."""
    return {name: digest(profile) for name, profile in route.profiles.items()}


def admit(route: Route, digests: Mapping[str, str], body: dict) -> Search:
    """The body's profile and limit, checked as every route checks them."""
    allowed = tuple(route.profiles)
    name = body.get("profile", allowed[0])
    if not isinstance(name, str) or name not in route.profiles:
        raise invalid(f"unknown profile {validation.shown(name)} for the {route.family} route; "
                      f"expected one of {', '.join(allowed)}", "unknown_profile")
    profile = route.profiles[name]
    limit = validation.integer(body["limit"], "limit", *route.limit(profile))
    return Search(route.family, name, profile, digests[name], limit, body)


def number(value: object, name: str, low: float, high: float) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise invalid(f"{name} must be a number, got {type(value).__name__}")
    try:
        value = float(value)
    except OverflowError:  # an integer literal beyond float64
        value = math.inf
    if not math.isfinite(value) or not low <= value <= high:
        raise invalid(f"{name} must be a finite number within [{low}, {high}], got {value}", "out_of_range")
    return value


@dataclass(frozen=True)
class VectorQuery:
    query: Query
    receipt: dict


MAX_PHRASE_CHARS = 1024  # an entity phrase a request may carry (`entity_vectors`)


def entity_vectors(value: Any, dimensions: int, most: int) -> list[tuple[str, np.ndarray]]:
    """The body's `entity_vectors`: at most `most` {phrase, vector}, phrases distinct and ascending."""
    if not isinstance(value, list) or len(value) > most:
        raise ApiError(422, "invalid_entity_vectors", f"entity_vectors must be a list of at most {most} "
                                                      f"{{phrase, vector}} objects")
    out: list[tuple[str, np.ndarray]] = []
    for i, entry in enumerate(value):
        where = f"entity_vectors[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"phrase", "vector"}:
            raise ApiError(422, "invalid_entity_vectors", f"{where} must be an object of exactly phrase and vector")
        text = entry["phrase"]
        if not isinstance(text, str) or not 0 < len(text) <= MAX_PHRASE_CHARS:
            raise ApiError(422, "invalid_entity_vectors", f"{where}.phrase must be a string of 1 to "
                                                          f"{MAX_PHRASE_CHARS} characters")
        if out and text <= out[-1][0]:
            raise ApiError(422, "invalid_entity_vectors", "entity_vectors' phrases must be distinct and ascending")
        out.append((text, validation.query_vector(entry["vector"], f"{where}.vector", dimensions)))
    return out


_REQUIRED = object()


@dataclass(frozen=True)
class Search:
    """An admitted search: its route, its profile (name, entry, digest) and limit, and its body. A
    family's handler reads each of its fields through one method here, so a field is read one way
    and refused with one message on every route (never from `body` directly)."""

    route: str
    profile_name: str
    profile: dict
    profile_digest: str
    limit: int
    body: dict

    def has(self, name: str) -> bool:
        """Whether the body carries `name` (a field the route lets a request leave out)."""
        return name in self.body

    def field(self, name: str, default: Any = _REQUIRED) -> Any:
        """A method's own field as sent, for the family to check by its own rule (a seed profile's
        name, a mode, a block of limits); `default` when the route lets it be left out."""
        return self.body[name] if default is _REQUIRED else self.body.get(name, default)

    def text(self, min_chars: int = 0) -> str:
        """The query text (`query`): a string of at least `min_chars` characters once stripped."""
        return validation.query_text(self.body["query"], min_chars)

    def number(self, name: str, low: float, high: float, default: float) -> float:
        """A finite number within [low, high]; `default` when left out."""
        return number(self.body.get(name, default), name, low, high)

    def integer(self, name: str, low: int, high: int) -> int:
        return validation.integer(self.body[name], name, low, high)

    def vector(self, index: ScopeIndex) -> VectorQuery:
        """The query vector (`query_vector`) in its bound space (`space_id`), with the receipt the
        page carries: the same rule as a stored vector (finite in float32, not all zero, the space's
        dimension)."""
        space_id = self.body["space_id"]
        space = validation.bound_space(space_id, index.spaces)
        v32 = validation.query_vector(self.body["query_vector"], "query_vector", space.dimensions)
        return VectorQuery(prepare_query(space, v32), {"space_id": space_id, "vector_sha256": vector_sha256(v32)})

    def linked(self, index: ScopeIndex, most: int) -> tuple[VectorQuery, list[tuple[str, np.ndarray]]]:
        """What a family that links question entities reads: the query vector in its bound space and
        at most `most` entity vectors (`entity_vectors`) of that space's dimensions."""
        vq = self.vector(index)
        return vq, entity_vectors(self.body["entity_vectors"], vq.query.space.dimensions, most)
