"""The `lab` subcommands this stage owns (declared here, dispatched by lab/cli.py); each is defined
beside the code it runs: campaign/commands.py, verification/commands.py, reporting/commands.py."""

from __future__ import annotations

from evaluator.campaign.commands import EVALUATE, PREPARE
from evaluator.external.commands import JUDGE
from evaluator.reporting.commands import COMPARE, EXAMPLE, EXPORT, POOL
from evaluator.verification.commands import AUDIT
from protocols.cli import Command

COMMANDS: tuple[Command, ...] = (PREPARE, EVALUATE, EXPORT, AUDIT, COMPARE, POOL, JUDGE, EXAMPLE)
