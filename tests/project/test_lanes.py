"""The two test lanes: `make test` runs the default suite (everything but `slow`), `make test-fast`
leaves out the tests marked `heavy` as well, yet still runs tests of every package. The markers are
read from pytest itself (every node with the markers pytest resolved for it, tests/lane_markers.py:
the session's own collection when it collected every module, else one --collect-only run), each lane is its marker expression over them, and a test
module counts for the packages it imports, so adding, renaming or marking tests keeps this true or
fails here."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import REPO
from tests.lane_markers import MARKED, RECORDED

PACKAGES = ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab")
FULL = "not slow"
FAST = "not slow and not heavy"


def make_lane(target: str) -> str:
    """The -m expression a Makefile target passes to pytest ('' when it passes none)."""
    recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.MULTILINE)
    assert recipe, f"Makefile has no target {target}"
    command = recipe.group(1).split("-m pytest", 1)[-1]  # pytest's options, after `python -m pytest`
    marker = re.search(r"-m\s+(?:'([^']*)'|(\S+))", command)
    return (marker.group(1) or marker.group(2)) if marker else ""


def collected_in_a_subprocess() -> dict[str, frozenset[str]]:
    """Every test's node id and the lane markers pytest resolved for it (collection only, nothing runs)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--print-lane-markers",
         "-m", ""], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    found = {}
    for line in result.stdout.splitlines():
        if line.startswith(MARKED):
            marks, _, node = line[len(MARKED):].partition("\t")
            found[node] = frozenset(marks.split(",")) - {""}
    assert found, "the collection printed no marked node"
    return found


def every_test_module() -> set[str]:
    return {path.relative_to(REPO).as_posix() for path in (REPO / "tests").rglob("test_*.py")}


@pytest.fixture(scope="module")
def markers(request) -> dict[str, frozenset[str]]:
    """This session's own record when it collected every test module (`make test` does: the record is
    taken before `-m` deselects), else a collection of its own in a subprocess."""
    recorded = request.config.stash.get(RECORDED, {})
    if {node.split("::")[0] for node in recorded} == every_test_module():
        return recorded
    return collected_in_a_subprocess()


def collected(markers: dict[str, frozenset[str]], expression: str) -> tuple[str, ...]:
    """Node ids the lane's `-m expression` selects (the three expressions the lanes use)."""
    lanes = {FULL: lambda m: "slow" not in m, FAST: lambda m: not {"slow", "heavy"} & m, "slow": lambda m: "slow" in m}
    return tuple(node for node, marks in markers.items() if lanes[expression](marks))


def packages_imported(module: str) -> set[str]:
    tree = ast.parse((REPO / module).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names & set(PACKAGES)


def test_the_markers_are_registered_and_strict():
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {line.split(":")[0] for line in options["markers"]}
    assert {"slow", "heavy"} <= registered
    assert "--strict-markers" in options["addopts"], "a misspelled marker would silently run in the fast lane"
    assert "-m 'not slow'" in options["addopts"], "slow must stay out of the default suite"


def test_make_test_is_the_default_suite_and_make_test_fast_leaves_out_heavy():
    assert make_lane("test") == "", "make test runs the default suite (pyproject addopts), as CI does"
    assert make_lane("test-fast") == FAST
    assert make_lane("test-long") == "slow"


def test_both_lanes_run_on_one_xdist_worker_per_core_and_xdist_is_pinned():
    makefile = (REPO / "Makefile").read_text()
    workers = re.search(r"^PYTEST_WORKERS \?= (.+)$", makefile, re.MULTILINE)
    assert workers and "-n auto" in workers.group(1) and "--dist loadscope" in workers.group(1)
    for target in ("test", "test-fast"):
        recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE).group(1)
        assert "$(PYTEST_WORKERS)" in recipe, f"make {target} runs in one process"
    assert workers.group(1) in (REPO / ".ci" / "run").read_text(), ".ci/run's no-shared lane runs in one process"
    pins = (REPO / "requirements.lock").read_text().splitlines()
    assert any(line.startswith("pytest-xdist==") for line in pins)


@pytest.mark.heavy  # collects the whole suite in a subprocess, per lane
def test_the_fast_lane_runs_tests_of_every_package(markers):
    covered: dict[str, int] = {}
    for module in {node.split("::")[0] for node in collected(markers, FAST)}:  # each module read once
        for package in packages_imported(module):
            covered[package] = covered.get(package, 0) + 1
    missing = [package for package in PACKAGES if not covered.get(package)]
    assert not missing, f"make test-fast runs no test importing {missing}"


@pytest.mark.heavy  # collects the whole suite in a subprocess, per lane
def test_the_fast_lane_is_a_strict_part_of_the_full_suite(markers):
    full, fast = set(collected(markers, FULL)), set(collected(markers, FAST))
    assert fast < full, "the fast lane must leave out the heavy tests and add nothing"
    slow = set(collected(markers, "slow"))
    assert slow and not slow & full, "slow tests stay out of make test and make test-fast"


PLANTED = {
    "tests/__init__.py": "",
    "tests/conftest.py": "SHARED = None\nREPO = None\n",
    "tests/helper.py": "from tests.conftest import SAMPLE_DIR\n",
    "tests/middle.py": "from tests.helper import SAMPLE_DIR\n",
    "tests/a/__init__.py": "",
    "tests/a/test_direct.py": "from tests.conftest import REPO, SHARED_DATA\n",
    "tests/a/test_relative.py": "from ..conftest import require_shared\n",
    "tests/a/test_whole.py": "from tests import conftest\n",
    "tests/a/test_through_helpers.py": "from tests.middle import SAMPLE_DIR\n",
    "tests/a/test_inside_a_function.py": "def test():\n    from tests.conftest import SHARED\n",
    "tests/a/test_other_names.py": "from tests.conftest import REPO, lab_cli\nfrom tests.a import test_other_names\n",
    "tests/a/test_no_tests_import.py": "import json\n",
}


def test_the_shared_readers_are_the_modules_importing_a_shared_name_directly_or_through_helpers(tmp_path):
    from tests.shared_readers import reads_shared

    for name, text in PLANTED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    readers = {path.name for path in (tmp_path / "tests" / "a").glob("test_*.py") if reads_shared(path, tmp_path)}
    assert readers == {"test_direct.py", "test_relative.py", "test_whole.py", "test_through_helpers.py",
                       "test_inside_a_function.py"}


def test_no_fixture_module_reads_the_shared_names():
    """The rule follows imports, not fixtures: a conftest or plugin module reading a shared name would
    hand it to modules the rule leaves out of .ci/run's no-shared lane."""
    from tests.conftest import pytest_plugins
    from tests.shared_readers import reads_shared

    fixture_modules = [*(REPO / "tests").rglob("conftest.py"), *(REPO.joinpath(*name.split(".")).with_suffix(".py")
                                                               for name in pytest_plugins)]
    assert len(fixture_modules) >= 3
    for module in fixture_modules:
        if module.name != "conftest.py" or module.parent != REPO / "tests":  # the home of the names
            assert not reads_shared(module, REPO), module


@pytest.mark.heavy  # collects a package in a subprocess
def test_ci_hides_the_shared_samples_from_the_fast_lanes_shared_readers_only():
    run = (REPO / ".ci" / "run").read_text()
    lane = re.search(r"^LAB_SHARED_DIR=\S+ (.*(?:\\\n.*)*)$", run, re.MULTILINE)
    assert lane and "--shared-readers-only" in lane.group(1) and f"-m '{FAST}'" in lane.group(1)
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--shared-readers-only",
         "tests/importer"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    modules = {line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line}
    assert "tests/importer/test_samples.py" in modules and "tests/importer/test_formats.py" not in modules


PLANTED_LOADS = {
    "pytest.ini": "[pytest]\nmarkers =\n    slow: long\n    heavy: seconds\nmodel_libraries =\n    colorsys\n    wave\n",
    "test_loads.py": ("import pytest\n\n\n"
                      "def test_an_unmarked_first_load():\n    import colorsys  # noqa: F401\n\n\n"
                      "@pytest.mark.heavy\ndef test_a_marked_load():\n    import wave  # noqa: F401\n\n\n"
                      "def test_no_load():\n    pass\n\n\n"
                      "def test_a_load_already_made():\n    import colorsys  # noqa: F401\n"),
}


@pytest.mark.heavy  # a pytest session in a subprocess
def test_a_test_of_the_fast_lane_that_loads_a_model_library_fails_naming_the_marker(tmp_path):
    """tests/lane_markers.py with its watched libraries set to two cheap modules in a planted suite:
    the unmarked first import fails, the marked one passes, and so do a test without an import and
    one whose library a test before it imported (the rule the plugin states)."""
    for name, text in PLANTED_LOADS.items():
        (tmp_path / name).write_text(text)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.lane_markers", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "test_loads.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 3 passed" in done.stdout, done.stdout
    assert "FAILED test_loads.py::test_an_unmarked_first_load" in done.stdout
    assert "imports colorsys, a model's library" in done.stdout and "@pytest.mark.heavy" in done.stdout
