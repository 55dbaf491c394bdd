"""docs/extend-a-method.md is true: method families added through exactly its steps work.

The page's numbered steps name the files a new family touches: steps 1 to 7 for any family, 8 and 9
for a family with data of its own. A full copy of the repository (docs/ and bench/ included) gets
two toy families written into exactly those files: `coord` (tests/toy_family/coord_*.py, no data of
its own: steps 1 to 7) and `titlesim` (tests/toy_family/titlesim_*.py, titles as node memories from
a fixture section: steps 1 to 9); a step the page says is made by a command is made by running it
in the copy; nothing else may change. In that copy the layering contracts still hold, the tests
that read the registry against the docs and the frozen protocols (the route table, the API
examples, the catalog) pass, a campaign with both toy methods runs against a real lab
(tests/toy_family/campaign_check.py, run by pytest inside the copy, on this session's generated and
embedded inputs), and in the long lane the whole fast lane passes there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from protocols.routes import ROUTES, check_bindings
from tests.evaluation_fixtures import built_inputs
from tests.project.test_layering import lint

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "extend-a-method.md"
TOY = REPO / "tests" / "toy_family"
# the whole tree but what a run, an install or a tool leaves
NOT_COPIED = (".git", ".venv", "runs", "__pycache__", ".pytest_cache", ".mypy_cache", ".hypothesis", "*.egg-info",
              "build")
STEP = re.compile(r"^(\d+)\. \*\*`([^`]+)`\*\*( \(new\))?:", re.M)
KIND = re.compile(r"^## A family (without|with) data of its own: (\d+) files, (\d+) of them new$", re.M)
WITHOUT_DATA = 7  # the steps every family takes; a family with data takes the rest too
# the tests that read the registry against what else the tree holds: the docs' route table and API
# examples, the catalog against the frozen protocols (each failed in a full copy before the table had
# one home and a family being added could serve unfrozen profiles)
REGISTRY_READERS = ("tests/protocols/test_route_table.py",
                    "tests/server/test_retrieval_methods.py::test_catalog_equals_protocol_ranking_profiles",
                    "tests/server/test_retrieval_http.py::test_catalog_equals_the_protocol")


@dataclass(frozen=True)
class New:
    """A step that writes a new file: the toy's version of it."""
    source: str


@dataclass(frozen=True)
class Run:
    """A step the page says a command makes: the `lab` command's arguments, run in the copy."""
    args: tuple[str, ...]


@dataclass(frozen=True)
class Entry:
    """A step that adds one entry to a table (and the import it needs)."""
    table: str
    entry: str
    import_line: str


KIND_OF = {"coord": "lists", "titlesim": "lists"}  # both rank passages by scores: the `lists/` folders


def concrete(path: str, family: str) -> str:
    """A step's file for one family: `<family>` and the verifier's `<kind>` filled in."""
    return path.replace("<family>", family).replace("<kind>", KIND_OF[family])


def registry_steps(family: str, handler: str, verifier: str) -> dict:
    return {
        "docs/api.md": Run(("protocol", "routes", "--write", "docs/api.md")),
        "protocols/routes.py": Entry("FAMILIES_IN_ORDER = (", f"    {family},",
                                     f"from protocols.families.{KIND_OF[family]} import {family}"),
        "server/routes.py": Entry("HANDLERS: dict[str, Handler] = {", f'    "{family}": {handler},',
                                  f"from server.families.{family} import {handler}"),
        "evaluator/verification/routes.py": Entry("VERIFIERS: dict[str, Verifier] = {",
                                                  f'    "{family}": Verifier({verifier}),',
                                                  f"from evaluator.verification.verifiers.{KIND_OF[family]}.{family} import {verifier}"),
    }


# What each documented step writes for each toy family, keyed by the file the page names.
TOYS = {
    "coord": {
        "protocols/families/<kind>/<family>.py": New("coord_declaration.py"),
        "server/families/<family>.py": New("coord_server.py"),
        "evaluator/verification/verifiers/<kind>/<family>.py": New("coord_verifier.py"),
        **registry_steps("coord", "search_coord", "check_coord"),
    },
    "titlesim": {
        "protocols/families/<kind>/<family>.py": New("titlesim_declaration.py"),
        "server/families/<family>.py": New("titlesim_server.py"),
        "evaluator/verification/verifiers/<kind>/<family>.py": New("titlesim_verifier.py"),
        **registry_steps("titlesim", "search_titlesim", "check_titlesim"),
        "builders/embedding/sections/<family>.py": New("titlesim_section.py"),
        "builders/embedding/sections/__init__.py": Entry(
            "SECTIONS: dict[str, Section] = {section.name: section for section in (", "    titlesim.SECTION,",
            "from builders.embedding.sections import titlesim"),
    },
}
WITH_DATA = {"coord": False, "titlesim": True}


def documented_steps() -> list[tuple[str, bool]]:
    """(file, new) for each numbered step of the page, `<family>` as written."""
    steps = STEP.findall(PAGE.read_text())
    assert [int(number) for number, _, _ in steps] == list(range(1, len(steps) + 1)), steps
    return [(path, bool(new)) for _, path, new in steps]


def steps_of(family: str) -> list[tuple[str, bool]]:
    steps = documented_steps()
    return steps if WITH_DATA[family] else steps[:WITHOUT_DATA]


def add_entry(text: str, step: Entry) -> str:
    """The entry as the table's last, its import first in the import block."""
    head, sep, rest = text.partition(step.table + "\n")
    assert sep, f"no table {step.table!r}"
    close = re.search(r"\n[)\]}]+\n", rest)
    assert close, f"table {step.table!r} does not end with its closing bracket on a line of its own"
    text = head + sep + rest[: close.start()] + "\n" + step.entry + rest[close.start():]
    future = "from __future__ import annotations\n\n"
    assert future in text
    return text.replace(future, future + step.import_line + "\n", 1)


def changed_files(copy: Path) -> dict[str, bool]:
    """Files of the copy that differ from the repository's: relative path -> new."""
    out = {}
    for path in sorted(copy.rglob("*")):
        if not path.is_file() or {".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".hypothesis"} & set(path.parts):
            continue
        rel = path.relative_to(copy).as_posix()
        original = REPO / rel
        if not original.exists() or original.read_bytes() != path.read_bytes():
            out[rel] = not original.exists()
    return out


def test_the_page_counts_its_steps():
    steps = documented_steps()
    kinds = {kind: (int(files), int(new)) for kind, files, new in KIND.findall(PAGE.read_text())}
    assert kinds == {"without": (WITHOUT_DATA, sum(new for _, new in steps[:WITHOUT_DATA])),
                     "with": (len(steps), sum(new for _, new in steps))}
    verifiers = [path for path, is_new in steps if is_new and path.startswith("evaluator/verification/")]
    assert verifiers == ["evaluator/verification/verifiers/<kind>/<family>.py"]  # one of them is the verifier
    for table in ("`FAMILIES_IN_ORDER`", "`HANDLERS`", "`VERIFIERS`", "`SECTIONS`"):  # the tables the steps fill
        assert table in PAGE.read_text()


@pytest.fixture(scope="module")
def toy_copy(tmp_path_factory) -> Path:
    """The repository's code, with both toy families added through the page's steps."""
    copy = tmp_path_factory.mktemp("toy-family") / "repo"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(*NOT_COPIED))
    if (REPO / ".venv").is_dir():  # the commands the docs print run `.venv/bin/lab` from the clone
        (copy / ".venv").symlink_to(REPO / ".venv", target_is_directory=True)
    for family, steps in TOYS.items():
        assert {path: isinstance(step, New) for path, step in steps.items()} == dict(steps_of(family))
        for path, step in steps.items():
            target = copy / concrete(path, family)
            if isinstance(step, New):
                assert not target.exists()
                shutil.copyfile(TOY / step.source, target)
            elif isinstance(step, Entry):
                target.write_text(add_entry(target.read_text(), step))
        sort_imports(copy, [concrete(path, family) for path, step in steps.items() if isinstance(step, Entry)])
        for step in steps.values():  # the commands last: they read what the other steps wrote
            if isinstance(step, Run):
                done = subprocess.run([sys.executable, "-m", "lab", *step.args], cwd=copy, env=in_copy(copy),
                                      capture_output=True, text=True, timeout=120)
                assert done.returncode == 0, done.stdout + done.stderr
    # as the maintainer's clone: its changes committed, ../shared beside it
    for git in (["init", "-q"], ["add", "-A"], ["-c", "user.name=toy", "-c", "user.email=toy@lab", "commit", "-qm", "toy"]):
        subprocess.run(["git", *git], cwd=copy, check=True, capture_output=True, timeout=120)
    if (REPO.parent / "shared").is_dir():
        (copy.parent / "shared").symlink_to(REPO.parent / "shared", target_is_directory=True)
    return copy


def sort_imports(copy: Path, files: list[str]) -> None:
    """The import a table step adds, put in its place by the house's linter (`ruff check --fix`)."""
    subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--fix", "--select", "I", *files], cwd=copy,
                   check=True, capture_output=True, timeout=120)


def in_copy(copy: Path) -> dict:
    """The environment of a process that imports the copy's packages, not the repository's."""
    return {**os.environ, "PYTHONPATH": str(copy)}


def pytest_in_copy(copy: Path, *args: str, timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=copy,
                          env=in_copy(copy), capture_output=True, text=True, timeout=timeout)


def test_the_documented_steps_are_the_only_changes(toy_copy):
    want = {concrete(path, family): new for family in TOYS for path, new in steps_of(family)}
    assert changed_files(toy_copy) == want


@pytest.mark.heavy  # runs test modules in a copy of the tree
def test_the_registry_readers_pass_with_the_toy_families(toy_copy):
    """The docs' route table (written by the documented command), the API examples of every measured
    route and the catalog against the frozen protocols hold in the copy."""
    done = pytest_in_copy(toy_copy, "-m", "not slow and not heavy", *REGISTRY_READERS, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "passed" in done.stdout and "failed" not in done.stdout


@pytest.mark.slow  # the whole fast lane a second time, in the copy (make test-long)
def test_the_fast_lane_passes_with_the_toy_families(toy_copy):
    # this module adds the toys to a clean tree: in the copy, where they are added, it has nothing to do
    done = pytest_in_copy(toy_copy, "-m", "not slow and not heavy", "-n", "auto", "--maxprocesses", "4",
                          "--dist", "loadscope", "--deselect", "tests/lab/test_extend_a_method.py", timeout=1800)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_the_layering_holds_with_the_toy_families(toy_copy):
    done = lint(toy_copy)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_the_toy_families_serve_and_verify_a_campaign(toy_copy, tmp_path_factory):
    inputs = built_inputs(tmp_path_factory)
    env = {**in_copy(toy_copy),
           "TOY_FAMILY_INPUTS": json.dumps({name: str(value) for name, value in asdict(inputs).items()})}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/toy_family/campaign_check.py"],
                          cwd=toy_copy, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


def test_a_route_bound_on_one_side_only_stops_the_import():
    bound = {name: object() for name in ROUTES}
    check_bindings("test", "verifier", bound)
    with pytest.raises(RuntimeError, match=r"binds no verifier to the routes \['walk'\]"):
        check_bindings("test", "verifier", {name: value for name, value in bound.items() if name != "walk"})
    with pytest.raises(RuntimeError, match=r"binds a handler to \['coord'\], which protocols/routes.py does not declare"):
        check_bindings("test", "handler", {**bound, "coord": object()})
