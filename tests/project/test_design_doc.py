"""The repository explains itself: docs/design.md is the contract, nothing points at a design note
outside the repository, and every reference to a section of docs/design.md names one that exists."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import REPO

DESIGN = REPO / "docs" / "design.md"


def tracked(*patterns: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", *patterns], cwd=REPO, capture_output=True, text=True, check=True)
    return out.stdout.split()


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lowercased, punctuation but `-` and `_` dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def sections() -> tuple[set[str], set[str]]:
    numbers, anchors = set(), set()
    for line in DESIGN.read_text(encoding="utf-8").splitlines():
        match = re.match(r"(#{2,3}) (.*)", line)
        if match:
            anchors.add(anchor(match.group(2)))
            number = re.match(r"(\d+(?:\.\d+)?)\.? ", match.group(2))
            if number:
                numbers.add(number.group(1))
    return numbers, anchors


def test_nothing_cites_the_design_note_outside_the_repository():
    stale = []
    for name in tracked("*.py", "*.md", "Makefile", "*.toml"):
        if name in ("docs/design.md", "tests/project/test_design_doc.py"):  # says where it came from; this test
            continue
        for number, line in enumerate((REPO / name).read_text(encoding="utf-8").splitlines(), start=1):
            if re.search(r"DESIGN(\.md| §)|shared/DESIGN", line):
                stale.append(f"{name}:{number}: {line.strip()}")
    assert not stale, "point these at docs/design.md:\n" + "\n".join(stale)


def test_every_reference_names_an_existing_section():
    numbers, anchors = sections()
    assert {"2", "3", "4", "4.1", "5.1", "5.2", "6", "7", "8"} <= numbers
    broken = []
    for name in tracked("*.py", "*.md"):
        text = (REPO / name).read_text(encoding="utf-8")
        for number in re.findall(r"design\.md §(\d+(?:\.\d+)?)", text):
            if number not in numbers:
                broken.append(f"{name}: §{number}")
        for target in re.findall(r"design\.md#([\w\-]+)", text):
            if target not in anchors:
                broken.append(f"{name}: #{target}")
    assert not broken, f"references to sections docs/design.md does not have: {broken}"


def test_the_readme_names_the_contract():
    assert "docs/design.md" in (REPO / "README.md").read_text(encoding="utf-8")
