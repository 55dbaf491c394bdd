"""What every command-line tool shares: refused input exits 2, progress lines with rate and ETA, and
the `Command` declaration each stage uses to add its subcommands to `lab` (lab/cli.py)."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ground.errors import CheckFailed, Interrupted, RefusedInput

# set by `lab run` in the environment of each stage it starts (lab/pipeline.py)
STAGE_OF_RUN = "LAB_RUN_STAGE"
# how the user invoked the lab, passed on to the stages `lab run` starts, so their hints match
INVOKED_AS = "LAB_INVOKED_AS"


def invoked_as() -> str:
    """The lab's command as the user typed it, for a hint that works as printed: `lab` when the
    `lab` on PATH is this one, `.venv/bin/lab` (or any path) as given, `.venv/bin/python -m lab`
    for a module run."""
    given = os.environ.get(INVOKED_AS)
    if given:
        return given
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else "lab"
    if argv0.endswith("__main__.py") or argv0 == "-m":
        return f"{_as_typed(sys.executable)} -m lab"
    name = os.path.basename(argv0)
    found = shutil.which(name)
    if found and os.path.exists(argv0) and os.path.samefile(found, argv0):
        return name
    return _as_typed(argv0)


def _as_typed(path: str) -> str:
    """A path relative to the working directory when it lies under it, else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith("..") else (relative if os.sep in relative else f".{os.sep}{relative}")


def typed(words: str) -> str:
    """A lab command line to print in a hint: `words` after the lab as the user invoked it."""
    return f"{invoked_as()} {words}"


def again(args: argparse.Namespace, *extra: str) -> str:
    """The command the user typed (its words kept by the dispatcher in `args._argv`), with the
    flags in `extra` added where it lacks them: a hint that repeats a command works as printed."""
    import shlex

    words = list(getattr(args, "_argv", None) or [])
    words += [flag for flag in extra if flag not in words]
    return typed(shlex.join(words))


def run(main: Callable[[list[str] | None], int | None], argv: list[str] | None = None) -> int:
    """Call a CLI main; a RefusedInput becomes one `error:` line on stderr and exit code 2, a
    CheckFailed one `failed:` line and exit code 1, an OSError (no space, permission denied, a
    missing directory) one `failed:` line naming the file and the way on, exit code 1; Ctrl-C one
    `interrupted:` line and exit code 130 (128 + SIGINT, what a shell reports), never a traceback;
    SIGTERM (`kill`, `timeout`) the same line and the same clean stop, exit code 143; a closed pipe
    on stdout ends quietly with 0."""
    received: list[int] = []
    with stops_like_ctrl_c(received):
        return _outcome(main, argv, received)


@contextmanager
def stops_like_ctrl_c(received: list[int]):
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does, so a terminated command stops the same
    clean way (its stages and its lab stopped, what finished kept, one line); the SIGTERMs taken are
    appended to `received`. Either signal landing where a KeyboardInterrupt would not stop the
    command cleanly (`_no_place_to_stop`) is delivered again 50 ms later, until it lands elsewhere.
    Only the main thread can take a signal handler; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame) -> None:
        if _no_place_to_stop(frame):
            threading.Timer(0.05, os.kill, (os.getpid(), signum)).start()
            return
        if signum == signal.SIGTERM:
            received.append(signum)
        raise KeyboardInterrupt

    # Ctrl-C keeps its default meaning (KeyboardInterrupt) and an ignored Ctrl-C stays ignored (a job
    # a shell started in the background)
    taken = [signal.SIGTERM] + ([signal.SIGINT] if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN else [])
    before = {signum: signal.signal(signum, stop) for signum in taken}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


# Code run by the import system: a KeyboardInterrupt raised inside an import may become an
# ImportError that a library catches as a missing optional module (the command then goes on) or
# reports as a broken install (NumPy's "is not installed properly").
_IMPORT_SYSTEM = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")


def _no_place_to_stop(frame) -> bool:
    """Whether the interrupted code is a finalizer (Python only prints an exception raised there and
    goes on: a Dask future's __del__), an import, or code compiled from a string (dataclasses builds
    its methods so, and CPython 3.11 then ends the process by SIGINT instead of its exit code)."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "__del__" or code.co_filename in _IMPORT_SYSTEM or code.co_filename == "<string>":
            return True
        frame = frame.f_back
    return False


def _outcome(main: Callable[[list[str] | None], int | None], argv: list[str] | None, received: list[int]) -> int:
    try:
        code = main(argv)
    except BrokenPipeError:
        return closed_pipe()
    except CommandOSError as exc:  # the same, with the command's own way on (Command.way_on)
        if isinstance(exc.error, BrokenPipeError):
            return closed_pipe()
        print(f"failed: {os_error_line(exc.error, exc.way_on)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        if not os.environ.get(STAGE_OF_RUN):  # a stage's `lab run` prints the one line for both
            by = "SIGTERM" if received else "Ctrl-C"
            print(f"interrupted: {exc}" if isinstance(exc, Interrupted) else
                  f"interrupted: stopped by {by}; every file is written whole or not at all, so what was "
                  "complete is kept and nothing half-written is", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    except RefusedInput as exc:
        print(for_terminal(f"error: {exc}", sys.stderr), file=sys.stderr)
        return 2
    except CheckFailed as exc:
        print(for_terminal(f"failed: {exc}", sys.stderr), file=sys.stderr)
        return 1
    except OSError as exc:  # a full disk, a permission, a missing folder: one line, not a traceback
        print(f"failed: {os_error_line(exc)}", file=sys.stderr)
        return 1
    return int(code or 0)


def for_terminal(text: str, stream) -> str:
    """`text` wrapped to the terminal's width when `stream` is one (a file or a pipe gets it whole,
    one line per line, for a program or a test to read). A command quoted between backquotes is
    never broken, so a hint still works when copied from the screen."""
    if not stream.isatty():
        return text
    import re
    import textwrap

    width = max(shutil.get_terminal_size().columns - 1, 40)
    glued = re.sub(r"`[^`\n]*`", lambda m: m.group(0).replace(" ", "\0"), text)
    lines = [textwrap.fill(line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
             for line in glued.splitlines()]
    return "\n".join(lines).replace("\0", " ")


def closed_pipe() -> int:
    """The reader of our output went away (`lab protocol show X | head -1`): what it read was all it
    wanted, so end quietly with 0, as `git log | head` does, and let nothing write to the pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0


class CommandOSError(Exception):
    """An OSError raised inside a command that declares a way on past it (`Command.way_on`)."""

    def __init__(self, error: OSError, way_on: str):
        super().__init__(str(error))
        self.error, self.way_on = error, way_on


def call(command: "Command", args: argparse.Namespace) -> int:
    """Run a parsed leaf command; an OSError carries the command's way on, when it declares one."""
    if command.run is None:
        raise TypeError(f"{command.name} is a group of commands: a leaf runs")
    try:
        return int(command.run(args) or 0)
    except OSError as exc:
        if command.way_on:
            raise CommandOSError(exc, command.way_on) from exc
        raise


def os_error_line(exc: OSError, way_on: str = "") -> str:
    """The file, the system's reason, and the way on. Files are written atomically (ground/files.py),
    so what was complete is kept: free the space (or fix the folder) and run the command again.
    `way_on`: what the command adds, only where it is true (`lab evaluate`: `--resume` continues the
    campaign from its journal)."""
    where = " -> ".join(str(name) for name in (exc.filename, exc.filename2) if name is not None) or "a file"
    reason = exc.strerror or type(exc).__name__
    return (f"{where}: {reason} (errno {exc.errno}); nothing half-written is kept: fix that and run the "
            "command again" + (f"; {way_on}" if way_on else ""))


class Progress:
    """Prints `label: done/total (pct) rate/s ETA` to stderr: the first step, then at most every
    `interval` seconds once a tenth more is done or `quiet` seconds have passed, and the last step.
    A short job says about ten lines and a long one one line in `quiet` seconds, so the lines of a
    whole `lab run` fit a terminal and a slow step still shows it is alive."""

    def __init__(self, label: str, total: int, unit: str = "items", interval: float = 2.0, quiet: float = 30.0):
        self.label, self.total, self.unit, self.interval, self.quiet = label, total, unit, interval, quiet
        self.start = time.monotonic()
        self.last = 0.0
        self.last_done = 0
        self.done = 0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        tenth = 10 * (self.done - self.last_done) >= self.total
        if self.done >= self.total or not self.last_done or (
                now - self.last >= self.interval and (tenth or now - self.last >= self.quiet)):
            self.last, self.last_done = now, self.done
            print(self.line(now), file=sys.stderr, flush=True)

    def line(self, now: float | None = None) -> str:
        elapsed = max((now or time.monotonic()) - self.start, 1e-9)
        rate = self.done / elapsed
        remaining = (self.total - self.done) / rate if rate > 0 else float("inf")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        eta = f"{remaining:.0f}s" if remaining != float("inf") else "?"
        return (
            f"{self.label}: {self.done}/{self.total} {self.unit} ({pct:.0f}%) "
            f"{rate:.1f} {self.unit}/s ETA {eta}"
        )


@dataclass(frozen=True)
class Command:
    """One `lab` subcommand, declared by the stage that owns it (its package's `commands.py`).

    A leaf has `configure` (adds its flags to the parser) and `run` (takes the parsed namespace,
    returns the exit code); a group has `subcommands` instead (`lab embed build`, `lab protocol
    regenerate`). `summary` is the one line `lab --help` lists; `description` the full `--help` text.
    """

    name: str
    summary: str
    description: str = ""
    configure: Callable[[argparse.ArgumentParser], None] | None = None
    run: Callable[[argparse.Namespace], int | None] | None = None
    subcommands: tuple["Command", ...] = ()
    way_on: str = ""  # said after an OS error stops it, where true (evaluate: --resume continues)

    def __post_init__(self) -> None:
        if bool(self.subcommands) == (self.run is not None):
            raise ValueError(f"command {self.name!r}: give either run or subcommands, not both or neither")

    def attach(self, parent: argparse._SubParsersAction) -> argparse.ArgumentParser:
        """Add this command (and its subcommands) under `parent`."""
        parser = parent.add_parser(self.name, help=self.summary, description=self.description or self.summary,
                                   formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
        if self.subcommands:
            children = parser.add_subparsers(dest=f"_{self.name}_command", required=True, metavar="COMMAND")
            for child in self.subcommands:
                child.attach(children)
        else:
            if self.configure is not None:
                self.configure(parser)
            parser.set_defaults(_command=self)
        return parser


def script_parser(commands: Sequence[Command], prog: str) -> argparse.ArgumentParser:
    """The parser of a `scripts/` entry point: one command becomes the script's whole command line
    (`export_graph_evaluation.py --report ...`); several become its subcommands
    (`evaluate_graph_retrieval.py prepare|evaluate`)."""
    if len(commands) == 1:
        command = commands[0]
        parser = argparse.ArgumentParser(prog=prog, description=command.description or command.summary,
                                         formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
        if command.configure is not None:
            command.configure(parser)
        parser.set_defaults(_command=command)
        return parser
    parser = argparse.ArgumentParser(prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
                                     description="; ".join(f"{c.name}: {c.summary}" for c in commands))
    children = parser.add_subparsers(dest="_script_command", required=True, metavar="COMMAND")
    for command in commands:
        command.attach(children)
    return parser


def script(commands: Sequence[Command], argv: list[str] | None = None, prog: str | None = None) -> int:
    """A `scripts/` entry point: the same `Command`s as `lab`, under the script's own name, with the
    exit codes `run` gives."""
    parser = script_parser(commands, prog or Path(sys.argv[0]).name)

    def main(args: list[str] | None) -> int:
        parsed = parser.parse_args(args)
        parsed._argv = list(args or [])
        return call(parsed._command, parsed)

    return run(main, argv if argv is not None else sys.argv[1:])
