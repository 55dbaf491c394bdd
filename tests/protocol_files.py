"""The committed protocol files, from the registry's lineage (protocols/registry.py), not a glob."""

from __future__ import annotations

from pathlib import Path

from protocols.committed import FROZEN_DIR
from protocols.derivations.suite_pin import SuitePin
from protocols.registry import DECLARED


def declared_protocol_files() -> list[Path]:
    """Every declared protocol file (suites hold no ranking profiles), in declaration order."""
    return [FROZEN_DIR / entry.file for entry in DECLARED if not isinstance(entry.step, SuitePin)]
