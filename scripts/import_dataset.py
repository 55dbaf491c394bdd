"""Import the files a protocol pins into source.json and build relations.json, for every row format
the protocol may name (MuSiQue, HotpotQA distractor, 2WikiMultihopQA): the neutral name of
scripts/import_musique_graph.py, with the same command line.

    python scripts/import_dataset.py --protocol protocols/hotpotqa-sample-v1.json \
        --source-dir ../shared/data/hotpotqa-sample --output source.json --relations relations.json
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from import_musique_graph import main  # noqa: E402
from protocols.cli import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run(main))
