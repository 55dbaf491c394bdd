"""Subcommands that cross stages (run, demo, bench): they sit in the dispatcher's package because
they call importer, builders, server and evaluator together."""

from __future__ import annotations

from protocols.cli import Command

COMMANDS: tuple[Command, ...] = ()
