"""One request idiom for every route (server/routes.py, server/retrieval/request.py), over a real lab:
the same fault sent to each route is answered with the same code and one wording, whatever the
family; an unknown route is one 404, before the body is read or after."""

from __future__ import annotations

import pytest

from evaluator.connection.client import LabError
from protocols.route import SEARCH_LIMIT
from protocols.routes import ROUTES
from server.routes import FIELDS


def body_of(route: str, **given) -> dict:
    """Every field the route requires (values the profile and limit checks never read), then `given`."""
    return {**{name: None for name in FIELDS[route].required}, **given}


def refusal(client, route: str, body: dict) -> LabError:
    with pytest.raises(LabError) as caught:
        client.search(route, body)
    return caught.value


def test_an_unknown_profile_gets_one_wording_on_every_route(fresh_scope):
    client = fresh_scope()
    for route, declared in ROUTES.items():
        error = refusal(client, route, body_of(route, profile="no_such_profile_v9", limit=1))
        assert (error.status, error.code) == (422, "unknown_profile"), route
        assert error.message == (f"unknown profile 'no_such_profile_v9' for the {route} route; "
                                 f"expected one of {', '.join(declared.profiles)}")


def test_a_limit_past_the_routes_rule_gets_one_wording_on_every_route(fresh_scope):
    client = fresh_scope()
    for route, declared in ROUTES.items():
        profile = next(iter(declared.profiles))
        low, high = declared.limit(declared.profiles[profile])
        error = refusal(client, route, body_of(route, profile=profile, limit=high + 1))
        assert (error.status, error.code, error.message) == (422, "out_of_range",
                                                            f"limit must be in {low}..{high}, got {high + 1}"), route
        assert (low, high) == (1, declared.profiles[profile].get("limit_max", SEARCH_LIMIT[1]))


def test_an_unknown_route_is_one_404(fresh_scope):
    client = fresh_scope()
    for body in ({}, {"profile": "bm25_v1", "query": "x", "limit": 1}):
        error = refusal(client, "no_such_route", body)
        assert (error.status, error.code) == (404, "unknown_route")
        assert error.message.startswith("no search route 'no_such_route'; routes: lexical, semantic")
