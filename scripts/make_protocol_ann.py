"""Derive an ANN protocol from its frozen v2 file: v2 plus the ANN lane `cosine_hnsw_v1` (docs/scale.md).

    python scripts/make_protocol_ann.py protocols/graph-multihop-protocol-v2.json \
        protocols/graph-multihop-ann-v1.json --version graph-multihop-ann-v1
    python scripts/make_protocol_ann.py protocols/musique-sample-v2.json \
        protocols/musique-sample-ann-v1.json --version musique-sample-ann-v1

The v2 file is read, never written; every v2 method, profile and contrast is kept unchanged (the
exact profiles never change). The ANN profile is frozen from the server catalog at the moment of
generation, like the rescue profiles of v2. The method `semantic_ann` asks the `ann` route for
10 hits; the declared exploratory analysis `ann_agreement` compares it per query with the exact
`semantic` method (recall@10 and extrapolated rank-biased overlap, p = 0.9).
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
from protocols.profiles.ann import ANN_PROFILES  # noqa: E402

ANN_METHOD = "semantic_ann"
ANN_PROFILE = "cosine_hnsw_v1"
ANN_AGREEMENT = {"methods": [ANN_METHOD], "exact_method": "semantic", "k": 10, "rbo_p": 0.9,
                 "metrics": ["recall@10_against_exact", "rbo_ext@10"], "label": "exploratory"}


def derive(v2: dict, version: str) -> dict:
    protocol = copy.deepcopy(v2)
    protocol["protocol_version"] = version
    protocol["title"] = v2["title"].replace(" (v2: plus the rescue family)", "") + \
        " (ANN: v2 plus the ANN lane)"
    if ANN_METHOD in protocol["methods"] or ANN_PROFILE in protocol["ranking_profiles"]:
        raise RefusedInput(f"the v2 protocol already holds {ANN_METHOD!r} or {ANN_PROFILE!r}")
    if protocol["methods"].get("semantic", {}).get("profile") != "cosine_exact_v1":
        raise RefusedInput("the v2 protocol has no exact `semantic` method to compare the ANN lane with")
    protocol["methods"][ANN_METHOD] = {"route": "ann", "profile": ANN_PROFILE, "limit": 10}
    protocol["ranking_profiles"][ANN_PROFILE] = copy.deepcopy(ANN_PROFILES[ANN_PROFILE])
    analyses = protocol["evaluation"].setdefault("exploratory_analyses", {"label": "exploratory"})
    analyses["ann_agreement"] = copy.deepcopy(ANN_AGREEMENT)
    return protocol


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("v2", help="the frozen v2 protocol file (read only)")
    parser.add_argument("output", help="the ANN protocol file to write (refused if it exists)")
    parser.add_argument("--version", required=True, help="protocol_version of the output")
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    protocol = validate_protocol(derive(load_protocol(args.v2), args.version))
    save(args.output, protocol)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
