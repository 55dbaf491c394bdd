"""The evaluator never imports the server: its checks must be computed independently (docs/design.md §2)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVALUATOR = REPO / "evaluator"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level >= 2:
            # relative to the repository root (`from ..server import x`, `from .. import server`):
            # named as the absolute module it reaches
            names.update([node.module] if node.module else [alias.name for alias in node.names])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            names.add(str(node.args[0].value))
    return names


def test_no_evaluator_module_names_server_in_an_import():
    files = sorted(EVALUATOR.rglob("*.py"))
    assert len(files) >= 10
    offenders = {str(f.relative_to(EVALUATOR)): sorted(m for m in imported_modules(f) if m == "server" or m.startswith("server."))
                 for f in files}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_scan_would_see_a_server_import(tmp_path):
    # the check above can fail: a file importing server in any of these forms is caught
    probe = tmp_path / "probe.py"
    probe.write_text("import server.retrieval.graph\nfrom server import exact\nimportlib.import_module('server.retrieval.search')\n"
                     "from ..server import indexes\nfrom .. import server\n")
    assert imported_modules(probe) == {"server.retrieval.graph", "server", "server.retrieval.search"}


def test_importing_every_evaluator_module_loads_no_server_module():
    modules = sorted(".".join(f.relative_to(REPO).with_suffix("").parts) for f in EVALUATOR.rglob("*.py")
                     if f.stem != "__init__")
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m == 'server' or m.startswith('server.')))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert "evaluator.verification.verify" in modules and "evaluator.verification.recompute" in modules


# docs/design.md §2: who may import whom. Scripts, tests and benchmarks may import anything.
ALLOWED_IMPORTS = {
    "protocols": set(),
    "importer": {"protocols"},
    "builders": {"protocols"},
    "server": {"protocols"},
    "evaluator": {"protocols", "builders"},
}


def test_every_stage_imports_only_what_design_allows():
    violations = {}
    for stage, allowed in ALLOWED_IMPORTS.items():
        for path in sorted((REPO / stage).rglob("*.py")):
            for module in imported_modules(path):
                top = module.split(".")[0]
                if top in ALLOWED_IMPORTS and top != stage and top not in allowed:
                    violations.setdefault(str(path.relative_to(REPO)), []).append(module)
    assert violations == {}
