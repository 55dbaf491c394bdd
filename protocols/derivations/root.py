"""A root: a protocol written by hand, derived from nothing, pinned by the SHA-256 of its file.

Regeneration cannot rebuild a root, so it checks the file's bytes instead: an edited root fails the
check like an edited derivation would. A changed root is a new version (a new file, a new entry).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Root:
    sha256: str  # raw SHA-256 of the committed file's bytes

    kind = "root"

    def summary(self) -> str:
        return f"root, file SHA-256 {self.sha256[:12]}…"
