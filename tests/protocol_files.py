"""The committed protocol files, from the registry's lineage (protocols/registry.py), not a glob."""

from __future__ import annotations

import json
from pathlib import Path

from protocols.committed import FROZEN_DIR
from protocols.derivations.suite_pin import SuitePin
from protocols.registry import DECLARED


def declared_protocol_files() -> list[Path]:
    """Every declared protocol file (suites hold no ranking profiles), in declaration order."""
    return [FROZEN_DIR / entry.file for entry in DECLARED if not isinstance(entry.step, SuitePin)]


def frozen_families() -> set[str]:
    """The route families some declared protocol ranks with: a family no frozen protocol names yet
    (one being added, docs/extend-a-method.md) serves and verifies, but has no measured profile."""
    found: set[str] = set()
    for path in declared_protocol_files():
        found |= {spec["route"] for spec in json.loads(path.read_text(encoding="utf-8"))["methods"].values()}
    return found
