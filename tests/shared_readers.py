"""A pytest plugin for .ci/run's second lane: `--shared-readers-only` collects only the test modules
that can read the shared samples, the ones importing a shared name of tests/conftest.py (SHARED,
SHARED_DATA, SAMPLE_DIR, require_shared), directly or through a helper module of tests/.

That lane hides ../shared (LAB_SHARED_DIR) to catch a test that needs the samples without skipping;
only a module holding one of those names can see the difference, so running the other modules again
there would prove nothing."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

SHARED_NAMES = frozenset({"SHARED", "SHARED_DATA", "SAMPLE_DIR", "require_shared"})
CONFTEST = "tests.conftest"
OPTION = "--shared-readers-only"


def pytest_addoption(parser) -> None:
    parser.addoption(OPTION, action="store_true",
                     help="collect only the test modules that import a shared-data name of tests/conftest.py")


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    if not config.getoption(OPTION) or collection_path.suffix != ".py" or \
            not collection_path.name.startswith("test_"):
        return None  # folders and conftest files are collected as usual
    return not reads_shared(collection_path, _root(collection_path))


def _root(path: Path) -> Path:
    """The folder holding the `tests` package the module belongs to."""
    for parent in path.parents:
        if parent.name == "tests" and (parent / "__init__.py").exists():
            return parent.parent
    raise ValueError(f"{path} is not inside a tests package")


def reads_shared(module: Path, root: Path) -> bool:
    """Whether `module` imports a shared name of tests/conftest.py, itself or through modules of tests/
    it imports. A module importing conftest whole, or with `*`, counts: it may read any name."""
    return _reads_shared(module.resolve(), root.resolve(), frozenset())


def _reads_shared(module: Path, root: Path, seen: frozenset[Path]) -> bool:
    for imported, names in _imports(module):
        if imported == CONFTEST:
            if names is None or "*" in names or names & SHARED_NAMES:
                return True
            continue
        helper = _module_file(imported, root)
        if helper is not None and helper not in seen and _reads_shared(helper, root, seen | {module}):
            return True
    return False


@cache
def _imports(module: Path) -> tuple[tuple[str, frozenset[str] | None], ...]:
    """(module imported, names taken from it or None for the module whole), for every `tests.` import."""
    tree = ast.parse(module.read_text(encoding="utf-8"), filename=str(module))
    package = _dotted(module.parent)
    found: list[tuple[str, frozenset[str] | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names if alias.name.startswith("tests"))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            if not base.startswith("tests"):
                continue
            names = frozenset(alias.name for alias in node.names)
            found.append((base, names))
            # `from tests import conftest` takes the module whole
            found.extend((f"{base}.{name}", None) for name in names)
    return tuple(found)


def _dotted(folder: Path) -> str:
    parts = []
    while (folder / "__init__.py").exists():
        parts.append(folder.name)
        folder = folder.parent
    return ".".join(reversed(parts))


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if node.level == 0:
        return node.module or ""
    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(parent + ([node.module] if node.module else []))


def _module_file(dotted: str, root: Path) -> Path | None:
    path = root.joinpath(*dotted.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None
