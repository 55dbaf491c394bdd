"""The docs' search-route table comes from the registry (protocols/routes.py): docs/api.md holds
exactly what `lab protocol routes` prints (`--write` puts it there), no other page holds a copy,
every route of ROUTES is in it, and docs/api.md shows a real page of every route a frozen protocol
ranks with."""

from __future__ import annotations

import re

import pytest

from ground.marked_block import block_in
from protocols.routes import BEGIN, END, ROUTES, route_table
from tests.conftest import REPO, lab_cli
from tests.protocol_files import frozen_families

PAGE = "docs/api.md"


def test_the_page_holds_the_registrys_table():
    held = block_in((REPO / PAGE).read_text(), BEGIN, END)
    assert held is not None, f"{PAGE} holds no table between {BEGIN!r} and {END!r}"
    assert held == route_table(), f"{PAGE}: run `lab protocol routes --write {PAGE}`"


def test_no_other_page_holds_a_copy():
    copies = [path.relative_to(REPO).as_posix() for path in sorted((REPO / "docs").rglob("*.md"))
              if BEGIN in path.read_text(encoding="utf-8")]
    assert copies == [PAGE]


def test_write_puts_the_table_between_the_markers_and_refuses_a_page_without_them(tmp_path):
    page = tmp_path / "api.md"
    page.write_text(f"# API\n\n{BEGIN}\n| an old table |\n{END}\n\nafter\n", encoding="utf-8")
    assert "wrote the route table" in lab_cli("protocol", "routes", "--write", page).stdout
    assert page.read_text(encoding="utf-8") == f"# API\n\n{route_table()}\n\nafter\n"
    assert "up to date" in lab_cli("protocol", "routes", "--write", page).stdout  # again: nothing to change
    bare = tmp_path / "bare.md"
    bare.write_text("# no markers\n", encoding="utf-8")
    done = lab_cli("protocol", "routes", "--write", bare, check=False)
    assert done.returncode == 2 and "holds no markers for the route table" in done.stderr
    assert bare.read_text(encoding="utf-8") == "# no markers\n"


def test_the_table_has_one_row_per_route_in_the_registrys_order():
    rows = re.findall(r"^\| `POST \.\.\./search/([a-z0-9_]+)` \|", route_table(), re.M)
    assert rows == list(ROUTES)


def test_the_command_prints_the_table():
    assert lab_cli("protocol", "routes").stdout.rstrip("\n") == route_table()


def test_every_measured_route_has_a_page_example_in_the_api_page():
    text = (REPO / "docs" / "api.md").read_text()
    shown = set(re.findall(r"^#### Search: ([a-z0-9_]+)", text, re.M))
    assert frozen_families() <= set(ROUTES)
    assert frozen_families() - shown == set(), "docs/api.md: `lab bench api-examples --search --write docs/api.md` writes them"


@pytest.mark.heavy  # a real lab asked once per route
def test_the_api_page_holds_the_page_of_every_route_the_generator_writes(tmp_path):
    """Written between its markers, every route answers 200, and docs/api.md holds the same bytes but
    for the lab's journal id (the one random field of a page)."""
    from bench import api_examples

    page = tmp_path / "api.md"
    page.write_text(f"before\n{api_examples.BEGIN}\nold\n{api_examples.END}\nafter\n", encoding="utf-8")
    done = lab_cli("bench", "api-examples", "--search", "--write", page)
    assert done.stdout.strip() == f"wrote the page of every route into {page}"
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"before\n{api_examples.BEGIN}\n") and text.endswith(f"{api_examples.END}\nafter\n")
    written = block_in(text, api_examples.BEGIN, api_examples.END)
    assert written is not None
    assert re.findall(r"^#### Search: ([a-z0-9_]+)", written, re.M) == list(ROUTES)
    assert re.findall(r"^`(\d+)`$", written, re.M) == ["200"] * len(ROUTES)
    journal = re.compile(r'"journal_id": "journal-[0-9a-f]+"')
    held = block_in((REPO / PAGE).read_text(encoding="utf-8"), api_examples.BEGIN, api_examples.END)
    assert held is not None and journal.sub("", held) == journal.sub("", written), \
        f"{PAGE}: run `lab bench api-examples --search --write {PAGE}`"


def test_the_generator_refuses_a_page_without_its_markers_before_starting_a_lab(tmp_path):
    bare = tmp_path / "bare.md"
    bare.write_text("# no markers\n", encoding="utf-8")
    done = lab_cli("bench", "api-examples", "--search", "--write", bare, check=False)
    assert done.returncode == 2 and "holds no markers for the page of every route" in done.stderr
    assert bare.read_text(encoding="utf-8") == "# no markers\n" and list(tmp_path.iterdir()) == [bare]
    alone = lab_cli("bench", "api-examples", "--write", bare, check=False)
    assert alone.returncode == 2 and "--write goes with --search" in alone.stderr
