"""Import the files a protocol pins into source.json and build relations.json.

    python scripts/import_musique_graph.py --source-dir DIR --output source.json --relations relations.json

The protocol's row_format says how the files read (absent: MuSiQue); the same command imports the
HotpotQA and 2WikiMultihopQA samples under their protocols (scripts/import_dataset.py is the same
command under a neutral name).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from importer import import_source  # noqa: E402
from builders.graph import build_for_source  # noqa: E402
from protocols.cli import run  # noqa: E402

DEFAULT_PROTOCOL = Path(__file__).resolve().parents[1] / "protocols" / "graph-multihop-protocol-v1.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocol", default=str(DEFAULT_PROTOCOL),
                        help="protocol file pinning the source files, selection and counts (default: the official one)")
    parser.add_argument("--source-dir", required=True, help="directory holding the files the protocol names")
    parser.add_argument("--output", required=True, help="source.json to write (must not exist)")
    parser.add_argument("--relations", required=True, help="relations.json to write (must not exist)")
    args = parser.parse_args(argv)
    print(f"importing {args.source_dir} with {args.protocol}", file=sys.stderr)
    summary = import_source(args.protocol, args.source_dir, args.output, args.relations,
                            graph_builder=build_for_source, log=lambda line: print(line, file=sys.stderr, flush=True))
    for split, n in summary["queries"].items():
        categories = ", ".join(f"{c} {k}" for c, k in summary["categories"][split].items())
        print(f"queries {split}: {n} ({categories})")
    print(f"documents: {summary['documents']}")
    print("relations: " + ", ".join(f"{kind} {n}" for kind, n in summary["relation_counts"].items()))
    print(f"source digest: {summary['source_digest']}")
    print(f"relations digest: {summary['relations_digest']}")
    print(f"wrote {summary['output']}")
    print(f"wrote {summary['relations']}")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
