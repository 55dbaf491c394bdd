"""`lab run`: the whole documented pipeline on one protocol and data folder, in a new run directory.

Stages, each its own `python -m lab ...` process (as a user would type them, so one stage cannot
warm or leak into the next): synth (only without a data folder, see `synthetic_files`), import,
embed build, the lab server (a real separate process on a free loopback port, its store in the run
directory), prepare, evaluate, stop the lab, export, audit. Every stage reads and writes the
standard layout (ground/run_dir.py) through `--run-dir`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO

from builders.model_install import INSTALLABLE, installed_dir
from ground.canonical import digest, sha256_bytes
from ground.child_process import dies_with_parent
from ground.command import INVOKED_AS, STAGE_OF_RUN, invoked_as, typed
from ground.errors import CheckFailed, Interrupted, RefusedInput
from ground.files import load_json, refuse_existing, save
from ground.run_dir import FILES, RunDir
from lab.run_record import RunRecord
from protocols.embedding_space import FIELD as EMBEDDING_SPACE
from protocols.embedding_space import encoder_of_space
from protocols.graph_file import GRAPH_FILE
from protocols.locks import check_frozen, lock_path, make_lock, status
from protocols.routes import catalog_problems, fixture_flags
from protocols.schema import load_protocol

STAGE_LINE = "stage wall times: "
STAGE_STOP_SECONDS = 60.0  # how long a stage (or a leftover lab) gets to stop cleanly
STARTING_SECONDS = 1.0  # a stage listens for Ctrl-C well within this of its start (lab/__main__.py)


class StageFailed(CheckFailed):
    """A stage's process exited with a non-zero code; what it wrote stays in the run directory."""


@dataclass
class Finished:
    """A run that went through every stage: its directory and each stage's wall time."""

    run_dir: RunDir
    timings: dict[str, float] = field(default_factory=dict)

    def stage_line(self) -> str:
        if not self.timings:
            return STAGE_LINE + "none now (every stage had finished before)"
        return STAGE_LINE + ", ".join(f"{k} {v:.1f}s" for k, v in self.timings.items())


def embed_arguments(protocol: dict) -> list[str]:
    """The encoder a protocol pins (embedding_space) as `lab embed build` options (none for a
    protocol that pins no space: the builder's default model), after the fixture flags its methods
    need (protocols/routes.py)."""
    entities = fixture_flags(protocol)
    pinned = protocol.get(EMBEDDING_SPACE)
    if pinned is None:
        return entities
    args = ["--provider", pinned["provider"]]
    if "variant" in pinned["provenance"]:
        args += ["--variant", pinned["provenance"]["variant"]]
    if encoder_of_space(pinned) in INSTALLABLE:  # refused, with the install command, where it is not installed
        args += ["--model-dir", str(installed_dir(encoder_of_space(pinned)))]
    return args + entities


def synthetic_files(protocol: dict, path: Path) -> None:
    """Without a data folder, the data is `lab synth`'s default output: refused (before anything is
    written) unless the protocol pins exactly those files, byte for byte."""
    from importer import synthetic

    pinned = {entry["name"]: entry["sha256"] for entry in protocol["source_files"].values()}
    generated = {name: sha256_bytes(data) for name, data in synthetic.generate_files().items()}
    if pinned != generated:
        raise RefusedInput(f"protocol {path} does not pin `lab synth`'s default files "
                           f"({', '.join(sorted(generated))}); give --data-dir with the files it names")


def check_catalog_copy(protocol: dict, path: Path) -> None:
    """The protocol's copy of each ranking profile is the one the lab serves (what evaluate checks
    against the live catalog, asked here before anything is written)."""
    problems = catalog_problems(protocol)
    if problems:
        raise RefusedInput(f"protocol {path}: " + "; ".join(problems))


def read_rows(protocol: dict, folder: Path, graph_dir: Path | None = None) -> None:
    """Every row of a protocol's pinned files read as `lab import` reads them (importer.cohort), and
    its pinned external graph matched to the corpus (docs/graph-import.md): what `lab protocol new`
    and `lab run` refuse before writing anything."""
    from importer.cohort import read_cohort
    from importer.pipeline import check_graph

    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if GRAPH_FILE in protocol["graph_builder"]:
        check_graph(protocol, folder, graph_dir, log=log)
    else:
        read_cohort(protocol, folder, log=log)


def run_pipeline(protocol_path: Path, data_dir: Path | None, run_dir: Path, *, native: bool = False,
                 stdout: IO | None = None, log: Callable[[str], None] | None = None,
                 external: dict[str, str] | None = None, graph_dir: Path | None = None) -> Finished:
    """Every stage in a new run directory; raises StageFailed on the first stage that fails (the lab
    is stopped either way). `stdout` receives the stages' own output (default: this process's).
    `external`: name -> loopback retriever URL, each judged after the audit (`lab judge`) into
    RUN_DIR/external-NAME/. `graph_dir`: the folder of the external graph the protocol pins
    (default: `data_dir`; docs/graph-import.md)."""
    from evaluator.judge.retriever import check_url

    log = log or _stderr
    for url in (external or {}).values():
        check_url(url)  # a remote URL is refused before anything runs
    protocol = load_protocol(protocol_path)
    standing = check_frozen(protocol_path, protocol, Path(run_dir).resolve().parent)
    check_catalog_copy(protocol, protocol_path)
    embed_arguments(protocol)  # the pinned encoder is installed here: refused before anything is written
    if Path(run_dir, FILES["record"]).is_file():
        raise RefusedInput(f"refusing to overwrite existing output: {run_dir} holds an unfinished or finished "
                           f"`lab run`; `{typed(f'run --resume {run_dir}')}` continues it")
    refuse_existing(run_dir)
    if graph_dir is not None and GRAPH_FILE not in protocol["graph_builder"]:
        raise RefusedInput(f"--graph-dir {graph_dir}: protocol {protocol_path} pins no external graph")
    if data_dir is None:
        synthetic_files(protocol, protocol_path)
    elif not Path(data_dir).is_dir():
        raise RefusedInput(f"--data-dir {data_dir} is not a directory")
    else:
        # every row read as the import will read it, before the run directory exists: refused input
        # leaves nothing to delete, and the retry can use the same --run-dir (the synthetic files are
        # generated here, checked by hash above)
        read_rows(protocol, Path(data_dir), graph_dir)
    Path(run_dir).mkdir(parents=True)
    run = RunDir(Path(run_dir))
    # the run directory holds every file its audit (and a comparison of two runs) needs, the protocol
    # too, with the lock of a frozen one: the report says so, and later runs beside it are held to it
    save(run.protocol, protocol)
    if standing.frozen:
        save(lock_path(run.protocol), make_lock(protocol))
    log(f"protocol {protocol['protocol_version']} (digest {digest(protocol)}): {standing.told()}")
    record = RunRecord.started(protocol_path, data_dir, graph_dir, native, external or {})
    record.save(run.record)
    return _stages(run, record, stdout, log)


def resume_pipeline(run_dir: Path, *, stdout: IO | None = None, log: Callable[[str], None] | None = None) -> Finished:
    """Continue a `lab run` from the first stage it did not finish (docs/cli.md, "Continue a run")."""
    from evaluator.judge.retriever import check_url

    log = log or _stderr
    run = RunDir(Path(run_dir))
    if not run.root.is_dir():
        raise RefusedInput(f"--resume {run_dir}: no such run directory")
    if not run.record.is_file():
        raise RefusedInput(f"--resume {run_dir}: no {FILES['record']} there, so `lab run` did not start it (or "
                           f"started it before runs kept their record); continue it stage by stage (docs/cli.md)")
    record = RunRecord.load(run.record)
    protocol = load_protocol(run.protocol)
    log(f"protocol {protocol['protocol_version']} (digest {digest(protocol)}): {status(run.protocol, protocol).line}")
    for url in record.external.values():
        check_url(url)
    if record.data_dir is not None and not Path(record.data_dir).is_dir():
        raise RefusedInput(f"--resume {run_dir}: its data folder {record.data_dir} is gone")
    stop_leftover_lab(run, log)
    return _stages(run, record, stdout, log)


def _stages(run: RunDir, record: "RunRecord", stdout: IO | None, log: Callable[[str], None]) -> Finished:
    """The stages `record` has not finished, in order; each finished one is recorded at once."""
    done = Finished(run)
    protocol = load_protocol(run.protocol)
    current: dict[str, str | None] = {"stage": None}

    def stage(name: str, *args: str | Path, clean: Callable[[], None] | None = None) -> None:
        if name in record.done:
            log(f"== {name}: finished before, kept")
            return
        if clean is not None:
            clean()
        current["stage"] = name
        command = [sys.executable, "-m", "lab", *map(str, args)]
        log(f"== {name}: lab {' '.join(command[3:])}")
        started = time.monotonic()
        if stdout is None:  # the stage's own output goes to the run's stages.log; its last line is shown
            with open(run.stages, "a", encoding="utf-8") as out:
                out.write(f"== {name}: lab {' '.join(command[3:])}\n")
                out.flush()
                begin = out.tell()
                code = _call(command, out)
            last = _last_line(run.stages, begin)
        else:
            code, last = _call(command, stdout), ""
        done.timings[name] = time.monotonic() - started
        log(f"== {name}: exit {code} in {done.timings[name]:.1f}s" + (f": {last}" if last else ""))
        if code != 0:
            raise StageFailed(f"stage {name} exited with {code}; its files are in {run.root}; once the cause is "
                              f"fixed, `{typed(f'run --resume {run.root}')}` continues from that stage")
        record.done.append(name)
        record.save(run.record)
        current["stage"] = None

    try:
        data_dir: str | Path | None = record.data_dir
        if data_dir is None:
            data_dir = run.data
            stage("synth", "synth", "--output-dir", run.data, clean=lambda: shutil.rmtree(run.data, ignore_errors=True))
        graph_dir = record.graph_dir
        stage("import", "import", "--run-dir", run.root, "--data-dir", data_dir,
              *(["--graph-dir", graph_dir] if graph_dir is not None else []),
              clean=lambda: _unlink(run.source, run.relations))
        # a fixture saved without its generation.json is half a result; the encoded batches are kept
        stage("embed", "embed", "build", "--run-dir", run.root, *embed_arguments(protocol),
              *(["--native"] if record.native else []),
              clean=lambda: _unlink(run.fixture, run.generation))
        if not {"prepare", "evaluate"} <= set(record.done):
            _with_lab(run, stage, log)
        else:  # no lab to start for them
            for name in ("prepare", "evaluate"):
                stage(name)
        stage("export", "export", "--run-dir", run.root, clean=lambda: _remove_export(run))
        stage("audit", "audit", "--run-dir", run.root)
        for name, url in record.external.items():
            out = run.root / f"external-{name}"
            stage(f"judge {name}", "judge", "--run-dir", run.root, "--retriever", url, "--name", name,
                  "--output-dir", out, clean=partial(shutil.rmtree, out, ignore_errors=True))
    except KeyboardInterrupt:
        where = f" during {current['stage']}" if current["stage"] else ""
        kept = ", ".join(record.done) or "nothing finished yet"
        raise Interrupted(f"lab run stopped{where}; {run.root} keeps what finished ({kept}); continue with: "
                          f"{typed(f'run --resume {run.root}')}") from None
    return done


def _with_lab(run: RunDir, stage: Callable, log: Callable[[str], None]) -> None:
    """prepare and evaluate against a lab on the run's store: started fresh, or reopened by a resume
    (prepare continues from state.json, evaluate from its journal)."""
    from evaluator.connection.lab_process import LabStartError, start_lab

    reopen = run.db.exists()
    if reopen:
        run.access.unlink(missing_ok=True)  # the stopped lab's; a reopened lab revokes its token
    try:
        lab = start_lab(run.db, run.access, log_path=run.log, reopen=reopen, tied=True)
    except LabStartError as exc:
        raise StageFailed(f"the lab did not start ({exc}); its log is {run.log}") from None
    log(f"== lab: pid {lab.pid} at {lab.access['base_url']}" + (" (reopened on its store)" if reopen else ""))
    stopped_by_user = False
    try:
        stage("prepare", "prepare", "--run-dir", run.root)
        stage("evaluate", "evaluate", "--run-dir", run.root, *(["--resume"] if run.report.exists() else []))
    except KeyboardInterrupt:
        stopped_by_user = True  # Ctrl-C prints one line, the hint `lab run` raises
        raise
    finally:
        code = lab.stop()
        if not stopped_by_user:
            log(f"== lab: stopped with exit code {code}; log {lab.log_path}")


def _call(command: list[str], stdout: IO | None) -> int:
    """The stage as its own process in its own session, so Ctrl-C reaches this process alone and is
    passed on once (the stage stops cleanly); the stage dies with this process if it is killed. It
    starts with Ctrl-C ignored until `python -m lab` restores it (lab/__main__.py): a Ctrl-C before
    then would end the interpreter mid-start with a traceback."""
    tie = dies_with_parent()

    def start() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if tie is not None:
            tie()

    started = time.monotonic()
    child = subprocess.Popen(command, stdout=stdout, start_new_session=True, preexec_fn=start,
                             env={**os.environ, STAGE_OF_RUN: "1", INVOKED_AS: invoked_as()})
    try:
        return child.wait()
    except KeyboardInterrupt:
        _pass_on_ctrl_c(child, started)
        try:
            child.wait(timeout=STAGE_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        raise


def _pass_on_ctrl_c(child: subprocess.Popen, started: float) -> None:
    """Ctrl-C to the stage once it listens: where the system shows a process's ignored signals
    (Linux's /proc), wait until the stage has taken Ctrl-C back, however loaded the machine is;
    elsewhere send it now and once more after STARTING_SECONDS if the stage started within them."""
    while child.poll() is None:
        listens = _listens_to_ctrl_c(child.pid)
        if listens is None:
            break
        if listens:
            child.send_signal(signal.SIGINT)
            return
        time.sleep(0.01)
    if child.poll() is not None:
        return
    child.send_signal(signal.SIGINT)
    if time.monotonic() - started < STARTING_SECONDS:  # it may have come before the stage listened
        try:
            child.wait(timeout=STARTING_SECONDS)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGINT)


def _listens_to_ctrl_c(pid: int) -> bool | None:
    """Whether the process no longer ignores SIGINT; None where the system does not say."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("SigIgn:"):
            return not (int(line.split()[1], 16) >> (signal.SIGINT - 1)) & 1
    return None


def stop_leftover_lab(run: RunDir, log: Callable[[str], None]) -> None:
    """A lab this run started that still serves its store (its `lab run` was killed before it could
    stop it) holds the store's lock: stop it (SIGTERM, a clean shutdown) before the resume reopens."""
    try:
        pid = load_json(run.access, "access file").get("pid")
    except (RefusedInput, OSError, AttributeError):
        return
    if not isinstance(pid, int) or str(run.db) not in _command_line(pid):
        return
    log(f"== lab: pid {pid} still serves {run.db}; stopping it")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STAGE_STOP_SECONDS
    while _command_line(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _command_line(pid):  # it is this run's own lab, and a crash leaves its store consistent: end it
        log(f"== lab: pid {pid} did not stop in {STAGE_STOP_SECONDS:.0f}s; killing it")
        os.kill(pid, signal.SIGKILL)
        while _command_line(pid) and time.monotonic() < deadline + STAGE_STOP_SECONDS:
            time.sleep(0.1)


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _last_line(path: Path, begin: int) -> str:
    """The last non-empty line written to `path` after byte `begin` (what a stage said last)."""
    with open(path, "rb") as f:
        f.seek(begin)
        lines = [line for line in f.read().decode(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _unlink(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _remove_export(run: RunDir) -> None:
    """What an interrupted export wrote (the public report first, then the files beside it)."""
    from evaluator.export.export import output_paths
    from evaluator.export.outside_inputs import text_dir

    paths = output_paths(run.public)
    for path in (*paths.values(), text_dir(paths["public"])):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def print_finished(done: Finished) -> None:
    """Where everything is, then the answer: the stage times, the run directory, the full report and
    the page to open, and last the answer box and the method table, so the terminal ends on them."""
    from evaluator.views.summary import terminal_summary

    run = done.run_dir
    public = run.path("public")
    print(done.stage_line())
    print(f"every artifact is under {run.root}/ ({sum(1 for _ in run.root.iterdir())} entries; each stage's output: "
          f"{run.stages})")
    print(f"the full report: {public.with_suffix('.md')}")
    print(f"open the report (one file, no network needed): {public.with_suffix('.html')}")
    print()
    print(terminal_summary(load_json(public, "public report")), end="")
