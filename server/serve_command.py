"""The `lab` subcommands the server owns (declared here, dispatched by lab/cli.py)."""

from __future__ import annotations

from ground.command import Command
from server.http import main as serving

SERVE = Command("serve", "serve the loopback lab (RocksDB store, retrieval routes) until stopped",
                description=serving.DESCRIPTION, configure=serving.configure, run=serving.serve)

COMMANDS: tuple[Command, ...] = (SERVE,)
