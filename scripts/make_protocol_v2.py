"""Derive a v2 protocol from its frozen v1 file: v1 plus the rescue family (docs/rescue.md).

    python scripts/make_protocol_v2.py protocols/graph-multihop-protocol-v1.json \
        protocols/graph-multihop-protocol-v2.json --version graph-multihop-protocol-v2

The v1 file is read, never written. The rescue profiles are frozen from the server catalog at the
moment of generation (the protocol is a snapshot: from then on the evaluator compares the live
catalog against it, so any later change to the server's rescue code is caught). Everything else
the v2 file adds is written out below, so a diff against v1 shows exactly what changed.
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
from protocols.profiles.rescue import RESCUE_PROFILES  # noqa: E402

RESCUE_LIMIT = 150  # base depth 100 + lane cap 50: the whole appended list, one retrieval per query
RESCUE_METHODS = {
    "graph_rescue": "graph_rescue_v1",
    "graph_rescue_fuse_025": "graph_rescue_fuse_025_v1",
    "graph_rescue_fuse_100": "graph_rescue_fuse_100_v1",
}
EXPLORATORY_ANALYSES = {
    "label": "exploratory",
    "oracle_bound": {
        "methods": ["graph_rescue"],
        "rule": "every_rescued_judged_supporting_document_moved_to_the_front_in_rank_order",
        "uses_labels": True,
        "label": "upper_bound_not_a_retrieval_method",
    },
    "budget_curve": {
        "methods": ["graph_rescue", "graph_rescue_fuse_025", "graph_rescue_fuse_100"],
        "variants": ["whole_page", "base_block_only"],
        "budgets": [2000, 4000, 8000, 16000],
        "token_count": "bm25_v1_tokens_of_document_text",
        "selections": {
            "none": {"rule": "ranked_prefix_stop_at_first_document_that_does_not_fit"},
            "packed": {
                "value": "1/log2(rank+1)",
                "redundancy": "max_jaccard_of_bm25_token_sets_to_selected",
                "marginal_value": "value*(1-redundancy)",
                "skip_redundancy_at_least": 0.5,
                "order": ["marginal_value_per_token_desc", "record_id_asc"],
                "backfill": "skipped_documents_in_rank_order_that_fit",
            },
        },
        "metrics": ["tokens_spent", "evidence_recall", "chain_coverage"],
    },
    "rescue_diagnostics": ["first_rescued_rank", "rescued_judged_supports", "gate_hit_rate_with_reasons"],
}


def derive(v1: dict, version: str) -> dict:
    protocol = copy.deepcopy(v1)
    protocol["protocol_version"] = version
    protocol["title"] = v1["title"] + " (v2: plus the rescue family)"
    for method, profile in RESCUE_METHODS.items():
        if method in protocol["methods"] or profile in protocol["ranking_profiles"]:
            raise RefusedInput(f"the v1 protocol already holds {method!r} or {profile!r}")
        protocol["methods"][method] = {"route": "rescue", "profile": profile, "limit": RESCUE_LIMIT,
                                       "graph_mode": "auto"}
        protocol["ranking_profiles"][profile] = copy.deepcopy(RESCUE_PROFILES[profile])
    evaluation = protocol["evaluation"]
    evaluation["primary_contrast"] = {"candidate": "graph_rescue", "baseline": "weighted_rrf_v1",
                                      "label": "confirmatory"}
    evaluation["exploratory_analyses"] = copy.deepcopy(EXPLORATORY_ANALYSES)  # a caller may edit its copy
    # the rescue question is about reaching chain evidence, so its contrast reports chain coverage too
    if "chain_coverage@10" not in evaluation["contrast_metrics"]:
        evaluation["contrast_metrics"] = evaluation["contrast_metrics"] + ["chain_coverage@10"]
    return protocol


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("v1", help="the frozen v1 protocol file (read only)")
    parser.add_argument("output", help="the v2 protocol file to write (refused if it exists)")
    parser.add_argument("--version", required=True, help="protocol_version of the output")
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    # the v1 file is validated first, so a malformed one is refused (exit 2), not a KeyError
    protocol = validate_protocol(derive(load_protocol(args.v1), args.version))
    save(args.output, protocol)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
