"""Design cohort: the parent's test selection kept, then every other row of its files as development.

The test split is copied unchanged and taken first, so the design cohort replicates it exactly and
can never take a test row: `development` takes every row of the parent's development file and,
when the test split reads another file (MuSiQue: test from dev, development from train),
`development_rest` takes every row of the test file that the test split left. The importer skips a
row whose question an earlier split already took, which keeps the test rows out of
`development_rest`. The corpus is the union of every selected row's paragraphs, test rows included
as unlabelled distractors (a design harness never reads their judgments; docs/graph-v3.md).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ground.artifacts import ALL_ROWS
from ground.errors import RefusedInput
from protocols.derivations import Inputs

# the splits a design cohort adds: what a design harness may read (bench/design/graph_v3_data.py)
DEVELOPMENT_SPLITS = ("development", "development_rest")


@dataclass(frozen=True)
class DesignCohort:
    title_suffix: str

    kind = "design cohort"

    def summary(self) -> str:
        return "design cohort: the test split kept, every other row as development"

    def derive(self, parent: dict, version: str, inputs: Inputs | None = None) -> dict:
        selection = parent["selection"]
        if selection["order"] != ["test", "development"]:
            raise RefusedInput(f"a design cohort needs a selection ordered test, development; got {selection['order']}")
        protocol = copy.deepcopy(parent)
        protocol["protocol_version"] = version
        protocol["title"] = parent["title"] + self.title_suffix
        test_source = selection["splits"]["test"]["source"]
        development_source = selection["splits"]["development"]["source"]
        splits = {"test": copy.deepcopy(selection["splits"]["test"]),
                  "development": {"source": development_source, "counts": ALL_ROWS}}
        if test_source != development_source:
            splits["development_rest"] = {"source": test_source, "counts": ALL_ROWS}
        protocol["selection"] = {**selection, "order": list(splits), "splits": splits, "expected_ids": None}
        return protocol
