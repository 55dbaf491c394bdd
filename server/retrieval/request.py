"""What a search route reads from its body, the same way on every route that reads it.

The route table (server/routes.py) has already checked that the body holds exactly the route's
fields; these helpers check the values: the profile against the route's catalog entries, numbers
within their bounds, the query vector against the scope's bound spaces. Each fault is a 422 with
a precise message (docs/contracts.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from server import validation
from server.errors import ApiError
from server.receipts import vector_sha256
from server.retrieval.cosine import Query, prepare_query
from server.retrieval.indexes import ScopeIndex
from server.validation import LIMITS

# One source for the limits: server/validation.py's LIMITS, which health reports.
SEARCH_LIMIT = tuple(LIMITS["search_limit"])  # (1, 100)


def invalid(message: str, code: str = "wrong_type") -> ApiError:
    return ApiError(422, code, message)


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


def profile_name(body: dict, route: str, allowed: tuple[str, ...]) -> str:
    """The body's profile among the route's `allowed` catalog entries; absent: the first."""
    name = body.get("profile", allowed[0])
    if not isinstance(name, str) or name not in allowed:
        raise invalid(f"unknown profile {validation.shown(name)} for the {route} route; "
                      f"expected one of {', '.join(allowed)}", "unknown_profile")
    return name


@dataclass(frozen=True)
class VectorQuery:
    query: Query
    receipt: dict


def vector_query(index: ScopeIndex, body: dict) -> VectorQuery:
    """The body's query vector in its bound space, with the receipt the page carries."""
    space_id = body["space_id"]
    space = validation.bound_space(space_id, index.spaces)
    # The same rule as a stored vector (finite in float32, not all zero, the space's dimension).
    v32 = validation.query_vector(body["query_vector"], "query_vector", space.dimensions)
    return VectorQuery(prepare_query(space, v32), {"space_id": space_id, "vector_sha256": vector_sha256(v32)})
