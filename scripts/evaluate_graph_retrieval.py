"""Prepare a lab and evaluate a frozen protocol against it.

    python scripts/evaluate_graph_retrieval.py prepare --fixture F --relations R --credential-file A \
        --state S --protocol P
    python scripts/evaluate_graph_retrieval.py evaluate --fixture F --relations R --credential-file A \
        --state S --protocol P --generation G --plan PLAN --report REPORT --server-pid PID

prepare is resumable (an existing state bound to the same lab and inputs is continued); evaluate
refuses an existing report, accepts an existing plan only when byte-identical, and exits 1 with a
report saved as failed when any check fails during the campaign.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from evaluator.campaign.client import LabError  # noqa: E402
from evaluator.campaign.evaluate import CampaignFailed, Paths, evaluate  # noqa: E402
from evaluator.campaign.prepare import prepare  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import load_json  # noqa: E402


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True)
    for name in ("prepare", "evaluate"):
        p = sub.add_parser(name)
        p.add_argument("--fixture", required=True, type=Path, help="fixture.json (embedding fixture)")
        p.add_argument("--relations", required=True, type=Path, help="relations.json (graph)")
        p.add_argument("--credential-file", required=True, type=Path, help="the lab's access file")
        p.add_argument("--state", required=True, type=Path, help="prepare state file")
        p.add_argument("--protocol", required=True, type=Path, help="frozen protocol JSON")
        if name == "evaluate":
            p.add_argument("--generation", required=True, type=Path, help="generation.json (encode times)")
            p.add_argument("--plan", required=True, type=Path, help="plan file to pin (or an identical existing one)")
            p.add_argument("--report", required=True, type=Path, help="private report to write (must not exist)")
            p.add_argument("--server-pid", required=True, type=int, help="lab PID, sampled for CPU and RSS")
            p.add_argument("--clients", type=int, default=1,
                           help="concurrent evaluation clients, 1 or 2 (the lab admits two); recorded in the plan")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    access = load_json(args.credential_file, "credential file")
    if not isinstance(access, dict) or not {"base_url", "token", "scope"} <= set(access):
        raise RefusedInput(f"credential file {args.credential_file} lacks base_url, token or scope")
    started = time.monotonic()
    if args.command == "prepare":
        try:
            state = prepare(args.fixture, args.relations, args.protocol, access, args.state)
        except (LabError, httpx.HTTPError) as exc:
            # the state file holds every batch done so far: rerun the same command to resume
            print(f"error: prepare stopped: {exc}; state kept at {args.state}, rerun to resume", file=sys.stderr)
            return 1
        counts = {k: len(state[k]) for k in ("memories", "bindings", "relations")}
        print(f"prepared {counts} in {time.monotonic() - started:.1f}s")
        print(args.state)
        return 0
    paths = Paths(args.fixture, args.relations, args.credential_file, args.state, args.protocol,
                  args.generation, args.plan, args.report)
    try:
        report = evaluate(paths, access, args.server_pid, clients=args.clients)
    except CampaignFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(args.plan)
        print(args.report)
        return 1
    except (LabError, httpx.HTTPError) as exc:
        # before the plan was pinned: nothing was written
        print(f"error: the lab did not answer as required before the campaign started: {exc}", file=sys.stderr)
        return 1
    print(f"evaluated {len(report['jobs'])} jobs in {time.monotonic() - started:.1f}s")
    print(args.plan)
    print(args.report)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
