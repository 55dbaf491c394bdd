"""The search routes the lab serves: every route of protocols/routes.py bound to its handler, once.

protocols/routes.py declares what a request of each route carries, which fields it may leave out
and how far its limit goes; this table binds, per route, the handler that answers it. A route
declared there and not bound here (or the reverse) stops the import.

`search(index, route, body)` is the whole interface with the app (docs/contracts.md, "Inside the
server"): the app has already authenticated, parsed JSON and admitted the request; it adds `fence`
and the timing header. One path for every route: the body's fields against the route's, the
profile and limit admitted the one way (server/retrieval/request.py), the scope's lock taken once,
then the family's handler (one package or module each in server/families/, none of which imports
this table).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocols.routes import PROFILES, ROUTES, check_bindings
from server import validation
from server.errors import ApiError
from server.families.ann.ann_route import search_ann
from server.families.graph.graph_route import search_graph
from server.families.hipporag2.hipporag2_route import search_hipporag2
from server.families.hipporag2.ner_route import search_hipporag_ner
from server.families.hybrid import search_hybrid
from server.families.lexical import search_lexical
from server.families.linearrag.linearrag_route import search_linearrag
from server.families.ppr.ppr_route import search_ppr
from server.families.prf.prf_route import search_prf
from server.families.rescue.rescue_route import search_rescue
from server.families.semantic import search_semantic
from server.families.walk.walk_route import search_walk
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search, admit, invalid, profile_digests

Handler = Callable[[ScopeIndex, Search], dict]  # (index, admitted search) -> page without fence

HANDLERS: dict[str, Handler] = {
    "lexical": search_lexical,
    "semantic": search_semantic,
    "hybrid": search_hybrid,
    "graph": search_graph,
    "rescue": search_rescue,
    "ann": search_ann,
    "walk": search_walk,
    "prf": search_prf,
    "ppr": search_ppr,
    "hipporag2": search_hipporag2,
    "hipporag_ner": search_hipporag_ner,
    "linearrag": search_linearrag,
}
check_bindings("server/routes.py", "handler", HANDLERS)

PAGE_OPTIONS = frozenset({"include_payload"})  # optional on every route: what the page carries, never the ranking
NAMES = tuple(ROUTES)  # the routes, in the order error messages list them
UNKNOWN_ROUTE = "unknown_route"  # the one 404 code of a search route the lab does not serve


@dataclass(frozen=True)
class Fields:
    required: tuple[str, ...]
    optional: tuple[str, ...]


def _fields(route: str) -> Fields:
    declared = ROUTES[route]
    always, sometimes = declared.wire_fields()
    optional = set(declared.optional)
    if not optional <= always:
        raise RuntimeError(f"protocols/routes.py: route {route} lets requests leave out {sorted(optional - always)}, "
                           f"which it does not declare")
    return Fields(tuple(sorted(always - optional)), tuple(sorted(optional | sometimes | PAGE_OPTIONS)))


FIELDS: dict[str, Fields] = {route: _fields(route) for route in NAMES}
DIGESTS: dict[str, dict[str, str]] = {route: profile_digests(ROUTES[route]) for route in NAMES}
CATALOG: dict[str, dict] = PROFILES  # GET /api/v1/catalog: every profile the lab serves


def unknown_route(route: str) -> ApiError:
    return ApiError(404, UNKNOWN_ROUTE, f"no search route {route!r}; routes: {', '.join(NAMES)}")


def _include_payload(body: dict) -> bool:
    value = body.get("include_payload", True)
    if not isinstance(value, bool):
        raise invalid(f"include_payload must be true or false, got {validation.shown(value)}")
    return value


def search(index: ScopeIndex, route: str, body: dict) -> dict:
    """The page of one search (without `fence`); ApiError 404 for an unknown route, 422 for a bad body."""
    if route not in HANDLERS:
        raise unknown_route(route)
    fields = FIELDS[route]
    body = validation.fields(body, f"{route} search body", fields.required, fields.optional)
    include_payload = _include_payload(body)
    if "include_payload" in body:
        body = {k: v for k, v in body.items() if k not in PAGE_OPTIONS}
    admitted = admit(ROUTES[route], DIGESTS[route], body)
    with index.lock:
        page = HANDLERS[route](index, admitted)
    if not include_payload:  # a thinner page for callers that keep their own texts; same ranking
        for hit in page["hits"]:
            hit["payload"] = None
    return page
