"""Derive a design protocol from a sample protocol: the same test selection (so every test row is
taken first and stays out), then every remaining row of the sample as development splits.

    python scripts/make_design_protocol.py protocols/musique-sample-v1.json \
        protocols/design/musique-design-v3.json --version musique-design-v3

The graph-v3 method was designed on these development rows only (docs/graph-v3.md). The test split
is copied unchanged from the sample protocol, so the selection replicates it exactly and the
design cohort can never take a test row: `development` takes every row of the sample protocol's
development file, and, when the test file is another file (MuSiQue: test from dev, development
from train), `development_rest` takes every row of the test file that the test split left. The
importer skips a row whose question a split before it already took (counts "all"), which is what
keeps the test rows out of `development_rest`. The design corpus is the union of every selected
row's paragraphs, test rows included (as unlabelled distractors: the harness never reads their
judgments; bench/graph_v3_dev.py refuses them).
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols.artifacts import ALL_ROWS  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import refuse_existing, save  # noqa: E402
from protocols.schema import load_protocol, validate_protocol  # noqa: E402

DEVELOPMENT_SPLITS = ("development", "development_rest")


def derive(sample: dict, version: str) -> dict:
    selection = sample["selection"]
    if selection["order"] != ["test", "development"]:
        raise RefusedInput(f"expected a sample protocol whose selection order is test, development; "
                           f"got {selection['order']}")
    protocol = copy.deepcopy(sample)
    protocol["protocol_version"] = version
    protocol["title"] = sample["title"] + " (design cohort: every row no test split selects)"
    test_source = selection["splits"]["test"]["source"]
    development_source = selection["splits"]["development"]["source"]
    splits = {"test": copy.deepcopy(selection["splits"]["test"]),
              "development": {"source": development_source, "counts": ALL_ROWS}}
    if test_source != development_source:
        splits["development_rest"] = {"source": test_source, "counts": ALL_ROWS}
    protocol["selection"] = {**selection, "order": list(splits), "splits": splits, "expected_ids": None}
    return protocol


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sample", help="the frozen sample protocol (read only)")
    parser.add_argument("output", help="the design protocol to write (refused if it exists)")
    parser.add_argument("--version", required=True, help="protocol_version of the output")
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    protocol = validate_protocol(derive(load_protocol(args.sample), args.version))
    save(args.output, protocol)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
