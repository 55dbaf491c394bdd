"""The docs' search-route tables come from the registry (protocols/routes.py): every page that holds
the table holds exactly what `lab protocol routes` prints, every route of ROUTES is in it, and
docs/api.md shows a real page of every route."""

from __future__ import annotations

import re

import pytest

from protocols.routes import BEGIN, END, ROUTES, route_table, table_in
from tests.conftest import REPO, lab_cli

PAGES = ("docs/api.md", "docs/contracts.md", "docs/retrieval.md")


@pytest.mark.parametrize("page", PAGES)
def test_the_page_holds_the_registrys_table(page):
    held = table_in((REPO / page).read_text())
    assert held is not None, f"{page} holds no table between {BEGIN!r} and {END!r}"
    assert held == route_table(), f"{page}: run `lab protocol routes` and paste its table between the markers"


def test_the_table_has_one_row_per_route_in_the_registrys_order():
    rows = re.findall(r"^\| `POST \.\.\./search/([a-z0-9_]+)` \|", route_table(), re.M)
    assert rows == list(ROUTES)


def test_the_command_prints_the_table():
    assert lab_cli("protocol", "routes").stdout.rstrip("\n") == route_table()


def test_every_route_has_a_page_example_in_the_api_page():
    text = (REPO / "docs" / "api.md").read_text()
    shown = set(re.findall(r"^#### Search: ([a-z0-9_]+)", text, re.M))
    assert set(ROUTES) - shown == set(), "docs/api.md: `lab bench api-examples --search` prints them"


@pytest.mark.heavy  # a real lab asked once per route
def test_the_generator_of_those_examples_answers_every_route(tmp_path):
    from bench.api_examples import search_examples

    printed = "\n".join(search_examples(tmp_path))
    assert re.findall(r"^#### Search: ([a-z0-9_]+)", printed, re.M) == list(ROUTES)
    assert re.findall(r"^`(\d+)`$", printed, re.M) == ["200"] * len(ROUTES)
