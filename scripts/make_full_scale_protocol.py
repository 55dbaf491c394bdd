"""Write protocols/graph-multihop-full-dev-v1.json: the official v1 protocol with every answerable
row of the official MuSiQue-Ans dev file as the test split (`counts: "all"`), and the ids that
selection yields pinned from the dev metadata in ../shared (same ids, questions and answerability
as the official dev file, whose raw SHA-256 the protocol keeps pinned).

    python scripts/make_full_scale_protocol.py --dev-metadata ../shared/data/musique-dev-metadata.jsonl \
        --output protocols/graph-multihop-full-dev-v1.json

Everything else (files and hashes, selection seed, development counts from train, methods,
budgets, evaluation) is the official v1 protocol's, key for key. The development split is not
pinned (`expected_ids.development: null`): which train rows it takes depends on the 2,411 test
questions it must avoid, and that needs the official train file, which this machine lacks.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols.selection import select_rows  # noqa: E402
from protocols.artifacts import ALL_ROWS  # noqa: E402
from protocols.canonical import sha256_file  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import refuse_existing, save  # noqa: E402
from protocols.schema import load_protocol, validate_protocol  # noqa: E402

PROTOCOLS = Path(__file__).resolve().parents[1] / "protocols"
OFFICIAL = PROTOCOLS / "graph-multihop-protocol-v1.json"
VERSION = "graph-multihop-full-dev-v1"
# ../shared/data/README.md: all 2,417 dev rows in official order, only id, question, answerable
DEV_METADATA_SHA256 = "32936fb6bc1dcdff98cb0d6af1faf832d3e4aeb5f4db0d97258cf741a905f86e"


def full_scale_protocol(official: dict, version: str, title: str, expected_test_ids: list[str] | None) -> dict:
    """The official protocol, its test split widened to every eligible dev row; key order kept."""
    protocol = copy.deepcopy(official)
    protocol["protocol_version"] = version
    protocol["title"] = title
    selection = protocol["selection"]
    selection["splits"]["test"]["counts"] = ALL_ROWS
    selection["expected_ids"] = None if expected_test_ids is None else {"test": expected_test_ids,
                                                                       "development": None}
    return protocol


def dev_ids(metadata: Path, seed: str) -> list[str]:
    if sha256_file(metadata) != DEV_METADATA_SHA256:
        raise RefusedInput(f"{metadata}: SHA-256 is not the dev metadata's {DEV_METADATA_SHA256}")
    rows = [json.loads(line) for line in metadata.read_text(encoding="utf-8").splitlines()]
    return [row["id"] for row in select_rows(rows, ALL_ROWS, seed)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev-metadata", required=True, type=Path, help="../shared/data/musique-dev-metadata.jsonl")
    parser.add_argument("--output", required=True, type=Path, help="protocol file to write (must not exist)")
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    official = load_protocol(OFFICIAL)
    ids = dev_ids(args.dev_metadata, official["selection"]["seed"])
    title = ("Graph-assisted multi-hop retrieval on MuSiQue-Ans v1.0: every answerable dev row "
             "(the official comparison at full scale)")
    protocol = validate_protocol(full_scale_protocol(official, VERSION, title, ids))
    save(args.output, protocol)
    print(f"wrote {args.output} ({len(ids)} test ids)")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
