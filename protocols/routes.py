"""The registry of method families: every search route, declared once, in the order the lab lists them.

A family declares its routes in its module of protocols/families/ (protocols/route.py says what a
declaration holds); this table lists each module once. Everything else derives from it: the
protocol validator checks a method's fields and a profile against its route's declaration
(protocols/schema.py); the evaluator builds each request from it (evaluator/evaluate/evaluate.py);
the server accepts exactly its fields and serves its catalog; the store admits the node memories
and relation kinds the families declare (server/validation.py); the docs' route tables are made
from it (`route_table`). Each side binds its own part in one table, checked at import against this
one: the server its handler (server/routes.py), the evaluator its independent verifier
(evaluator/verification/routes.py). Adding a method family: docs/extend-a-method.md.
"""

from __future__ import annotations

from collections.abc import Mapping

from ground.canonical import digest
from ground.command import typed
from protocols.families.graphs import graph, hipporag2, linearrag, ppr, walk
from protocols.families.lists import ann, hybrid, lexical, prf, rescue, semantic
from protocols.route import (
    ENTITIES,
    ENTITY_VECTORS,
    TEXT,
    VECTOR,
    VECTOR_FIELDS,
    VECTOR_IF_HYBRID_SEED,
    NodeKind,
    RelationKind,
    Route,
    section_flag,
)

# In the order the server lists its routes. A new family is a new line, never an edit of one.
FAMILIES_IN_ORDER = (
    lexical,
    semantic,
    hybrid,
    graph,
    rescue,
    ann,
    walk,
    prf,
    ppr,
    hipporag2,
    linearrag,
)
ROUTES: dict[str, Route] = {route.family: route for module in FAMILIES_IN_ORDER for route in module.ROUTES}
FAMILIES = tuple(sorted(ROUTES))
# `lab protocol new`'s family flags (protocols/new.py), in the registry's order
PROTOCOL_FLAGS = tuple(route.protocol_flag for route in ROUTES.values() if route.protocol_flag is not None)


def route_of(method: Mapping) -> Route:
    """The route of a protocol method (validated protocols name only routes of this table)."""
    return ROUTES[method["route"]]


def fixture_flags(protocol: Mapping) -> list[str]:
    """The `lab embed build` flags a protocol's methods need beyond the vectors: the questions'
    entities where a request carries them, and each section a family's data names."""
    routes = [route_of(m) for m in protocol["methods"].values()]
    flags = ["--query-entities"] if any(ENTITIES in r.request or ENTITY_VECTORS in r.request for r in routes) else []
    return flags + [section_flag(section) for section in sorted({r.data.section for r in routes if r.data.section})]


def check_bindings(side: str, what: str, bound: Mapping[str, object]) -> None:
    """Refuse a side's binding table (the server's handlers, the evaluator's verifiers) that does
    not bind every route of ROUTES, or binds one ROUTES does not declare: raised at import, so a
    route can be neither served unverified nor verified unserved."""
    missing = [name for name in ROUTES if name not in bound]
    unknown = [name for name in bound if name not in ROUTES]
    faults = ([f"binds no {what} to the routes {missing}"] if missing else []) + \
        ([f"binds a {what} to {unknown}, which protocols/routes.py does not declare"] if unknown else [])
    if faults:
        raise RuntimeError(f"{side} {' and '.join(faults)}: every declared route needs exactly one {what}")


def _declared(kinds_of) -> dict:
    """Every node or relation kind the families declare, by name; one name, one declaration."""
    found: dict = {}
    for route in ROUTES.values():
        for kind in kinds_of(route):
            name = kind.name if isinstance(kind, NodeKind) else kind.kind
            if found.setdefault(name, kind) != kind:
                raise RuntimeError(f"protocols/routes.py: two families declare {name!r} differently")
    return found


NODE_KINDS: dict[str, NodeKind] = _declared(lambda route: route.data.nodes)
RELATION_KINDS: dict[str, RelationKind] = _declared(lambda route: route.data.relations)
SECTIONS: tuple[str, ...] = tuple(sorted({route.data.section for route in ROUTES.values() if route.data.section}))


def _catalog() -> dict[str, dict]:
    catalog: dict[str, dict] = {}
    for route in ROUTES.values():
        for name, profile in route.profiles.items():
            if catalog.setdefault(name, profile) is not profile:
                raise RuntimeError(f"protocols/routes.py: profile {name} is declared by two routes")
    return catalog


PROFILES: dict[str, dict] = _catalog()  # every frozen profile of every route: the lab's catalog


def catalog_problems(protocol: Mapping) -> list[str]:
    """Each ranking profile of the protocol that is not the catalog's copy of that name: what `lab
    run` and `lab protocol freeze` refuse. A profile is code (protocols/families/): the lab serves
    the profiles it declares, so a changed number needs a new profile there, not a new protocol."""
    out = []
    for name, frozen in sorted(protocol["ranking_profiles"].items()):
        served = PROFILES.get(name)
        if served is None:
            out.append(f"ranking profile {name} is not one this lab serves (the catalog: `{typed('protocol routes')}`)")
        elif digest(served) != digest(frozen):
            fields = sorted(k for k in set(served) | set(frozen) if digest(served.get(k)) != digest(frozen.get(k)))
            out.append(f"its copy of ranking profile {name} differs from the lab's catalog (fields: "
                       f"{', '.join(fields)}); a profile is frozen by name, and the lab serves only the profiles "
                       f"its code declares: a changed one is a new profile, added in protocols/families/ "
                       f"(docs/extend-a-method.md), not an edit of the protocol")
    return out


# ---------------------------------------------------------------- the docs' table of search routes
#
# docs/api.md, docs/contracts.md and docs/retrieval.md each hold it between the two markers below;
# `lab protocol routes` prints it and tests/protocols/test_route_table.py holds every copy to it, so a
# new family appears in the docs the day it is registered (as ir_measures builds its measure pages
# from its registry).
BEGIN = "<!-- search routes: made by `lab protocol routes` from protocols/routes.py -->"
END = "<!-- end of search routes -->"
_PART_FIELDS = {TEXT: ("query",), VECTOR: VECTOR_FIELDS, ENTITIES: ("query_entities",),
                ENTITY_VECTORS: ("entity_vectors",)}


def body_fields(route: Route) -> str:
    """The request's fields in wire order; `?` marks one a request may leave out."""
    names = []
    for name in route.request:
        if name == VECTOR_IF_HYBRID_SEED:
            names += [f'"{field}"?' for field in VECTOR_FIELDS]  # with a hybrid seed only
            continue
        for field in _PART_FIELDS.get(name, (name,)):
            names.append(f'"{field}"' + ("?" if field in route.optional else ""))
    return "{" + ", ".join(names) + "}"


def limits(route: Route) -> str:
    """How far `limit` may go, per profile where the profiles differ."""
    by_profile = {name: route.limit(profile) for name, profile in route.profiles.items()}
    ranges = sorted(set(by_profile.values()))
    if len(ranges) == 1:
        return f"{ranges[0][0]}..{ranges[0][1]}"
    return "; ".join(f"{low}..{high} ({', '.join(n for n, r in by_profile.items() if r == (low, high))})"
                     for low, high in ranges)


def _row(route: Route) -> str:
    profiles = ", ".join(f"`{name}`" for name in route.profiles)
    data = f" Data of its own: fixture section `{route.data.section}`." if route.data.section else ""
    page = route.page.removeprefix("docs/")
    return (f"| `POST .../search/{route.family}` | `{body_fields(route)}` | {limits(route)} | {profiles} | "
            f"{route.does}.{data} | [{page}]({page}) |")


def route_table(routes: Mapping[str, Route] | None = None) -> str:
    """The Markdown table with its markers, one row per route in the registry's order."""
    lines = [BEGIN, "", "| route | body (wire order; `?` optional) | limit | profiles | what it does | rules |",
             "|---|---|---|---|---|---|"]
    lines += [_row(route) for route in (ROUTES if routes is None else routes).values()]
    lines += ["", "Every search body may also carry `\"include_payload\": false` (hits then carry `\"payload\": null`, "
              "nothing else changes).", "", END]
    return "\n".join(lines)
