"""The one command: every console entry point declared in pyproject.toml loads, `lab --help` and
`python -m lab --help` list every subcommand, every subcommand's own --help works, and every command
the README and docs/ quote exists with the flags it is quoted with."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from importlib import import_module

import pytest

from lab import cli
from protocols.committed import committed_file
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
    # a summary that ends mid-sentence was a real defect of the scripts' help, so it is checked
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


# ---------------------------------------------------------------- every command the docs quote exists

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LAB_PREFIXES = (".venv/bin/lab ", "python -m lab ", "lab ")
SCRIPT = re.compile(r"^(?:\.venv/bin/)?(?:python3? )?(scripts/[\w.-]+\.py)\b")


def quoted(text: str) -> list[str]:
    """Every code quote of a Markdown page: each line of a code block (fenced or indented; a line
    ending in a backslash joined with the next) and each inline code span, whitespace collapsed."""
    lines, spans, fenced, block = text.splitlines(), [], False, []
    prose = []
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        # an indented line is code, unless it continues a list item or a table row
        if fenced or (line.startswith("    ") and not line.lstrip().startswith(("- ", "* ", "|"))):
            block.append(line.strip())
        else:
            prose.append(line)
    joined = "\n".join(block).replace("\\\n", " ")
    spans += joined.splitlines()
    spans += re.findall(r"`([^`]+)`", "\n".join(prose))
    out = []
    for span in spans:
        span = " ".join(span.replace("\\|", "|").split())
        span = re.sub(r"\s+#.*$", "", span)  # a trailing comment
        span = re.sub(r"^(?:\$ |\()", "", span)
        out.append(span)
    return out


def commands_in(page) -> list[str]:
    found = []
    for span in quoted(page.read_text(encoding="utf-8")):
        if span.startswith(LAB_PREFIXES) or span.startswith("make ") or SCRIPT.match(span):
            found.append(span)
    return found


def _flags(tokens: list[str]) -> list[str]:
    flags = []
    for token in tokens:
        token = token.strip("[]()|,;`")
        if token.startswith("--") and len(token) > 2:
            flags.append(token.split("=")[0].strip("[]()|,;`"))
    return flags


def _walk_to_leaf(parser: argparse.ArgumentParser, tokens: list[str]) -> tuple[list[str], argparse.ArgumentParser, list[str]]:
    path = []
    while tokens:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or tokens[0] not in sub.choices:
            break
        path.append(tokens[0])
        parser = sub.choices[tokens.pop(0)]
    return path, parser, tokens


def check_lab(command: str) -> str | None:
    """Why a quoted `lab ...` command would not run as written (None when it would)."""
    from bench import BENCHES

    rest = next(command[len(p):] for p in LAB_PREFIXES if command.startswith(p)).split()
    path, leaf, tokens = _walk_to_leaf(cli.parser(), rest)
    if not path:
        return None if rest[:1] == ["--help"] else f"no subcommand {rest[:1]}"
    if path == ["bench"]:
        name = tokens[0] if tokens else ""
        if name and not name.isupper() and name not in (*BENCHES, "--help"):
            return f"no benchmark {name!r}"
        return None  # the rest are the benchmark's own flags
    unknown = [f for f in _flags(tokens) if f not in leaf._option_string_actions]
    return f"lab {' '.join(path)} has no {', '.join(unknown)}" if unknown else None


def check_script(command: str) -> str | None:
    from importlib.util import module_from_spec, spec_from_file_location

    from ground.command import Command, script_parser

    quoted = SCRIPT.match(command)
    assert quoted is not None, command
    relative = quoted.group(1)
    path = REPO / relative
    if not path.is_file():
        return f"{relative} does not exist"
    spec = spec_from_file_location(f"quoted_{path.stem}", path)
    assert spec is not None and spec.loader is not None, path
    module = module_from_spec(spec)
    spec.loader.exec_module(module)  # the scripts run only under __main__
    commands = [v for v in vars(module).values() if isinstance(v, Command)]
    if not commands:
        return None  # a protocol generator (its own helper): existence only
    commands.sort(key=lambda c: ("prepare", "evaluate").index(c.name) if c.name in ("prepare", "evaluate") else 0)
    tokens = command[quoted.end():].split()
    tokens = ["prepare" if t == "prepare|evaluate" else t for t in tokens]  # the flags both share
    _, leaf, tokens = _walk_to_leaf(script_parser(commands, path.name), tokens)
    unknown = [f for f in _flags(tokens) if f not in leaf._option_string_actions]
    return f"{relative} has no {', '.join(unknown)}" if unknown else None


def check_make(command: str) -> str | None:
    targets = set(re.findall(r"^([A-Za-z0-9_.-]+):", (REPO / "Makefile").read_text(), re.M))
    target = command.split()[1]
    return None if target in targets else f"no make target {target}"


def check(command: str) -> str | None:
    if command.startswith(LAB_PREFIXES):
        return check_lab(command)
    if command.startswith("make "):
        return check_make(command)
    return check_script(command)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_quoted_in_the_docs_exists(page):
    broken = {command: why for command in commands_in(page) if (why := check(command))}
    assert broken == {}


def test_the_docs_check_sees_commands_and_catches_renamed_ones():
    commands = {c for page in PAGES for c in commands_in(page)}
    assert "make demo" in commands and any(c.startswith("lab run --protocol") for c in commands)
    assert any(c.startswith("scripts/evaluate_graph_retrieval.py") or "python scripts/retrieval_lab.py" in c
               for c in commands)
    assert check("lab compare --a A --b B --output DIR") == "lab compare has no --output"
    assert check("lab evaluate --run-dir R --server-pid 1") is None
    assert check("lab embed build --measurements G") is None  # an older name, still accepted
    assert check("lab frobnicate") == "no subcommand ['frobnicate']"
    assert check("lab bench nosuch") == "no benchmark 'nosuch'"
    assert check("lab --help") is None and check("lab bench --help") is None
    assert check("make no-such-target") == "no make target no-such-target"
    assert check("scripts/demo.py --sample DIR") == "scripts/demo.py does not exist"
    assert check("python scripts/import_musique_graph.py --source-dir D --samples-dir X") == \
        "scripts/import_musique_graph.py has no --samples-dir"
    assert quoted("run `lab demo --samples\n [--version v1\\|v3]` now\n\n    lab run --protocol P \\\n"
                  "        --run-dir OUT   # comment\n") == ["lab run --protocol P --run-dir OUT",
                                                             "lab demo --samples [--version v1|v3]"]


# ---------------------------------------------------------------- benchmarks, and nothing edits sys.path

def test_every_benchmark_answers_its_help_through_lab_bench():
    from bench import BENCHES
    from tests.conftest import lab_cli

    for name in BENCHES:
        done = lab_cli("bench", name, "--help")
        assert done.stdout.startswith(f"usage: lab bench {name}"), (name, done.stdout[:200])


def test_no_file_inserts_into_sys_path():
    """The venv installs the project (lab, the stages and bench): no module, script, benchmark or test
    reaches another by editing sys.path."""
    files = [p for top in ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab", "bench", "scripts",
                           "tests") for p in (REPO / top).rglob("*.py")]
    assert len(files) > 100
    needle = "sys.path." + "insert"  # split, so this file does not match itself
    offenders = {str(p.relative_to(REPO)) for p in files if needle in p.read_text(encoding="utf-8")}
    assert offenders == set()


# ---------------------------------------------------------------- a newcomer's typos and wrong folders


def test_an_unknown_flag_is_named_before_a_missing_required_one(tmp_path):
    """argparse alone would answer `lab run --protocl F` with "--protocol is required"."""
    done = subprocess.run([sys.executable, "-m", "lab", "run", "--protocl", "x.json", "--run-dir", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 2 and not (tmp_path / "r").exists()
    assert "lab run: unknown option --protocl; did you mean --protocol?" in done.stderr
    assert cli.unknown_option(cli.parser(), ["leaderboard", "--runz", "a"]).endswith("did you mean --runs?")
    # values after `=`, groups and commands that hand flags on pass
    for argv in (["leaderboard", "--metric=ndcg@10"], ["protocol"], ["bench", "leaderboard", "--methods", "3"]):
        assert cli.unknown_option(cli.parser(), argv) is None, argv


def test_a_flag_is_spelled_whole(tmp_path):
    """argparse would take `--run` for `--run-dir` (and `--rep` for `--report`): a prefix that names
    one flag today names two tomorrow, so the lab takes no abbreviation, in `lab` or in a script."""
    assert cli.unknown_option(cli.parser(), ["audit", "--rep", "r.json"]) == \
        "lab audit: unknown option --rep; did you mean --report?"
    done = _lab("audit", "--run", tmp_path)
    assert done.returncode == 2 and "lab audit: unknown option --run; did you mean --run-dir?" in done.stderr
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["audit", "--run", str(tmp_path)])


def test_demo_on_another_samples_folder_names_protocol(tmp_path):
    (tmp_path / "hotpotqa-sample").mkdir()
    done = subprocess.run([sys.executable, "-m", "lab", "demo", "--data-dir", str(tmp_path / "hotpotqa-sample"),
                           "--run-dir", str(tmp_path / "r")], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 2 and not (tmp_path / "r").exists()
    assert "musique_sample_train.jsonl" in done.stderr and "give --protocol" in done.stderr
    assert "protocols/frozen/datasets/hotpotqa-sample-v1.json" in done.stderr


def test_the_demo_help_lists_every_version_it_accepts():
    from lab.demo import VERSIONS, default_suite

    text = next(c for c in cli.commands() if c.name == "demo").description
    for version in VERSIONS:
        assert version in text
        if default_suite(version).is_file():
            assert f"{version}: {default_suite(version).stem}" in text


@pytest.mark.heavy  # waits for a command to spend 3 s of CPU
def test_ctrl_c_ends_a_command_with_one_line_and_exit_130():
    import signal
    import time

    import psutil

    process = subprocess.Popen([sys.executable, "-m", "lab", "bench", "leaderboard", "--queries", "8000",
                                "--datasets", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    watched, deadline = psutil.Process(process.pid), time.monotonic() + 120
    while sum(watched.cpu_times()[:2]) < 3.0 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # past the imports (about 1 s of CPU): inside the board, about 10 s of CPU
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, (out, err)
    assert "Traceback" not in err and err.strip().splitlines() == [err.strip()]
    assert err.startswith("interrupted: stopped by Ctrl-C")


def _as_invoked() -> str:
    """How `_lab` invokes the lab, as its hints must print it (ground/command.py `invoked_as`)."""
    relative = os.path.relpath(sys.executable, REPO)
    return f"{sys.executable if relative.startswith('..') else relative} -m lab"


def _lab(*args, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lab", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_lab_run_resume_refusals_name_the_way(tmp_path):
    """--resume goes alone, needs a run directory `lab run` started; without it, both flags are named."""
    done = _lab("run", "--resume", tmp_path / "nowhere")
    assert done.returncode == 2 and "--resume" in done.stderr and "no such run directory" in done.stderr
    (tmp_path / "plain").mkdir()
    done = _lab("run", "--resume", tmp_path / "plain")
    assert done.returncode == 2 and "no run.json there" in done.stderr
    done = _lab("run", "--resume", tmp_path / "plain", "--protocol", "protocols/frozen/datasets/synthetic-v1.json")
    assert done.returncode == 2 and "leave out --protocol" in done.stderr
    done = _lab("run", "--data-dir", tmp_path)
    assert done.returncode == 2 and "give --protocol and --run-dir (or --resume RUN_DIR" in done.stderr


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_evaluate_resume_against_a_stopped_lab_prints_commands_that_work(tmp_path):
    """The access file's lab is gone: evaluate says how to reopen it (no --server-pid was given, so
    none is blamed); in a `lab run` directory, the one command that reopens and continues."""
    from ground.files import save
    from ground.run_dir import RunDir

    run = RunDir(tmp_path / "run")
    run.root.mkdir()
    run.protocol.write_bytes(committed_file("synthetic-v1.json").read_bytes())
    save(run.access, {"base_url": "http://127.0.0.1:9", "token": "t", "scope": "lab", "pid": _dead_pid()})
    done = _lab("evaluate", "--run-dir", run.root, "--resume")
    assert done.returncode == 2 and "--server-pid" not in done.stderr
    reopened = run.root / "lab-access-reopened.json"
    assert (f"is not running: reopen its store in another terminal with `{_as_invoked()} serve {run.db} {reopened} 0 "
            f"--reopen` (it serves until stopped), then run `{_as_invoked()} evaluate --run-dir {run.root} --resume "
            f"--access-file {reopened}`" in done.stderr)  # run as printed: tests/lab/test_hints.py
    save(run.record, {"format": "lab-run-record-v1"})
    done = _lab("evaluate", "--run-dir", run.root, "--resume")
    assert done.returncode == 2 and f"`{_as_invoked()} run --resume {run.root}` reopens it on its store" in done.stderr


def test_a_stage_of_a_lab_run_names_lab_run_resume_when_interrupted(tmp_path):
    from ground.command import invoked_as
    from lab.cli import continue_hint, parser

    (tmp_path / "run.json").write_text("{}")
    args = parser().parse_args(["prepare", "--run-dir", str(tmp_path)])
    assert continue_hint(args, []).endswith(f"continue with: {invoked_as()} run --resume {tmp_path}")
    args = parser().parse_args(["evaluate", "--run-dir", str(tmp_path / "elsewhere")])
    assert continue_hint(args, ["evaluate", "--run-dir", "x"]).endswith(
        f"continue with: {invoked_as()} evaluate --run-dir x --resume")


def test_output_into_a_closed_pipe_ends_quietly_with_exit_0(tmp_path):
    """`lab protocol show FILE | head -1`, through a real shell pipe: no error line, exit 0 (as `git
    log | head` does). `| true` closes the pipe before the lab has started, so its write surely
    meets a closed pipe (head may read everything a short listing writes before it exits)."""
    protocol = committed_file("synthetic-v1.json")
    for command, shown in ((f"{_as_invoked()} protocol show {protocol} | head -1", True),
                           (f"{_as_invoked()} protocol list | true", False)):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=120,
                              cwd=REPO)
        assert done.returncode == 0, (command, done.returncode, done.stderr)
        assert done.stderr == "", done.stderr
        assert bool(done.stdout.strip()) == shown, command


@pytest.mark.heavy  # waits for a command to spend 3 s of CPU
def test_sigterm_ends_a_command_with_the_ctrl_c_line_and_exit_143():
    """`kill PID` or `timeout` stops a command the way Ctrl-C does: one line, no traceback."""
    import signal
    import time

    import psutil

    process = subprocess.Popen([sys.executable, "-m", "lab", "bench", "leaderboard", "--queries", "8000",
                                "--datasets", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    watched, deadline = psutil.Process(process.pid), time.monotonic() + 120
    while sum(watched.cpu_times()[:2]) < 3.0 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 143, (out, err)
    assert "Traceback" not in err and err.strip().splitlines() == [err.strip()]
    assert err.startswith("interrupted: stopped by SIGTERM; every file is written whole or not at all")


def test_progress_says_about_ten_lines_for_a_short_job_and_one_in_quiet_seconds_for_a_long_one(capsys, monkeypatch):
    from ground import command

    clock = [0.0]
    monkeypatch.setattr(command.time, "monotonic", lambda: clock[0])
    short = command.Progress("short", 1000, interval=2.0, quiet=30.0)
    for _ in range(1000):
        clock[0] += 0.05  # 50 s in all: 25 two-second intervals, but only each tenth is said
        short.advance()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("short: 1/1000") and lines[-1].startswith("short: 1000/1000 items (100%)")
    assert 10 <= len(lines) <= 12
    slow = command.Progress("slow", 1000, interval=2.0, quiet=30.0)
    for _ in range(100):
        clock[0] += 3.0  # 300 s for a tenth of the job: the line comes every 30 s, not every 2 s
        slow.advance()
    lines = capsys.readouterr().err.splitlines()
    assert 10 <= len(lines) <= 12 and all("ETA" in line for line in lines)


def test_a_long_refusal_wraps_on_a_terminal_and_keeps_each_command_whole():
    """On a terminal of 80 columns each line fits and a command between backquotes is never split;
    into a pipe the same refusal is one line per reason, as programs and tests read it."""
    import pty

    args = ["protocol", "derive", "musique-sample-e5-v1", "--protocol",
            "protocols/frozen/datasets/musique-sample-linearrag-v1.json", "--version", "x", "--output", "/nowhere/x.json"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the lab on a pseudo-terminal of 80 columns
        try:
            os.chdir(REPO)
            os.environ["COLUMNS"] = "80"
            os.execv(sys.executable, [sys.executable, "-m", "lab", *args])
        finally:  # a failed exec must end this copy of the test process, never run on as it
            os._exit(127)
    said = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        said += chunk
    os.waitpid(pid, 0)
    lines = said.decode().replace("\r\n", "\n").rstrip("\n").splitlines()
    assert lines[0].startswith("error: 2 profile(s) hold a similarity threshold")
    assert len(lines) > 10 and max(map(len, lines)) <= 80
    assert all(line.count("`") % 2 == 0 for line in lines)  # no quoted command broken across lines
    piped = _lab(*args)
    assert piped.returncode == 2 and len(piped.stderr.splitlines()) == 3
