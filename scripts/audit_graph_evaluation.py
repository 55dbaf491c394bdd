"""Audit a private report against its frozen inputs (and what was published from it): `lab audit`.

    python scripts/audit_graph_evaluation.py --report REPORT --fixture F --relations R --protocol P \
        [--generation G] [--state STATE] [--plan PLAN] [--public PUBLIC.json]

The Qilbee workflow's command, with its documented flags.
"""

import sys

from evaluator.evaluator_commands import AUDIT
from ground.command import script

if __name__ == "__main__":
    sys.exit(script([AUDIT]))
