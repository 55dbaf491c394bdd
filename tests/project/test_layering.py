"""The layering of docs/layering.md holds: import-linter checks every contract in pyproject.toml.

The contracts are the rules (stages in layers, the evaluator never importing the server, the layers
inside the server and the evaluator, no circle inside any package). Here they are run on the
repository, and shown to break on a copy of it that breaks each kind of rule once.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab")
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
CONTRACTS = {contract["id"]: contract["name"] for contract in CONFIG["contracts"]}


def lint(root: Path) -> subprocess.CompletedProcess:
    """import-linter on the packages under `root` (a subprocess: it puts its directory on sys.path)."""
    code = ("import sys\nfrom importlinter.cli import lint_imports\n"
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))\n")
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)


def test_every_layering_contract_holds():
    done = lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in done.stdout, done.stdout
    assert set(CONFIG["root_packages"]) == set(PACKAGES)


def test_docs_layering_names_every_contract():
    page = (REPO / "docs" / "layering.md").read_text()
    assert [cid for cid in CONTRACTS if f"`{cid}`" not in page] == []


@pytest.mark.parametrize("path, line, broken", [
    # the evaluator's checks would no longer be independent of the code they check
    ("evaluator/verification/recompute.py", "import server.retrieval.bm25", "stages"),
    # a method family reaching up into the route table that binds it: a circle inside server
    ("server/retrieval/page_parts.py", "from server import routes", "server-layers"),
    ("server/retrieval/page_parts.py", "from server import routes", "no-circles"),
    # the server leaning on another stage's code instead of its own
    ("server/store/store.py", "import builders.title_graph", "server-imports-protocols-only"),
    # a page check reaching into the campaign that runs it
    ("evaluator/verification/verify.py", "import evaluator.evaluate.evaluate", "evaluator-layers"),
    # a verifier reading the server code it checks (also a stage breach: both contracts say so)
    ("evaluator/verification/verifiers/graphs/ppr.py", "import server.families.ppr.pagerank", "verifiers-recompute-alone"),
    # one family's verifier leaning on another's code instead of what verification shares
    ("evaluator/verification/verifiers/graphs/ppr.py", "import evaluator.verification.verifiers.graphs.walk",
     "verifiers-independent"),
    ("evaluator/verification/verifiers/lists/prf.py", "import evaluator.verification.verifiers.lists.lexical",
     "verifiers-independent"),
    # a route's verifier reaching into the shared Checker that dispatches to it
    ("evaluator/verification/verifiers/lists/lexical.py", "import evaluator.verification.verify", "verification-layers"),
    # the fixture contract depending on how one encoder happens to run
    ("builders/embedding/contract.py", "import builders.embedding.execution.parallel", "embedding-layers"),
])
def test_a_broken_rule_breaks_the_lint(tmp_path, path, line, broken):
    for package in PACKAGES:
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    shutil.copyfile(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / path
    target.write_text(target.read_text() + f"\n{line}  # the violation under test\n")
    done = lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    name = " ".join(CONTRACTS[broken].split())
    assert f"{name} BROKEN" in " ".join(done.stdout.split()), done.stdout


def imported_modules(path: Path) -> set[str]:
    """Every absolute module a file names in an import statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_benchmarks_import_nothing_above_the_stages():
    # bench is outside import-linter's root packages; `lab bench` imports it, so bench importing
    # `lab` would be a circle. (scripts/ are leaves: each calls the Command its lab subcommand runs.)
    files = sorted((REPO / "bench").rglob("*.py"))
    assert files
    offenders = {str(f.relative_to(REPO)): sorted(m for m in imported_modules(f) if m.split(".")[0] == "lab")
                 for f in files}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_importing_every_evaluator_module_loads_no_server_module():
    # The contracts read import statements; a module loaded another way (importlib with a computed
    # name) would slip past them. Importing every evaluator module in a fresh interpreter and
    # finding no server module loaded closes that gap for everything that runs at import.
    modules = sorted(".".join(f.relative_to(REPO).with_suffix("").parts) for f in (REPO / "evaluator").rglob("*.py")
                     if f.stem != "__init__")
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m == 'server' or m.startswith('server.')))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert "evaluator.verification.verify" in modules and "evaluator.verification.routes" in modules
