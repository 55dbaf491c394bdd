"""The `lab` subcommands this stage owns (declared here, dispatched by lab/cli.py); each is defined
in the package of its verb, beside the work it runs."""

from __future__ import annotations

from evaluator.audit.audit_command import audit_command
from evaluator.compare.compare_command import COMPARE
from evaluator.evaluate.evaluate_command import EVALUATE
from evaluator.export.export_command import EXAMPLE, EXPORT
from evaluator.judge.judge_command import JUDGE
from evaluator.leaderboard.leaderboard_command import LEADERBOARD, run_leaderboard_audit
from evaluator.pool.pool_command import POOL
from evaluator.prepare.prepare_command import PREPARE
from ground.command import Command

AUDIT = audit_command(leaderboard_audit=run_leaderboard_audit)

COMMANDS: tuple[Command, ...] = (PREPARE, EVALUATE, EXPORT, AUDIT, COMPARE, POOL, LEADERBOARD, JUDGE, EXAMPLE)
