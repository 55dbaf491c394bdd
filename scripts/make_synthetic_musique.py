"""Write a synthetic corpus: MuSiQue-format DIR/synthetic_train.jsonl and DIR/synthetic_dev.jsonl,
or with --shape hotpotqa / 2wikimultihopqa one HotpotQA- or 2Wiki-shaped dev file (a JSON array).

The default seed and size of the MuSiQue shape are the ones `protocols/synthetic-v1.json` pins by
SHA-256 (docs/synthetic.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from importer import synthetic, synthetic_context  # noqa: E402
from protocols import refuse_existing, sha256_bytes  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True, type=Path, help="new directory to create")
    parser.add_argument("--shape", choices=("musique", *synthetic_context.SHAPES), default="musique",
                        help="row format of the files (default: musique)")
    parser.add_argument("--seed", help=f"default: {synthetic.DEFAULT_SEED} (musique), "
                                       f"{synthetic_context.DEFAULT_SEED} (the other shapes)")
    parser.add_argument("--questions", type=int, default=synthetic.DEFAULT_QUESTIONS,
                        help="dev rows (musique: train gets 35%% as many; 7,000 give about 100,000 paragraphs)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.questions < 1:
        raise RefusedInput(f"--questions must be at least 1, got {args.questions}")
    refuse_existing(args.out)
    if args.shape != "musique":
        return _write_context_shape(args)
    files = synthetic.generate_files(args.seed or synthetic.DEFAULT_SEED, args.questions)
    for path in synthetic.write_files(args.out, files):
        data = files[path.name]
        rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
        by_prefix = Counter(synthetic.iter_hop_prefixes(rows))
        counts = ", ".join(f"{prefix} {by_prefix[prefix]}" for prefix in synthetic.CATEGORIES)
        print(f"wrote {path} sha256 {sha256_bytes(data)} rows {len(rows)} ({counts}) "
              f"distinct paragraphs {len(synthetic.distinct_paragraphs(rows))}")
    return 0


def _write_context_shape(args: argparse.Namespace) -> int:
    files = synthetic_context.generate_context_file(args.shape, args.seed or synthetic_context.DEFAULT_SEED,
                                                    args.questions)
    for path in synthetic.write_files(args.out, files):
        rows = json.loads(files[path.name])
        by_type = Counter(row["type"] for row in rows)
        counts = ", ".join(f"{name} {by_type[name]}" for name in synthetic_context.SHAPES[args.shape]["types"])
        print(f"wrote {path} sha256 {sha256_bytes(files[path.name])} rows {len(rows)} ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
