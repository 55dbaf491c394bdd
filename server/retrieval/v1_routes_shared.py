"""What the four v1 routes (lexical, semantic, hybrid, graph) share: their catalog entries as the route
table declares them, the page header that carries a profile's digest, and the hybrid's fused list
that the graph route also seeds from."""

from __future__ import annotations

from ground.canonical import digest
from protocols.profiles.v1 import V1_ROUTE_PROFILES
from protocols.routes import ROUTES
from server.retrieval import page_parts as parts
from server.retrieval.bm25 import bm25
from server.retrieval.cosine import cosine
from server.retrieval.fusion import Fused, fuse
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import VectorQuery, profile_name


SEMANTIC_DEPTH_MIN_SCORE = -1.0  # channels of fusion and graph seeds keep every cosine

# the four first routes' catalog entries as the route table declares them (the graph route's include
# the typed paths over an imported graph, protocols/profiles/imported.py)
ROUTE_PROFILES = {route: tuple(ROUTES[route].profiles) for route in V1_ROUTE_PROFILES}
PROFILES = {name: profile for route in V1_ROUTE_PROFILES for name, profile in ROUTES[route].profiles.items()}
PROFILE_DIGESTS = {name: digest(profile) for name, profile in PROFILES.items()}  # a page carries its profile's digest


def v1_profile(body: dict, route: str) -> str:
    return profile_name(body, route, ROUTE_PROFILES[route])


def v1_page(route: str, profile: str, *args, **named) -> dict:
    """A v1 route's page: its profile's digest comes from the v1 catalog."""
    return parts.page(route, profile, PROFILE_DIGESTS[profile], *args, **named)


def fused_list(index: ScopeIndex, profile_name: str, query: str, vq: VectorQuery) -> tuple[list[Fused], int]:
    profile = PROFILES[profile_name]
    lexical = bm25(index, query, profile["channels"]["lexical"]["depth"])
    semantic = cosine(index, vq.query, profile["channels"]["semantic"]["depth"], SEMANTIC_DEPTH_MIN_SCORE)
    lists = {"lexical": (lexical.ids, lexical.scores), "semantic": (semantic.ids, semantic.scores)}
    fused = fuse(profile["fusion"], profile, lists)
    return fused, lexical.matched + semantic.scored
