"""Derive a v3 protocol from a frozen protocol: its methods plus the seeded walk (docs/graph-v3.md).

    python scripts/make_protocol_v3.py protocols/musique-sample-v1.json protocols/musique-sample-v3.json \
        --version musique-sample-v3
    python scripts/make_protocol_v3.py protocols/graph-multihop-protocol-v2.json \
        protocols/graph-multihop-protocol-v3.json --version graph-multihop-protocol-v3

The input file is read, never written. The walk profile is frozen from the server catalog at the
moment of generation (from then on the evaluator compares the live catalog against it). The
primary contrast becomes graph_walk against weighted_rrf_v2 (confirmatory); every other baseline,
graph_hybrid_balanced included (the suite's secondary contrast), is an exploratory contrast of the
candidate, Holm-adjusted. The input's exploratory analyses (v2's rescue diagnostics) stay as they
are, so a diff against the input shows exactly what v3 adds.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import refuse_existing, save  # noqa: E402
from protocols.schema import load_protocol, validate_protocol  # noqa: E402
from protocols.profiles.walk import WALK_PROFILES  # noqa: E402

WALK_METHODS = {"graph_walk": "seeded_walk_v1"}
WALK_LIMIT = 10
PRIMARY = {"candidate": "graph_walk", "baseline": "weighted_rrf_v2", "label": "confirmatory"}


def derive(previous: dict, version: str) -> dict:
    protocol = copy.deepcopy(previous)
    protocol["protocol_version"] = version
    protocol["title"] = previous["title"] + " (v3: plus the seeded walk)"
    for method, profile in WALK_METHODS.items():
        if method in protocol["methods"] or profile in protocol["ranking_profiles"]:
            raise RefusedInput(f"the input protocol already holds {method!r} or {profile!r}")
        protocol["methods"][method] = {"route": "walk", "profile": profile, "limit": WALK_LIMIT}
        protocol["ranking_profiles"][profile] = copy.deepcopy(WALK_PROFILES[profile])
    if PRIMARY["baseline"] not in protocol["methods"]:
        raise RefusedInput(f"the input protocol has no method {PRIMARY['baseline']!r} to contrast against")
    protocol["evaluation"]["primary_contrast"] = dict(PRIMARY)
    return protocol


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("previous", help="the frozen protocol to extend (read only)")
    parser.add_argument("output", help="the v3 protocol file to write (refused if it exists)")
    parser.add_argument("--version", required=True, help="protocol_version of the output")
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    protocol = validate_protocol(derive(load_protocol(args.previous), args.version))
    save(args.output, protocol)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
