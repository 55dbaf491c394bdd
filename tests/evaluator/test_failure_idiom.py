"""Every check speaks one idiom (evaluator/verification/failure.py): a generator of findings.

Read from the source: no check takes a `fail` callback or returns a list of findings, and no check's
findings are dropped, which a generator called as a bare statement would do silently (its body never
runs, so a broken page would pass).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

CHECKS = ("Findings", "Generator[Finding")  # how a check's return is annotated
PLACES = [REPO / "evaluator" / "verification", REPO / "evaluator" / "evaluate" / "base_pool.py",
          REPO / "tests" / "toy_family"]


def sources() -> list[Path]:
    files = [path for place in PLACES for path in ([place] if place.is_file() else sorted(place.rglob("*.py")))]
    assert len(files) > 20, "the verification sources were not found"
    return files


def functions(tree: ast.AST) -> list[ast.FunctionDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]


def check_names() -> set[str]:
    names = set()
    for path in sources():
        for fn in functions(ast.parse(path.read_text())):
            if fn.returns is not None and ast.unparse(fn.returns).startswith(CHECKS):
                names.add(fn.name)
    return names


def called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def dropped_calls(source: str, checks: set[str]) -> list[str]:
    """Calls of a check that stand alone as a statement: their findings go nowhere."""
    return [f"line {node.lineno}: {called_name(node.value)}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and called_name(node.value) in checks]


def test_every_route_verifier_is_a_check():
    names = check_names()
    assert {"check_lexical", "check_walk", "check_hipporag2", "check_linearrag", "check_ppr", "check_rescue",
            "check_order", "check_exact", "link_failures", "walked_failures"} <= names


def test_no_check_takes_a_callback_or_returns_a_list_of_findings():
    found = []
    for path in sources():
        for fn in functions(ast.parse(path.read_text())):
            if any(arg.arg == "fail" for arg in fn.args.args):
                found.append(f"{path.relative_to(REPO)}: {fn.name} takes `fail`")
            if fn.returns is not None and ast.unparse(fn.returns) in ("Found", "list[tuple[int | None, str, str]]"):
                found.append(f"{path.relative_to(REPO)}: {fn.name} returns a list of findings")
    assert found == []


def test_every_route_verifier_is_typed():
    from evaluator.verification.routes import VERIFIERS

    untyped = []
    for name, verifier in VERIFIERS.items():
        hints = verifier.check.__annotations__
        if set(hints) != {"checker", "query", "page", "spec", "return"}:
            untyped.append(f"{name}: {sorted(hints)}")
        elif hints["checker"] != "PageChecker" or hints["return"] != "Findings":
            untyped.append(f"{name}: checker {hints['checker']}, returns {hints['return']}")
    assert untyped == []


def test_no_check_is_called_for_nothing():
    names = check_names()
    found = [f"{path.relative_to(REPO)} {where}" for path in sources()
             for where in dropped_calls(path.read_text(), names)]
    assert found == []


def test_a_dropped_check_is_seen():
    source = "def check_page(hits):\n    check_order(hits, exact=True)\n    yield from check_order(hits, exact=False)\n"
    assert dropped_calls(source, {"check_order"}) == ["line 2: check_order"]
