"""Export a complete private report (public JSON, Markdown, HTML, figures, TREC runs and qrels): `lab export`.

    python scripts/export_graph_evaluation.py --report REPORT --fixture F --output PUBLIC.json

The Qilbee workflow's command, with its documented flags.
"""

import sys

from evaluator.export.export_command import EXPORT
from ground.command import script

if __name__ == "__main__":
    sys.exit(script([EXPORT]))
