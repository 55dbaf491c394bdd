"""Prepare a lab and evaluate a frozen protocol against it: `lab prepare` and `lab evaluate`.

    python scripts/evaluate_graph_retrieval.py prepare --fixture F --relations R --credential-file A \
        --state S --protocol P
    python scripts/evaluate_graph_retrieval.py evaluate --fixture F --relations R --credential-file A \
        --state S --protocol P --generation G --plan PLAN --report REPORT [--server-pid PID]

The Qilbee workflow's commands, with their documented flags (--credential-file is the lab commands'
--access-file; both are accepted).
"""

import sys

from evaluator.evaluate.evaluate_command import EVALUATE
from evaluator.prepare.prepare_command import PREPARE
from ground.command import script

if __name__ == "__main__":
    sys.exit(script([PREPARE, EVALUATE]))
