"""The search routes the lab serves: every route of protocols/routes.py bound to its handler, once.

protocols/routes.py declares what a request of each route carries; this table binds, per route,
the handler that answers it, the catalog entries of its profile family and the request fields the
handler may do without (a default applies: the route's first profile, min_score -1, a graph
profile's expansion defaults). From the two the route's accepted fields are derived; a route
declared there and not bound here (or the reverse) stops the import.

`search(index, route, body)` is the whole interface with the app (docs/contracts.md, "Inside the
server"): the app has already authenticated, parsed JSON and admitted the request; it adds `fence`
and the timing header. This module sits above every method family (one package each:
server/lexical.py, server/semantic.py, server/hybrid.py, server/graph/, server/rescue, server/walk, server/ann,
server/prf, server/ppr, server/hipporag2); none of them imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from protocols.routes import ROUTES, check_bindings
from server import validation
from server.ann.ann_route import search_ann
from server.errors import ApiError
from server.graph.graph_route import search_graph
from server.hipporag2.hipporag2_route import search_hipporag2
from server.hipporag2.ner_route import search_hipporag_ner
from server.hybrid import search_hybrid
from server.lexical import search_lexical
from server.ppr.ppr_route import search_ppr
from server.prf.prf_route import search_prf
from server.rescue.rescue_route import search_rescue
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import invalid
from server.semantic import search_semantic
from server.walk.walk_route import search_walk


@dataclass(frozen=True)
class Handler:
    search: Callable[[ScopeIndex, dict], dict]  # (index, body with the route's fields) -> page without fence
    profiles: Mapping[str, dict]  # its family's catalog entries, as protocols/routes.py binds them
    defaults: tuple[str, ...] = ()  # request fields it may do without


HANDLERS: dict[str, Handler] = {
    "lexical": Handler(search_lexical, ROUTES["lexical"].profiles, defaults=("profile",)),
    "semantic": Handler(search_semantic, ROUTES["semantic"].profiles, defaults=("profile", "min_score")),
    "hybrid": Handler(search_hybrid, ROUTES["hybrid"].profiles),
    "graph": Handler(search_graph, ROUTES["graph"].profiles, defaults=("expansion",)),
    "rescue": Handler(search_rescue, ROUTES["rescue"].profiles),  # server/rescue (docs/rescue.md)
    "ann": Handler(search_ann, ROUTES["ann"].profiles, defaults=("profile",)),  # server/ann (docs/scale.md)
    "walk": Handler(search_walk, ROUTES["walk"].profiles),  # server/walk (docs/graph-v3.md)
    "prf": Handler(search_prf, ROUTES["prf"].profiles),  # server/prf (docs/prf.md)
    "ppr": Handler(search_ppr, ROUTES["ppr"].profiles),  # server/ppr (docs/field-graphs.md)
    "hipporag2": Handler(search_hipporag2, ROUTES["hipporag2"].profiles),  # server/hipporag2 (docs/hipporag2.md)
    "hipporag_ner": Handler(search_hipporag_ner, ROUTES["hipporag_ner"].profiles),  # server/hipporag2/ner_route.py
}
check_bindings("server/routes.py", "handler", HANDLERS)

PAGE_OPTIONS = frozenset({"include_payload"})  # optional on every route: what the page carries, never the ranking
NAMES = tuple(ROUTES)  # the routes, in the order error messages list them


@dataclass(frozen=True)
class Fields:
    required: tuple[str, ...]
    optional: tuple[str, ...]


def _fields(route: str) -> Fields:
    always, sometimes = ROUTES[route].wire_fields()
    defaults = set(HANDLERS[route].defaults)
    if not defaults <= always:
        raise RuntimeError(f"server/routes.py: the {route} handler defaults {sorted(defaults - always)}, "
                           f"which protocols/routes.py does not declare for the route")
    return Fields(tuple(sorted(always - defaults)), tuple(sorted(defaults | sometimes | PAGE_OPTIONS)))


FIELDS: dict[str, Fields] = {route: _fields(route) for route in NAMES}


def _catalog() -> dict[str, dict]:
    catalog: dict[str, dict] = {}
    for route in NAMES:
        for name, profile in HANDLERS[route].profiles.items():
            if name in catalog:
                raise RuntimeError(f"server/routes.py: profile {name} is bound to two routes")
            catalog[name] = profile
    return catalog


CATALOG: dict[str, dict] = _catalog()  # GET /api/v1/catalog: every profile the lab serves


def _include_payload(body: dict) -> bool:
    value = body.get("include_payload", True)
    if not isinstance(value, bool):
        raise invalid(f"include_payload must be true or false, got {validation.shown(value)}")
    return value


def search(index: ScopeIndex, route: str, body: dict) -> dict:
    """The page of one search (without `fence`); ApiError 404 for an unknown route, 422 for a bad body."""
    if route not in HANDLERS:
        raise ApiError(404, "unknown_route", f"no search route {route!r}; routes: {', '.join(NAMES)}")
    fields = FIELDS[route]
    body = validation.fields(body, f"{route} search body", fields.required, fields.optional)
    include_payload = _include_payload(body)
    if "include_payload" in body:
        body = {k: v for k, v in body.items() if k not in PAGE_OPTIONS}
    with index.lock:
        page = HANDLERS[route].search(index, body)
    if not include_payload:  # a thinner page for callers that keep their own texts; same ranking
        for hit in page["hits"]:
            hit["payload"] = None
    return page
