"""Every method family has one shape (docs/extend-a-method.md): the shared parts name no family, a
search takes one path, and a page has one envelope.

- The Checker (evaluator/verification/verify.py), the channels' recomputation (recompute.py) and the
  protocol validator (protocols/schema.py) hold no family name: no string that is a route's name and
  no identifier one of whose words is one (a protocol's `graph_builder` names a stage, not a family).
- The scope's lock is taken once, by the route table (server/routes.py), never by a family.
- A page's envelope (its profile digest) is built in one place (server/retrieval/page_parts.py), and
  every hit by one of two builders: `page_parts.hit` (a ranked or fused hit) and
  `graph_nodes.mass_hit` (a hit of a walk's order), each taking the family's own fields by name.
- A family reads its body's fields through the `Search`'s methods (server/retrieval/request.py),
  never from the body itself, so a field is read and refused one way on every route.
"""

from __future__ import annotations

import ast
import re

import pytest

from protocols.routes import ROUTES
from tests.conftest import REPO

SHARED = ("evaluator/verification/verify.py", "evaluator/verification/recompute.py", "protocols/schema.py")
FAMILY_WORDS = set(ROUTES) | {word for name in ROUTES for word in name.split("_")} - {"ner"}


def family_names(path: str) -> list[str]:
    tree = ast.parse((REPO / path).read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if node.value in ROUTES:
                found.append(f"string {node.value!r} (line {node.lineno})")
        names = [node.id] if isinstance(node, ast.Name) else [node.attr] if isinstance(node, ast.Attribute) else \
            [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else \
            [node.arg] if isinstance(node, ast.arg) else []
        for name in names:
            words = name.lower().strip("_").split("_")
            hits = [w for i, w in enumerate(words) if w in FAMILY_WORDS
                    and not (w == "graph" and words[i + 1:i + 2] in (["builder"], ["builders"]))]
            if hits:
                found.append(f"identifier {name} (line {getattr(node, 'lineno', '?')})")
    return found


@pytest.mark.parametrize("path", SHARED)
def test_the_shared_parts_name_no_family(path):
    assert family_names(path) == []


def test_the_check_finds_a_family_name():
    """The check is not blind: the modules it held before the families moved out would fail it."""
    sample = ('def _check_hybrid_profile(f, profile):\n    if family == "graph":\n        return check_graph_builder(f)\n')
    path = REPO / "tests" / "project" / "_family_sample.py"
    path.write_text(sample)
    try:
        assert family_names("tests/project/_family_sample.py") == [
            "identifier _check_hybrid_profile (line 1)", "string 'graph' (line 2)"]
    finally:
        path.unlink()


def test_the_scopes_lock_is_taken_by_the_route_table_alone():
    takers = [path.relative_to(REPO).as_posix() for path in sorted((REPO / "server").rglob("*.py"))
              if re.search(r"with index\.lock\b", path.read_text())]
    assert takers == ["server/routes.py"]


def test_one_envelope_builds_every_page():
    builders = [path.relative_to(REPO).as_posix() for path in sorted((REPO / "server").rglob("*.py"))
                if '"profile_digest"' in path.read_text()]
    assert builders == ["server/retrieval/page_parts.py"]


def family_sources() -> list:
    paths = sorted((REPO / "server" / "families").rglob("*.py"))
    assert len(paths) > 20, "the families' modules were not found"
    return paths


def hand_built_hits(source: str) -> list[int]:
    """Lines of dict literals carrying a record's payload: a hit laid out by hand."""
    return [node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Dict)
            and any(isinstance(key, ast.Constant) and key.value == "payload" for key in node.keys)]


def body_reads(source: str) -> list[int]:
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Attribute) and node.attr == "body"]


def test_every_hit_is_built_by_the_two_builders():
    found = {path.relative_to(REPO).as_posix(): lines for path in family_sources()
             if (lines := hand_built_hits(path.read_text()))}
    assert found == {}
    builders = [path.relative_to(REPO).as_posix() for path in sorted((REPO / "server" / "retrieval").rglob("*.py"))
                if hand_built_hits(path.read_text())]
    assert builders == ["server/retrieval/graph_nodes.py", "server/retrieval/page_parts.py"]


def test_no_family_reads_its_body_but_through_the_search():
    found = {path.relative_to(REPO).as_posix(): lines for path in family_sources()
             if (lines := body_reads(path.read_text()))}
    assert found == {}


def test_one_function_writes_a_pages_exact_rationals():
    # docs/contracts.md, "Exact numbers on a page": one form, one writer
    writers = [path.relative_to(REPO).as_posix() for path in sorted((REPO / "server").rglob("*.py"))
               if re.search(r"numerator\}/|// common\}/", path.read_text())]
    assert writers == ["server/retrieval/exact.py"]


def test_every_handler_is_typed():
    from server.routes import HANDLERS

    assert {name: handler.__annotations__ for name, handler in HANDLERS.items()
            if handler.__annotations__ != {"index": "ScopeIndex", "search": "Search", "return": "dict"}} == {}


def test_the_idiom_checks_see_a_hand_built_hit_and_a_body_read():
    source = 'def search_x(index, search):\n    mode = search.body["mode"]\n    return {"id": 1, "payload": {}}\n'
    assert hand_built_hits(source) == [3] and body_reads(source) == [2]
