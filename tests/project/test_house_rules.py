"""The house rules a newcomer can rely on (docs/layering.md): small folders, data apart from code."""

from __future__ import annotations

import subprocess

from tests.conftest import REPO

SOURCE = ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab", "bench")
MAX_MODULES = 15  # per folder, __init__.py not counted


def tracked(pattern: str) -> list[str]:
    done = subprocess.run(["git", "-C", str(REPO), "ls-files", pattern], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_no_source_folder_holds_more_than_fifteen_modules():
    counts: dict[str, int] = {}
    for path in tracked("*.py"):
        folder, _, name = path.rpartition("/")
        if folder.split("/")[0] in SOURCE and name != "__init__.py":
            counts[folder] = counts.get(folder, 0) + 1
    assert counts, "no source module found"
    assert {folder: n for folder, n in counts.items() if n > MAX_MODULES} == {}


def test_no_json_file_sits_in_a_python_package():
    # data lives in folders without __init__.py (protocols/frozen/ and its kinds), never beside modules
    packaged = [path for path in tracked("*.json")
                if path.split("/")[0] in SOURCE and (REPO / path).parent.joinpath("__init__.py").exists()]
    assert tracked("protocols/frozen/*.json"), "the committed protocols are not where the house puts them"
    assert packaged == []
