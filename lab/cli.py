"""The `lab` dispatcher: collects the subcommands every stage declares and runs the one asked for.

It holds no command of its own beyond what `lab/cross_stage_commands.py` declares (the ones that cross stages:
import, run, demo, bench). A stage adds a subcommand by adding a `Command` to its own command module;
nothing here changes. Exit codes: 0 done, 1 a check failed, 2 input refused (docs/cli.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import shlex
import sys

import builders.embed_commands
import evaluator.evaluator_commands
import importer.import_commands
import lab.cross_stage_commands
import protocols.protocol_commands
import server.serve_command
from ground.command import Command, call, run, typed
from ground.errors import Interrupted, RefusedInput
from ground.run_dir import run_resume

# in pipeline order, which is the order `lab --help` lists them
STAGES = (protocols.protocol_commands, importer.import_commands, builders.embed_commands, server.serve_command,
          evaluator.evaluator_commands, lab.cross_stage_commands)
# where a command declared outside its stage's module is listed (`import` is declared in lab/cross_stage_commands.py:
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
    """The command with the runs lab/cross_stage_commands.py hands in (HANDED_IN) put in place, at any depth."""
    if command.subcommands:
        return dataclasses.replace(command, subcommands=tuple(_handed_in(child, path + (child.name,))
                                                              for child in command.subcommands))
    run = lab.cross_stage_commands.HANDED_IN.get(path)
    return command if run is None else dataclasses.replace(command, run=run)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="lab", description=DESCRIPTION, allow_abbrev=False,
                                  epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="_top_command", required=True, metavar="COMMAND")
    for command in commands():
        command.attach(sub)
    return top


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def unknown_option(top: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """The first `--flag` the chosen subcommand does not take, with the flag it probably meant.
    argparse reports a missing required flag before an unknown one, so `lab run --protocl F` would
    say that --protocol is missing and never name the typo."""
    parser, path = top, ["lab"]
    for token in argv:
        choices = _subparsers(parser)
        if token.startswith("-") or token not in choices:
            break
        parser, path = choices[token], path + [token]
    if _subparsers(parser) or any(a.nargs in (argparse.REMAINDER, argparse.PARSER) for a in parser._actions):
        return None  # a group, or a command that hands its flags on (`lab bench NAME ...`)
    known = [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]
    for token in argv[len(path) - 1:]:
        if token == "--":
            break
        name = token.split("=", 1)[0]
        if not name.startswith("--") or name in known:  # a flag is spelled whole: `--run` is not `--run-dir`
            continue
        close = difflib.get_close_matches(name, known, n=1)
        return f"{' '.join(path)}: unknown option {name}" + (f"; did you mean {close[0]}?" if close else "")
    return None


def _dispatch(argv: list[str] | None) -> int:
    top = parser()
    unknown = unknown_option(top, list(argv or []))
    if unknown is not None:
        raise RefusedInput(unknown)
    args = top.parse_args(argv)
    args._argv = list(argv or [])  # the command's words as typed: a hint repeats them (ground/command.py `again`)
    try:
        return call(args._command, args)
    except Interrupted:
        raise
    except KeyboardInterrupt:
        hint = continue_hint(args, list(argv or []))
        if hint is None:
            raise
        raise Interrupted(hint) from None


def continue_hint(args: argparse.Namespace, argv: list[str]) -> str | None:
    """What a command stopped by Ctrl-C kept and the command that continues it, where the lab knows
    one that works as printed: a stage of a `lab run` (its run directory keeps run.json) continues
    with `lab run --resume`, which restarts the lab that run had started; an evaluate with --resume."""
    run_dir = getattr(args, "run_dir", None)
    resume = run_resume(run_dir)
    if resume is not None and args._command.name != "run":
        return f"stopped; {run_dir} keeps what finished (each file whole); continue with: {resume}"
    if args._command.name == "evaluate":
        again = argv if "--resume" in argv else [*argv, "--resume"]
        return ("stopped; the report and its journal keep every recorded job; while the lab still runs, "
                f"continue with: {typed(shlex.join(again))}")
    if args._command.name == "build" and getattr(args, "_embed_command", None) == "build":
        return f"stopped; every encoded batch is kept beside the fixture; continue with: {typed(shlex.join(argv))}"
    if args._command.name == "prepare":
        return f"stopped; the state file keeps every batch loaded; continue with: {typed(shlex.join(argv))}"
    return None


def main(argv: list[str] | None = None) -> int:
    return run(_dispatch, argv if argv is not None else sys.argv[1:])
