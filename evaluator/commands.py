"""The `lab` subcommands this stage owns (declared here, dispatched by lab/cli.py); each is defined
beside the code it runs: campaign/commands.py, report_commands/commands.py, report_commands/audit_command.py,
report_commands/leaderboard_command.py."""

from __future__ import annotations

from evaluator.campaign.commands import EVALUATE, PREPARE
from evaluator.external.commands import JUDGE
from evaluator.report_commands.audit_command import AUDIT
from evaluator.report_commands.commands import COMPARE, EXAMPLE, EXPORT, POOL
from evaluator.report_commands.leaderboard_command import LEADERBOARD
from ground.command import Command

COMMANDS: tuple[Command, ...] = (PREPARE, EVALUATE, EXPORT, AUDIT, COMPARE, POOL, LEADERBOARD, JUDGE, EXAMPLE)
