"""The house rules a newcomer can rely on (docs/layering.md): small folders, data apart from code."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import REPO

SOURCE = ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab", "bench")
MAX_MODULES = 15  # per folder, __init__.py not counted; the tests follow the same rule


def tracked(pattern: str) -> list[str]:
    done = subprocess.run(["git", "-C", str(REPO), "ls-files", pattern], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_no_source_or_test_folder_holds_more_than_fifteen_modules():
    counts: dict[str, int] = {}
    for path in tracked("*.py"):
        folder, _, name = path.rpartition("/")
        if folder.split("/")[0] in (*SOURCE, "tests") and name != "__init__.py":
            counts[folder] = counts.get(folder, 0) + 1
    assert counts, "no source module found"
    assert {folder: n for folder, n in counts.items() if n > MAX_MODULES} == {}


def test_no_json_file_sits_in_a_python_package():
    # data lives in folders without __init__.py (protocols/frozen/ and its kinds), never beside modules
    packaged = [path for path in tracked("*.json")
                if path.split("/")[0] in SOURCE and (REPO / path).parent.joinpath("__init__.py").exists()]
    assert tracked("protocols/frozen/*.json"), "the committed protocols are not where the house puts them"
    assert packaged == []


DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b")
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+")


def reference_prose(text: str) -> str:
    """The page without its fenced blocks and link targets: an example payload's timestamp is data and a
    journal anchor is an address, neither is the page's history."""
    return re.sub(r"\]\([^)]*\)", "]", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))


def test_reference_pages_carry_no_dates_and_no_issue_numbers():
    # how things are lives in docs/*.md; when they were measured and why they changed lives in the journal
    pages = [REPO / path for path in tracked("docs/*.md") if path != "docs/journal.md"] + [REPO / "README.md"]
    found = [f"{page.name}: {match.group(0)}" for page in pages
             for match in (*DATED.finditer(reference_prose(page.read_text())),
                           *ISSUE.finditer(reference_prose(page.read_text())))]
    assert len(pages) > 20
    assert found == []


def test_the_date_rule_sees_a_dated_sentence():
    assert DATED.search(reference_prose("50 s (2026-12-01, load 1.5)"))
    assert not DATED.search(reference_prose('```\n"created_at": "2026-12-01T03:03:57Z"\n```\n'))
    assert not DATED.search(reference_prose("[the journal](journal.md#2026-12-01-suites)"))
    assert ISSUE.search("as issue 38 asked")
