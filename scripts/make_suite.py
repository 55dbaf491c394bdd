"""Write a suite file that pins dataset protocols by their digests (docs/suites.md), so no digest is
ever typed by hand.

    python scripts/make_suite.py protocols/suite-graph-v3.json --version suite-graph-v3 \
        --title "..." --dataset musique=musique-sample-v3.json --dataset hotpotqa=hotpotqa-sample-v3.json \
        --dataset 2wikimultihopqa=2wikimultihopqa-sample-v3.json \
        --primary graph_walk weighted_rrf_v2 --secondary graph_walk graph_hybrid_balanced

Protocol files are plain names read beside the suite file. The pooling rule defaults to the one of
suite-samples-v1 (clusters, equal weights, 2,000 resamples, 95%, 10,000 permutations, seed
20260921). The written suite is validated and its protocols are checked (methods, metric, digest)
before anything is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols.canonical import digest  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import refuse_existing, save  # noqa: E402
from protocols.schema import load_protocol  # noqa: E402
from protocols.suite import SUITE_FORMAT, pinned_protocols, validate_suite  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, help="the suite file to write (refused if it exists)")
    parser.add_argument("--version", required=True, help="suite_version")
    parser.add_argument("--title", required=True)
    parser.add_argument("--dataset", action="append", required=True, help="NAME=PROTOCOL_FILE (beside the suite)")
    parser.add_argument("--primary", nargs=2, required=True, metavar=("CANDIDATE", "BASELINE"))
    parser.add_argument("--secondary", nargs=2, action="append", default=[], metavar=("CANDIDATE", "BASELINE"))
    parser.add_argument("--metric", default="ndcg@10")
    parser.add_argument("--unit", default="cluster", choices=("query", "cluster"))
    parser.add_argument("--weights", default="equal", choices=("equal", "query_count"))
    parser.add_argument("--seed", type=int, default=20260921)
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    datasets = []
    for value in args.dataset:
        name, sep, file_name = value.partition("=")
        if not sep or not name or not file_name:
            raise RefusedInput(f"--dataset takes NAME=PROTOCOL_FILE, got {value!r}")
        protocol = load_protocol(args.output.parent / file_name)
        datasets.append({"name": name, "protocol": file_name, "protocol_digest": digest(protocol)})
    suite = {
        "format": SUITE_FORMAT, "suite_version": args.version, "title": args.title, "datasets": datasets,
        "primary_contrast": {"candidate": args.primary[0], "baseline": args.primary[1], "metric": args.metric,
                             "label": "confirmatory"},
        "pooling": {"rule": "stratified_paired_bootstrap_v1", "unit": args.unit, "weights": args.weights,
                    "resamples": 2000, "confidence": 0.95, "permutations": 10000},
        "seed": args.seed,
    }
    if args.secondary:
        suite["secondary_contrasts"] = [{"candidate": c, "baseline": b, "metric": args.metric, "label": "secondary"}
                                        for c, b in args.secondary]
    pinned_protocols(validate_suite(suite), args.output)
    save(args.output, suite)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
