"""Import the files a protocol pins into source.json and build relations.json: `lab import`.

    python scripts/import_musique_graph.py --source-dir DIR --output source.json --relations relations.json \
        [--protocol PROTOCOL]

The Qilbee workflow's command, with its documented flags (--source-dir is `lab import`'s --data-dir).
"""

import sys

from ground.command import script
from lab.cross_stage_commands import IMPORT

if __name__ == "__main__":
    sys.exit(script([IMPORT]))
