"""`lab evaluate`: run a frozen protocol against a prepared lab into a private report (docs/campaign.md).

Flags and output only; the work is evaluate.py, imported inside `run` (httpx and the checkers are
not needed for `lab --help`). It takes prepare's campaign files (prepare/prepare_command.py) and more.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from evaluator.prepare.prepare_command import campaign_files, configure_campaign_files, read_access
from evaluator.verification.check_placement import add_cluster_flags, options_of
from ground.command import STAGE_OF_RUN, Command, again, typed
from ground.errors import RefusedInput
from ground.files import load_json
from ground.run_dir import RunDir, add_file, resolve, run_resume
from protocols.schema import load_protocol

REOPENED_ACCESS = "lab-access-reopened.json"  # the access file a reopened lab of a run directory writes

EVALUATE_DESCRIPTION = """Run a frozen protocol against a prepared lab and write the private report.

Pins the plan (an existing plan is accepted only when byte-identical), runs every method on every
query with proof checks and history fences, samples the lab process's CPU and RSS, and writes the
report (refused if it exists). Exit 1 with the report saved as failed when any check fails during
the campaign; the paths of the plan and the report are printed last.

The lab's pid is read from its access file; --server-pid, when given, must match it (exit 2).

The page checks run in this process or on a Dask cluster (--workers, --scheduler; docs/scale.md);
the report is the same either way. Every recorded job is appended to `<report>.journal`: after an
interruption (the lab or this process killed, the report left "running" or saved "failed"), the
same command with --resume checks every recorded job again and continues the campaign; the
finished report is the one an uninterrupted campaign writes, its timings aside (docs/campaign.md)."""


def configure_evaluate(parser: argparse.ArgumentParser) -> None:
    configure_campaign_files(parser)
    add_file(parser, "--generation", "generation", "generation.json (encode measurements)")
    add_file(parser, "--plan", "plan", "plan file to pin (or an identical existing one)")
    add_file(parser, "--report", "report", "private report to write (must not exist)")
    parser.add_argument("--server-pid", type=int, metavar="PID",
                        help="the lab's pid, sampled for CPU and RSS (default: the access file's pid; "
                             "when given it must match it)")
    parser.add_argument("--clients", type=int, default=1,
                        help="concurrent evaluation clients, 1 or 2 (the lab admits two); recorded in the plan")
    parser.add_argument("--resume", action="store_true",
                        help="continue the interrupted campaign of --report from its journal (same files and lab)")
    add_cluster_flags(parser, default="0, in this process: the lab shares this machine's cores, and a local cluster "
                                      "costs them more CPU per job than it takes off the evaluator (docs/scale.md)")


def server_pid(given: int | None, access: dict, access_file) -> int:
    """The pid to sample: the access file's, which a given --server-pid must equal."""
    pid = access.get("pid")
    if given is None:
        if not isinstance(pid, int):
            raise RefusedInput(f"access file {access_file} names no pid: give --server-pid")
        return pid
    return given  # evaluate refuses a pid that is not the access file's before writing anything


def _finished(report: Path) -> bool:
    try:
        return load_json(report, "report").get("status") == "complete"
    except (RefusedInput, OSError, AttributeError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def resume_hint(args: argparse.Namespace) -> str:
    """The command that continues this campaign: inside `lab run`, that run's `lab run --resume`
    (it restarts the lab the run started); otherwise this very command with --resume."""
    resume = run_resume(getattr(args, "run_dir", None)) if os.environ.get(STAGE_OF_RUN) else None
    return resume or again(args, "--resume")


def lab_gone(access_file: Path, pid: int, args: argparse.Namespace) -> str:
    """The way on when the lab an access file names has stopped: commands that work as printed.
    Inside a `lab run`, its `--resume`; with --run-dir, the store is the run's, so both commands are
    whole; otherwise the store is wherever `lab serve` was pointed, which no file here records."""
    run_dir = getattr(args, "run_dir", None)
    gone = f"the lab named by {access_file} (pid {pid}) is not running"
    resume = run_resume(run_dir)
    if resume is not None:
        return f"{gone}; `{resume}` reopens it on its store and continues"
    if run_dir is not None:
        run = RunDir(Path(run_dir))
        reopened = run.root / REOPENED_ACCESS
        return (f"{gone}: reopen its store in another terminal with `{typed(shlex.join(['serve', str(run.db), str(reopened), '0', '--reopen']))}` "
                f"(it serves until stopped), then run `{again(args, '--access-file', str(reopened))}`")
    return (f"{gone}: reopen the store it served in another terminal (the lab's serve command with that store's "
            f"directory, a new access file and --reopen), then run this command again with --access-file and the "
            f"new file (docs/campaign.md, \"Resuming an interrupted campaign\")")


def run_evaluate(args: argparse.Namespace) -> int:
    import httpx

    from evaluator.connection.client import LabError
    from evaluator.evaluate.evaluate import CampaignFailed, Paths, evaluate

    files = campaign_files(args)
    load_protocol(files["protocol"])  # first: a protocol that does not validate is refused before the lab is read
    access = read_access(files["access_file"])
    plan, report = resolve(args, "--plan", "plan"), resolve(args, "--report", "report")
    paths = Paths(files["fixture"], files["relations"], files["access_file"], files["state"], files["protocol"],
                  resolve(args, "--generation", "generation"), plan, report)
    if args.resume and _finished(report):
        print(f"evaluate: the campaign in {report} is already complete; nothing to resume", file=sys.stderr)
        print(plan)
        print(report)
        return 0
    pid = server_pid(args.server_pid, access, files["access_file"])
    if not _alive(pid):
        raise RefusedInput(lab_gone(files["access_file"], pid, args))
    started = time.monotonic()
    try:
        done = evaluate(paths, access, pid, clients=args.clients, cluster=options_of(args), resume=args.resume,
                        way_on=resume_hint(args))
    except CampaignFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(plan)
        print(report)
        return 1
    except (LabError, httpx.HTTPError) as exc:
        # before the plan was pinned: nothing was written
        gone = "" if _alive(pid) else f"; {lab_gone(files['access_file'], pid, args)}"
        print(f"error: the lab did not answer as required before the campaign started: {exc}{gone}", file=sys.stderr)
        return 1
    print(f"evaluated {len(done['jobs'])} jobs in {time.monotonic() - started:.1f}s")
    print(plan)
    print(report)
    return 0


EVALUATE = Command("evaluate", "run a frozen protocol against a prepared lab into a private report",
                   description=EVALUATE_DESCRIPTION, configure=configure_evaluate, run=run_evaluate,
                   way_on="the same command with --resume continues the campaign from its journal")
