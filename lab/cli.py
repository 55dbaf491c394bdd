"""The `lab` dispatcher: collects the subcommands every stage declares and runs the one asked for.

It holds no command of its own beyond what `lab/commands.py` declares (the ones that cross stages:
import, run, demo, bench). A stage adds a subcommand by adding a `Command` to its own `commands.py`;
nothing here changes. Exit codes: 0 done, 1 a check failed, 2 input refused (docs/cli.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import builders.commands
import evaluator.commands
import importer.commands
import lab.commands
import protocols.commands
import server.commands
from protocols.cli import Command, call, run

# in pipeline order, which is the order `lab --help` lists them
STAGES = (protocols.commands, importer.commands, builders.commands, server.commands, evaluator.commands,
          lab.commands)
# where a command declared outside its stage's module is listed (`import` is declared in lab/commands.py:
# the importer may not import the graph builder it runs); any other command keeps its declared place
LISTED_AFTER = {"import": "synth"}

DESCRIPTION = "The graph-retrieval lab: one command for every step, from import to audit."
EPILOG = """exit codes: 0 done, 1 a check failed, 2 input refused (nothing written).
Every subcommand has its own --help; the flag vocabulary is in docs/cli.md."""


def commands() -> tuple[Command, ...]:
    """Every declared subcommand, in pipeline order; a name declared twice is a bug."""
    declared: list[Command] = []
    for stage in STAGES:
        declared.extend(stage.COMMANDS)
    names = [command.name for command in declared]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise RuntimeError(f"lab subcommands declared twice: {', '.join(duplicated)}")
    for name, after in LISTED_AFTER.items():
        moved = next((c for c in declared if c.name == name), None)
        if moved is not None and after in names:
            declared.remove(moved)
            declared.insert(next(i for i, c in enumerate(declared) if c.name == after) + 1, moved)
    return tuple(_handed_in(command, (command.name,)) for command in declared)


def _handed_in(command: Command, path: tuple[str, ...]) -> Command:
    """The command with the runs lab/commands.py hands in (HANDED_IN) put in place, at any depth."""
    if command.subcommands:
        return dataclasses.replace(command, subcommands=tuple(_handed_in(child, path + (child.name,))
                                                              for child in command.subcommands))
    run = lab.commands.HANDED_IN.get(path)
    return command if run is None else dataclasses.replace(command, run=run)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="lab", description=DESCRIPTION,
                                  epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="_top_command", required=True, metavar="COMMAND")
    for command in commands():
        command.attach(sub)
    return top


def _dispatch(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    return call(args._command, args)


def main(argv: list[str] | None = None) -> int:
    return run(_dispatch, argv if argv is not None else sys.argv[1:])
