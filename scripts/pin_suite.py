"""Write a suite file (docs/suites.md) with each dataset's protocol pinned by the digest computed
here from the protocol file beside the output, so no digest is ever typed by hand.

    python scripts/pin_suite.py suite-samples-v1 --output protocols/suite-samples-v1.json

The suites this script knows are declared below (SUITES): datasets and protocol files, the pooled
primary contrast, the pooling rule and the seed. Each is frozen once written; a change is a new
suite_version. docs/suites.md says why suite-samples-v1 weights datasets equally and resamples
clusters.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols.canonical import digest  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.files import refuse_existing, save  # noqa: E402
from protocols.schema import load_protocol  # noqa: E402
from protocols.suite import SUITE_FORMAT, pinned_protocols, validate_suite  # noqa: E402

SUITES = {
    "suite-samples-v1": {
        "title": "graph_hybrid_balanced vs weighted_rrf_v2 on nDCG@10, pooled over the three shared samples "
                 "(MuSiQue, HotpotQA, 2WikiMultihopQA; v1 protocols, MiniLM)",
        "datasets": (("musique", "musique-sample-v1.json"), ("hotpotqa", "hotpotqa-sample-v1.json"),
                     ("2wikimultihopqa", "2wikimultihopqa-sample-v1.json")),
        "primary_contrast": {"candidate": "graph_hybrid_balanced", "baseline": "weighted_rrf_v2",
                             "metric": "ndcg@10", "label": "confirmatory"},
        # equal weights and cluster units: docs/suites.md, "suite-samples-v1"
        "pooling": {"rule": "stratified_paired_bootstrap_v1", "unit": "cluster", "weights": "equal",
                    "resamples": 2000, "confidence": 0.95, "permutations": 10000},
        "seed": 20260921,  # the three sample protocols' own protocol_seed
    },
    # frozen before any test campaign ran under it (docs/graph-v3.md; the commit history shows the order)
    "suite-graph-v3": {
        "title": "The three shared samples (MuSiQue, HotpotQA distractor, 2WikiMultihopQA), v3: does the seeded "
                 "walk (graph_walk, seeded_walk_v1, designed on development rows only) beat weighted_rrf_v2 on "
                 "nDCG@10 across datasets? Secondary: graph_walk against graph_hybrid_balanced.",
        "datasets": (("musique", "musique-sample-v3.json"), ("hotpotqa", "hotpotqa-sample-v3.json"),
                     ("2wikimultihopqa", "2wikimultihopqa-sample-v3.json")),
        "primary_contrast": {"candidate": "graph_walk", "baseline": "weighted_rrf_v2",
                             "metric": "ndcg@10", "label": "confirmatory"},
        "secondary_contrasts": ({"candidate": "graph_walk", "baseline": "graph_hybrid_balanced",
                                 "metric": "ndcg@10", "label": "secondary"},),
        "pooling": {"rule": "stratified_paired_bootstrap_v1", "unit": "cluster", "weights": "equal",
                    "resamples": 2000, "confidence": 0.95, "permutations": 10000},
        "seed": 20260921,
    },
}


def suite_value(version: str, protocols_dir: Path) -> dict:
    """The suite `version` with the digests of the protocol files in `protocols_dir`."""
    spec = SUITES[version]
    datasets = [{"name": name, "protocol": file, "protocol_digest": digest(load_protocol(protocols_dir / file))}
                for name, file in spec["datasets"]]
    suite = {"format": SUITE_FORMAT, "suite_version": version, "title": spec["title"], "datasets": datasets,
             "primary_contrast": dict(spec["primary_contrast"]), "pooling": dict(spec["pooling"]), "seed": spec["seed"]}
    if "secondary_contrasts" in spec:
        suite["secondary_contrasts"] = [dict(c) for c in spec["secondary_contrasts"]]
    return validate_suite(suite)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("version", choices=sorted(SUITES), help="which suite to write")
    parser.add_argument("--output", required=True, type=Path,
                        help="suite file to create; the protocols are read from its directory")
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    suite = suite_value(args.version, args.output.parent)
    pinned_protocols(suite, args.output)  # methods and metric of every pinned protocol
    save(args.output, suite)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
