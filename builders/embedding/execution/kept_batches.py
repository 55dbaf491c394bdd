"""Document batches kept on disk while a fixture is encoded, so a killed build resumes where it stopped.

`<fixture>.partial/` holds `binding.json` and one `batch-NNNNNN.npz` per encoded batch (its raw
vectors and the batch's encode time), each written to a temporary name and renamed, so a batch is
on disk whole or not at all. A batch's vectors depend only on its texts and the encoder, and the
batch plan is a pure function of the texts and the batching (batching.py), so a resumed build
stacks exactly the rows an uninterrupted one would. The binding (provider, provenance, threads and
the SHA-256 of every batch's texts in plan order) must match for kept batches to be reused;
anything else is refused, naming the folder. The folder is removed once the fixture is saved.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ground.canonical import canonical
from ground.errors import RefusedInput
from ground.files import load_json, save

BINDING = "binding.json"


def partial_dir(fixture: str | Path) -> Path:
    return Path(f"{fixture}.partial")


def plan_digest(batches: Sequence[Sequence[str]]) -> str:
    """SHA-256 over every batch's texts in plan order (what decides which rows a batch holds)."""
    outer = hashlib.sha256()
    for texts in batches:
        outer.update(hashlib.sha256(canonical(list(texts))).digest())
    return outer.hexdigest()


class KeptBatches:
    """The batches already encoded for one binding; `keep` adds one, `load` reads them all."""

    def __init__(self, directory: Path, binding: Mapping):
        self.directory = Path(directory)
        self.binding = dict(binding)
        found = self.directory / BINDING
        if found.is_file():
            if load_json(found, "kept batches' binding") != self.binding:
                raise RefusedInput(f"{self.directory} holds batches another encoder, batching or source made "
                                   f"(its {BINDING} differs); remove that folder to encode from the start")
        else:
            self.directory.mkdir(parents=True, exist_ok=True)
            save(found, self.binding)

    def _path(self, index: int) -> Path:
        return self.directory / f"batch-{index:06d}.npz"

    def load(self, count: int) -> dict[int, tuple[np.ndarray, float]]:
        """Every kept batch among the plan's `count`: index -> (vectors, encode ms)."""
        out = {}
        for index in range(count):
            path = self._path(index)
            if path.is_file():
                with np.load(path) as data:
                    out[index] = (data["vectors"], float(data["ms"]))
        return out

    def keep(self, index: int, matrix: np.ndarray, ms: float) -> None:
        fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".batch-", suffix=".npz")
        try:
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, vectors=np.asarray(matrix), ms=np.float64(ms))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self._path(index))
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
