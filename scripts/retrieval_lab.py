"""Start the loopback lab server: `python scripts/retrieval_lab.py DBDIR ACCESSFILE PORT` (`lab serve`)."""

import sys

from ground.command import script
from server.serve_command import SERVE

if __name__ == "__main__":
    sys.exit(script([SERVE]))
