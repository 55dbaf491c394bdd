"""Every repository path that a doc, a docstring or a comment names exists: no exceptions list.

A reference is a `/`-separated path that starts at one of the repository's top-level entries
(`server/retrieval/fusion.py`, `docs/design.md`, `tests/`), with `{a,b}` alternatives expanded and
`*` matched as a glob; a dotted module path that starts at one of our packages
(`evaluator.numbers.metrics`, `protocols.schema.load_protocol`), which must name a module, or a
module and a name that module binds; and a Markdown link to a file, relative to the page. A
placeholder (`<family>`) stands for no path and is not read. Paths outside the repository
(`../shared/…`) and the outputs a command writes under a run directory are not the repository's.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab", "bench", "scripts", "tests")


SKIPPED_PARTS = ("__pycache__", "runs")  # caches and the run directories `make demo` writes


def prose_files() -> list[str]:
    """Every page and Python file of the repository (not the venv, git's or a tool's hidden folders)."""
    return sorted(path.relative_to(REPO).as_posix() for suffix in ("*.py", "*.md") for path in REPO.rglob(suffix)
                  if not any(part.startswith(".") or part in SKIPPED_PARTS for part in path.relative_to(REPO).parts))


TOP = sorted((entry.name for entry in REPO.iterdir() if entry.is_dir() and not entry.name.startswith(".")
              and entry.name not in SKIPPED_PARTS), key=len, reverse=True)
# a path: one of the repository's top-level folders, then path characters
SLASHED = re.compile(r"(?<![\w./-])((?:%s)/[\w.{},*/-]*)" % "|".join(map(re.escape, TOP)))
DOTTED = re.compile(r"(?<![\w./-])((?:%s)(?:\.[A-Za-z_]\w*)+)" % "|".join(PACKAGES))
# a dotted name ending in one of these is a file's name (`lab.log`, `public.json`), not a module path
FILE_SUFFIXES = ("py", "json", "jsonl", "md", "log", "html", "csv", "txt", "toml", "lock", "qrels")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def expand(path: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", path)
    if not match:
        return [path]
    return [p for alt in match.group(1).split(",") for p in expand(path[:match.start()] + alt + path[match.end():])]


def slashed_exists(path: str) -> bool:
    if "*" in path:
        return any(REPO.glob(path))
    return (REPO / path).exists()


@functools.cache
def _bound(module: Path) -> frozenset[str]:
    """Every name a module binds: its functions and classes, assignments and imports, at any depth."""
    names = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return frozenset(names)


def dotted_exists(name: str) -> bool:
    """A module, a package, a package and a file inside it, or a module (or package) and a name it binds."""
    parts = name.rstrip(".").split(".")
    for cut in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if module.is_file() or (cut == len(parts) and base.is_dir()):
            rest = parts[cut:]
            if not rest:
                return True
            if base.is_dir() and (base / rest[0]).exists():  # a data folder or file inside a package
                return True
            return module.is_file() and rest[0] in _bound(module)
    return False


def py_text(path: Path) -> str:
    """The docstrings and comments of a Python file, one per line."""
    source = path.read_text(encoding="utf-8")
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append(doc)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            out.append(token.string)
    return "\n".join(out)


@functools.cache
def file_text(rel: str) -> str:
    """What of a file is prose: a page whole, a Python file's docstrings and comments."""
    path = REPO / rel
    return py_text(path) if rel.endswith(".py") else path.read_text(encoding="utf-8")


def references(rel: str, text: str) -> list[tuple[str, str]]:
    """(kind, reference) of every path `text` (of the file `rel`) names."""
    path = REPO / rel
    found: list[tuple[str, str]] = []
    for match in SLASHED.finditer(text):
        ref = match.group(1)
        if "<" in text[match.end():match.end() + 1] or ref.endswith("/<"):
            continue
        found.extend(("path", p.rstrip(".,")) for p in expand(ref))  # a sentence's own stop is no part of it
    for match in DOTTED.finditer(text):
        after = text[match.end():match.end() + 1]
        if after in ("<", "/") or match.group(1).rsplit(".", 1)[1] in FILE_SUFFIXES:
            continue
        found.append(("module", match.group(1)))
    if rel.endswith(".md"):
        for match in LINK.finditer(text):
            target = match.group(1)
            if "://" in target or target.startswith(("mailto:", "../")):
                continue
            found.append(("link", str((path.parent / target).resolve().relative_to(REPO.resolve()))
                          if (path.parent / target).resolve().is_relative_to(REPO.resolve()) else target))
    return found


def absent(rel: str, text: str) -> list[str]:
    return [f"{rel}: {kind} {ref}" for kind, ref in references(rel, text)
            if not (dotted_exists(ref) if kind == "module" else slashed_exists(ref))]


PROSE = prose_files()
ISSUE = re.compile(r"\b[Ii]ssues? \d+")


@pytest.mark.heavy  # reads every page and Python file of the tree
def test_every_named_path_exists():
    assert [fault for rel in PROSE for fault in absent(rel, file_text(rel))] == []


def test_the_check_finds_each_kind_of_stale_reference():
    """The seven stale references this test was written for, each of its kind, are found again."""
    stale = ("names server/{rescue,walk,ann}/profiles.py and evaluator/verification/entity_graph.py, "
             "server/retrieval/quantized.py, tests/test_isolation.py and importer/selection.py; "
             "tests/test_scripts.py; `evaluator.metrics` and [a page](no-such-page.md)")
    faults = absent("docs/design.md", stale)
    assert [fault.split(" ", 2)[2] for fault in faults] == [
        "server/rescue/profiles.py", "server/walk/profiles.py", "server/ann/profiles.py",
        "evaluator/verification/entity_graph.py", "server/retrieval/quantized.py", "tests/test_isolation.py",
        "importer/selection.py", "tests/test_scripts.py", "evaluator.metrics", "docs/no-such-page.md"]
    assert absent("docs/design.md", "docs/design.md, `server/<family>.py`, `protocols.schema.load_protocol`, "
                                    "lab.log and [§3](design.md#3-canonical-json-digests-and-files)") == []


@pytest.mark.heavy  # reads every page and Python file of the tree
def test_no_docstring_or_comment_cites_an_issue_number():
    """A tracker the repository does not hold explains nothing: a comment says the reason itself."""
    assert [f"{rel}: {m.group(0)}" for rel in PROSE if rel.endswith(".py")
            for m in ISSUE.finditer(file_text(rel))] == []
