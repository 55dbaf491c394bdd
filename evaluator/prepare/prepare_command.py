"""`lab prepare`: load a running lab with a campaign's inputs, resumably (docs/campaign.md).

Flags and output only; the work is prepare.py, imported inside `run` (httpx is not needed for
`lab --help`). The campaign files it takes are the ones `lab evaluate` takes too."""

from __future__ import annotations

import argparse
import sys
import time

from ground.command import Command
from ground.errors import RefusedInput
from ground.files import load_json
from ground.run_dir import add_file, add_run_dir, resolve

PREPARE_DESCRIPTION = """Load a lab with a campaign's inputs: memories, model-bound embeddings and typed assertions.

Resumable: the state file records every batch done; an existing state bound to the same lab and
inputs is continued, so after an interruption the same command resumes. Exit 1 when the lab stops
answering (the state is kept); prints the counts loaded and the state file."""


def configure_campaign_files(parser: argparse.ArgumentParser) -> None:
    add_run_dir(parser)
    add_file(parser, "--fixture", "fixture", "fixture.json (embedding fixture)")
    add_file(parser, "--relations", "relations", "relations.json (typed graph)")
    add_file(parser, "--access-file", "access", "the lab's access file (base URL, token, scope, pid)",
             aliases=("--credential-file",))
    add_file(parser, "--state", "state", "prepare's state file")
    add_file(parser, "--protocol", "protocol", "frozen protocol")


def campaign_files(args: argparse.Namespace) -> dict:
    names = {"fixture": "fixture", "relations": "relations", "access_file": "access", "state": "state",
             "protocol": "protocol"}
    return {name: resolve(args, "--" + name.replace("_", "-"), role) for name, role in names.items()}


def read_access(path) -> dict:
    access = load_json(path, "access file")
    if not isinstance(access, dict) or not {"base_url", "token", "scope"} <= set(access):
        raise RefusedInput(f"access file {path} lacks base_url, token or scope")
    return access


def run_prepare(args: argparse.Namespace) -> int:
    import httpx

    from evaluator.connection.client import LabError
    from evaluator.prepare.prepare import prepare

    files = campaign_files(args)
    access = read_access(files["access_file"])
    started = time.monotonic()
    try:
        state = prepare(files["fixture"], files["relations"], files["protocol"], access, files["state"])
    except (LabError, httpx.HTTPError) as exc:
        # the state file holds every batch done so far: rerun the same command to resume
        print(f"error: prepare stopped: {exc}; state kept at {files['state']}, rerun to resume", file=sys.stderr)
        return 1
    counts = {k: len(state[k]) for k in ("memories", "bindings", "relations")}
    print(f"prepared {counts} in {time.monotonic() - started:.1f}s")
    print(files["state"])
    return 0


PREPARE = Command("prepare", "load a lab with the fixture and the graph (resumable)",
                  description=PREPARE_DESCRIPTION, configure=configure_campaign_files, run=run_prepare)
