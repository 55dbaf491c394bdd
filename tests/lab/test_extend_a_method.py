"""docs/extend-a-method.md is true: a method family added through exactly its steps works.

The page's numbered steps name the files a new family touches. A copy of the repository gets the
toy family `coord` (tests/toy_family/) written into exactly those files; nothing else may change.
In that copy the layering contracts still hold, and a campaign with the toy method runs against a
real lab (tests/toy_family/campaign_check.py, run by pytest inside the copy, on this session's
generated and embedded inputs).
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
FAMILY = "coord"
COPIED = ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab", "scripts", "tests")
STEP = re.compile(r"^(\d+)\. \*\*`([^`]+)`\*\*( \(new\))?:", re.M)
COUNT = re.compile(r"^## The steps: (\d+) files, (\d+) of them new$", re.M)


@dataclass(frozen=True)
class New:
    """A step that writes a new file: the toy's version of it."""
    source: str


@dataclass(frozen=True)
class Entry:
    """A step that adds one entry to a table (and the import it needs)."""
    table: str
    entry: str
    import_line: str | None = None


# What each documented step writes for the toy family, keyed by the file the page names.
STEPS = {
    "protocols/routes.py": Entry(
        "ROUTES: dict[str, Route] = {",
        '    "coord": Route("coord", ("profile", TEXT, "limit", "min_terms"),\n'
        '                   lambda f, method, path, profiles: f.integer(method["min_terms"], join(path, "min_terms"),\n'
        '                                                               minimum=1),\n'
        '                   profiles={"coord_v1": {"family": "coord", "score": "distinct_query_terms_held",\n'
        '                                          "tie_break": "record_id_asc",\n'
        '                                          "tokenizer": "maximal_unicode_letter_digit_runs_lowercased"}}),'),
    "server/coord.py": New("coord_server.py"),
    "server/routes.py": Entry("HANDLERS: dict[str, Handler] = {", '    "coord": Handler(search_coord, ROUTES["coord"].profiles),',
                              "from server.coord import search_coord"),
    "evaluator/verification/verifiers/coord.py": New("coord_verifier.py"),
    "evaluator/verification/routes.py": Entry("VERIFIERS: dict[str, Verifier] = {", '    "coord": check_coord,',
                                              "from evaluator.verification.verifiers.coord import check_coord"),
}


def documented_steps() -> list[tuple[str, bool]]:
    """(file, new) for each numbered step of the page, `<family>` read as the toy's name."""
    steps = STEP.findall(PAGE.read_text())
    assert [int(number) for number, _, _ in steps] == list(range(1, len(steps) + 1)), steps
    return [(path.replace("<family>", FAMILY), bool(new)) for _, path, new in steps]


def add_entry(text: str, step: Entry) -> str:
    """The entry as the table's last, its import first in the import block."""
    head, sep, rest = text.partition(step.table + "\n")
    assert sep, f"no table {step.table!r}"
    body, close, tail = rest.partition("\n}\n")
    assert close, f"table {step.table!r} does not end with a closing brace on its own line"
    text = head + sep + body + "\n" + step.entry + close + tail
    if step.import_line:
        future = "from __future__ import annotations\n\n"
        assert future in text
        text = text.replace(future, future + step.import_line + "\n", 1)
    return text


def changed_files(copy: Path) -> dict[str, bool]:
    """Files of the copy that differ from the repository's: relative path -> new."""
    out = {}
    for path in sorted(copy.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(copy).as_posix()
        original = REPO / rel
        if not original.exists() or original.read_bytes() != path.read_bytes():
            out[rel] = not original.exists()
    return out


def test_the_page_counts_its_steps():
    steps = documented_steps()
    files, new = map(int, COUNT.search(PAGE.read_text()).groups())
    assert (len(steps), sum(is_new for _, is_new in steps)) == (files, new)
    assert len(steps) <= 5  # the goal the page is held to
    verifiers = [path for path, is_new in steps if is_new and path.startswith("evaluator/verification/")]
    assert verifiers == [f"evaluator/verification/verifiers/{FAMILY}.py"]  # one of them is the verifier
    for table in ("`ROUTES`", "`HANDLERS`", "`VERIFIERS`"):  # the tables the steps fill are the page's
        assert table in PAGE.read_text()


@pytest.fixture(scope="module")
def toy_copy(tmp_path_factory) -> Path:
    """The repository's code, with the toy family added through the page's steps."""
    copy = tmp_path_factory.mktemp("toy-family") / "repo"
    for name in COPIED:
        shutil.copytree(REPO / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    shutil.copyfile(REPO / "pyproject.toml", copy / "pyproject.toml")
    steps = dict(documented_steps())
    assert {path: isinstance(step, New) for path, step in STEPS.items()} == steps
    for path, step in STEPS.items():
        target = copy / path
        if isinstance(step, New):
            assert not target.exists()
            shutil.copyfile(TOY / step.source, target)
        else:
            target.write_text(add_entry(target.read_text(), step))
    return copy


def test_the_documented_steps_are_the_only_changes(toy_copy):
    assert changed_files(toy_copy) == dict(documented_steps())


def test_the_layering_holds_with_the_toy_family(toy_copy):
    done = lint(toy_copy)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_the_toy_family_serves_and_verifies_a_campaign(toy_copy, tmp_path_factory):
    inputs = built_inputs(tmp_path_factory)
    env = {**os.environ, "PYTHONPATH": str(toy_copy),
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
