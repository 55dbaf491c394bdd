"""The one command: every console entry point declared in pyproject.toml loads, `lab --help` and
`python -m lab --help` list every subcommand, and every subcommand's own --help works."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from importlib import import_module

import pytest

from lab import cli
from tests.conftest import REPO


def _declared_entry_points() -> dict[str, str]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]


def test_every_declared_console_entry_point_loads():
    declared = _declared_entry_points()
    assert "lab" in declared
    for name, target in declared.items():
        module, _, attribute = target.partition(":")
        assert callable(getattr(import_module(module), attribute)), f"{name} = {target} is not callable"


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """Every (path, parser) of the subcommand tree, leaves and groups."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _walk(child, path + (name,))


def test_help_lists_every_declared_subcommand(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for command in cli.commands():
        assert f"    {command.name}" in text, command.name


@pytest.mark.parametrize("path", [p for p, _ in _walk(cli.parser()) if p], ids=" ".join)
def test_every_subcommand_help_is_complete(path, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([*path, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: lab {' '.join(path)}")
    # a summary that ends mid-sentence was a real defect of the scripts' help (issue 19)
    summary = next(c for c in _commands_by_path() if c[0] == path)[1]
    assert summary.summary and not summary.summary.endswith((",", " the", " a", " of"))


def _commands_by_path():
    def walk(commands, prefix=()):
        for command in commands:
            yield prefix + (command.name,), command
            yield from walk(command.subcommands, prefix + (command.name,))
    return list(walk(cli.commands()))


def test_python_dash_m_lab_and_the_console_script_agree():
    module = subprocess.run([sys.executable, "-m", "lab", "--help"], capture_output=True, text=True, timeout=120)
    assert module.returncode == 0, module.stderr
    script = REPO / ".venv" / "bin" / "lab"
    if not script.exists():
        pytest.skip("no .venv/bin/lab (the venv is made by `make venv`)")
    console = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert console.returncode == 0, console.stderr
    assert console.stdout.replace("usage: lab", "") == module.stdout.replace("usage: python -m lab", "").replace(
        "usage: lab", "")


def test_no_subcommand_is_refused_with_exit_2():
    done = subprocess.run([sys.executable, "-m", "lab"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "COMMAND" in done.stderr
