"""Where the committed protocol files live: a data folder of their own, one subfolder per kind.

`protocols/frozen/datasets/` holds every protocol pinned to a dataset's files, `suites/` the suites
that pool them, `design/` the design cohorts, `published/` the field's published figures, and
`declared.lock.json` the digest of every declared name. A suite names its protocols by file name
alone (the name is inside its digest), so a member is looked for beside the suite first and then
among the committed dataset protocols.
"""

from __future__ import annotations

from pathlib import Path

FROZEN_DIR = Path(__file__).resolve().parent / "frozen"  # shipped as package data (pyproject)
DATASETS_DIR = FROZEN_DIR / "datasets"
SUITES_DIR = FROZEN_DIR / "suites"
DESIGN_DIR = FROZEN_DIR / "design"
PUBLISHED_DIR = FROZEN_DIR / "published"
KINDS = (DATASETS_DIR, SUITES_DIR, DESIGN_DIR)  # the kinds that hold protocols and suites


def committed_file(name: str) -> Path:
    """A committed protocol or suite by its name (`musique-sample-v1`) or file name; the path in the
    datasets folder when no kind holds it (the caller then says the file is missing)."""
    file = name if name.endswith(".json") else f"{name}.json"
    for kind in KINDS:
        if (kind / file).is_file():
            return kind / file
    return DATASETS_DIR / file


def committed_protocols() -> list[Path]:
    """Every committed protocol and suite file, kind by kind, sorted within a kind."""
    return [path for kind in KINDS for path in sorted(kind.glob("*.json")) if not path.name.endswith(".lock.json")]


def suite_member(suite_path: str | Path, file: str) -> Path:
    """The protocol a suite names: beside the suite when it is there, else the committed one."""
    beside = Path(suite_path).parent / file
    return beside if beside.is_file() else committed_file(file)
