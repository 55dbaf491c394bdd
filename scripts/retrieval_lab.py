"""Start the loopback lab server: `python scripts/retrieval_lab.py DBDIR ACCESSFILE PORT`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.http.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
