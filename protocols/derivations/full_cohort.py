"""Full cohort: one split widened to every eligible row of its file (`counts: "all"`), the ids that
selection yields pinned from the dev metadata in the shared data.

The metadata (../shared/data/musique-dev-metadata.jsonl: every row of the official MuSiQue-Ans dev
file in its order, with only id, question and answerable) is pinned by SHA-256, and the ids come
from the frozen selection rule (protocols/selection.py) with the parent's seed, so they are the ids
the importer selects from the official file. Every other field is the parent's, key for key. The
other splits are not pinned (`null`): which train rows the development split takes depends on the
test questions it must avoid, and that needs the official train file.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from ground.artifacts import ALL_ROWS, row_format_of
from ground.canonical import sha256_file
from ground.errors import RefusedInput
from protocols.derivations import Inputs, Skipped
from protocols.selection import select_rows


@dataclass(frozen=True)
class FullCohort:
    title: str
    split: str  # the split widened to every row; it must come first in the selection order
    metadata: str  # file name in the shared data folder
    metadata_sha256: str

    kind = "full cohort"

    def summary(self) -> str:
        return f"full cohort: every eligible row as {self.split}, ids from shared/data/{self.metadata}"

    def derive(self, parent: dict, version: str, inputs: Inputs | None = None) -> dict:
        selection = parent["selection"]
        if selection["order"][0] != self.split:
            # a later split would have to skip the earlier splits' questions: not what these ids are
            raise RefusedInput(f"the widened split {self.split!r} must come first in the selection order "
                               f"{selection['order']}")
        if row_format_of(parent).by_type:
            raise RefusedInput("a full cohort reads MuSiQue dev metadata: the parent must be a MuSiQue protocol")
        ids = self.ids(parent["selection"]["seed"], inputs)
        protocol = copy.deepcopy(parent)
        protocol["protocol_version"] = version
        protocol["title"] = self.title
        widened = protocol["selection"]
        widened["splits"][self.split]["counts"] = ALL_ROWS
        widened["expected_ids"] = {name: ids if name == self.split else None for name in widened["splits"]}
        return protocol

    def ids(self, seed: str, inputs: Inputs | None) -> list[str]:
        if inputs is None:
            raise RefusedInput("a full cohort reads the shared data: give its folder")
        path = inputs.data_dir / self.metadata
        if not path.is_file():
            raise Skipped(f"{path} is absent (the shared data lives only in ../shared, never in this repo)")
        if sha256_file(path) != self.metadata_sha256:
            raise RefusedInput(f"{path}: SHA-256 is not the dev metadata's {self.metadata_sha256}")
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return [row["id"] for row in select_rows(rows, ALL_ROWS, seed)]
