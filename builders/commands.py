"""The `lab` subcommands this stage owns (declared here, dispatched by lab/cli.py)."""

from __future__ import annotations

from protocols.cli import Command

COMMANDS: tuple[Command, ...] = ()
