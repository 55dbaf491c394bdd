"""The `lab protocol` subcommands (declared here, dispatched by lab/cli.py): the lineage of every
committed protocol and suite (protocols/registry.py), its byte-for-byte check, and a declared step
or suite applied to other files."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from ground.canonical import digest
from ground.command import Command, typed
from ground.errors import CheckFailed, RefusedInput
from ground.files import refuse_existing, save
from ground.run_dir import DEFAULT_RUN_ROOT
from protocols import locks, registry
from protocols.committed import FROZEN_DIR
from protocols.derivations import Inputs, Skipped
from protocols.derivations.root import Root
from protocols.derivations.suite_pin import SuitePin
from protocols.graph_file import GRAPH_FORMATS, PASSAGE_RULES
from protocols.new import DATASETS, TEMPLATES, builds_graph, graph_builder_pin, new_protocol, questions_in
from protocols.regenerate import FAILED, FAILING, SHARED_DATA, SKIPPED, regenerate, write
from protocols.routes import PROTOCOL_FLAGS, catalog_problems
from protocols.schema import load_protocol, validate_protocol


def _declared(name: str) -> registry.Declared:
    entries = registry.check_declarations(registry.DECLARED)
    if name not in entries:
        raise RefusedInput(f"no declared protocol or suite is named {name!r} (`{typed('protocol list')}` lists them)")
    return entries[name]


def _data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, default=SHARED_DATA,
                        help="the shared data folder that sample pins and the full cohort read: each sample's "
                             "folder with its MANIFEST.json, and musique-dev-metadata.jsonl "
                             "(default: ../shared/data beside the repository)")


# ------------------------------------------------------------------------------------- list and show


def _routes_configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--write", type=Path, metavar="PAGE",
                        help="put the table in PAGE between its markers instead of printing it (docs/api.md)")


def _routes(args: argparse.Namespace) -> int:
    from ground.marked_block import write_block
    from protocols.routes import BEGIN, END, route_table

    if args.write is None:
        print(route_table())
        return 0
    print(write_block(args.write, BEGIN, END, route_table(), "route table"))
    return 0


def _list(args: argparse.Namespace) -> int:
    rows = [(entry.name, entry.parent or "-", entry.step.summary()) for entry in registry.DECLARED]
    widths = [max(len(row[i]) for row in rows + [("name", "parent", "")]) for i in range(2)]
    print(f"{'name':<{widths[0]}}  {'parent':<{widths[1]}}  step")
    for name, parent, step in rows:
        print(f"{name:<{widths[0]}}  {parent:<{widths[1]}}  {step}")
    return 0


def _add_run_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run-root", type=Path, metavar="DIR", default=DEFAULT_RUN_ROOT,
                        help=f"the folder whose runs bind the names they ran frozen, as `lab run` holds a file to the "
                             f"runs beside its --run-dir (default: {DEFAULT_RUN_ROOT}, where `lab demo` writes)")


def _show_configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="a declared protocol or suite (its file name without .json), or the path of any "
                                     "protocol file")
    _add_run_root(parser)


def _show(args: argparse.Namespace) -> int:
    if args.name.endswith(".json") or "/" in args.name:
        return _show_file(Path(args.name), args.run_root)
    entry = _declared(args.name)
    if not isinstance(entry.step, SuitePin):  # a file that no longer validates is refused, not shown
        load_protocol(FROZEN_DIR / entry.file)
    print(f"{entry.name}: protocols/frozen/{entry.file}")
    if isinstance(entry.step, SuitePin):
        print("pins, each with its lineage from the root:")
        for name in entry.inputs:
            print(f"  {name}: {' -> '.join(e.name for e in registry.lineage(name, registry.DECLARED))}")
    else:
        print("lineage, root first:")
        for ancestor in registry.lineage(entry.name, registry.DECLARED):
            print(f"  {ancestor.name:<34} {ancestor.step.summary()}")
    print(f"step: {entry.step.kind}; its parameters:")
    print(json.dumps(dataclasses.asdict(entry.step), indent=2, ensure_ascii=False))
    return 0


def _show_file(path: Path, run_root: Path) -> int:
    """Any protocol file: its name and digest, how it stands against its lock, the lab's own
    protocols and the runs under `run_root` (exit 1 when `lab run` there would refuse it), and what
    it runs."""
    if not path.is_file():
        raise RefusedInput(f"{path}: no such file")
    protocol = load_protocol(path)
    standing = locks.status(path, protocol, run_root)
    problems = list(standing.problems) + catalog_problems(protocol)
    print(f"{protocol['protocol_version']}: {path}")
    print(f"digest: {digest(protocol)}")
    print(standing.line if problems else standing.told())
    for problem in problems:
        print(f"refused by lab run: {problem}")
    print("source files: " + ", ".join(f"{role} {entry['name']}" for role, entry in protocol["source_files"].items()))
    splits = protocol["selection"]["splits"]
    print("splits: " + "; ".join(f"{name} {split['counts']}" for name, split in splits.items()))
    print("methods: " + ", ".join(protocol["methods"]))
    primary = protocol["evaluation"].get("primary_contrast") or {}
    if primary:
        print(f"primary contrast: {primary.get('candidate')} - {primary.get('baseline')}")
    return 1 if problems else 0


def _freeze_configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="the protocol file to freeze (FILE.lock.json is written beside it)")
    _add_run_root(parser)


def _freeze(args: argparse.Namespace) -> int:
    protocol = load_protocol(args.file)
    lock = locks.lock_path(args.file)
    standing = locks.check_frozen(args.file, protocol, args.run_root)
    if lock.is_file() and standing.frozen:
        print(f"already frozen: {lock} holds its digest {digest(protocol)}; nothing written")
        return 0
    problems = catalog_problems(protocol)
    if problems:  # what `lab run` would refuse is not frozen either
        raise RefusedInput(f"protocol {args.file}: " + "; ".join(problems))
    written = locks.freeze(args.file, protocol, args.run_root)
    print(f"froze {protocol['protocol_version']} (digest {digest(protocol)}); `lab run` now refuses this file "
          f"if it changes")
    print(f"wrote {written}")
    return 0


# ------------------------------------------------------------------------------------- regenerate


def _regenerate_configure(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true",
                      help="compare every regenerated file with the committed one; exit 1 naming each that differs")
    mode.add_argument("--output-dir", type=Path,
                      help="a new directory to write the regenerated set into (refused if it exists); "
                           "protocols/ itself is never written")
    _data_dir(parser)


def _regenerate(args: argparse.Namespace) -> int:
    if args.output_dir is not None:
        refuse_existing(args.output_dir)
    outcomes = regenerate(registry.DECLARED, data_dir=args.data_dir)
    for outcome in outcomes:
        print(outcome.line())
    counts = {status: sum(o.status == status for o in outcomes) for status in dict.fromkeys(o.status for o in outcomes)}
    print(", ".join(f"{n} {status}" for status, n in counts.items()))
    if args.output_dir is not None:
        written = write(outcomes, args.output_dir)
        print(f"wrote {len(written)} files to {args.output_dir}")
        failed = [o.file for o in outcomes if o.status == FAILED]
        if failed:
            raise CheckFailed(f"could not derive {', '.join(failed)} (see above); the rest is written")
        return 0
    failing = [o.file for o in outcomes if o.status in FAILING]
    if failing:
        raise CheckFailed(f"{len(failing)} file(s) are not what their declared derivation makes: {', '.join(failing)}")
    skipped = sum(o.status == SKIPPED for o in outcomes)
    print(f"every declared file regenerates byte for byte{f' ({skipped} skipped, reasons above)' if skipped else ''}")
    return 0


# ------------------------------------------------------------------------------------- suite and derive


def _suite_configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="a declared suite (`lab protocol list`: step \"suite over ...\")")
    parser.add_argument("--protocols-dir", type=Path, required=True,
                        help="the folder holding the suite's protocol files (same names, perhaps other hashes)")
    parser.add_argument("--output", type=Path, required=True, help="the suite file to write (refused if it exists)")


def _suite(args: argparse.Namespace) -> int:
    entry = _declared(args.name)
    if not isinstance(entry.step, SuitePin):
        raise RefusedInput(f"{args.name} is a protocol ({entry.step.kind}), not a suite")
    refuse_existing(args.output)
    if not args.protocols_dir.is_dir():
        raise RefusedInput(f"--protocols-dir {args.protocols_dir} is not a directory")
    inputs = Inputs(data_dir=SHARED_DATA, protocol=lambda file: load_protocol(args.protocols_dir / file))
    suite = entry.step.derive(None, entry.name, inputs)
    save(args.output, suite)
    for dataset in suite["datasets"]:
        print(f"pinned {dataset['protocol']} {dataset['protocol_digest']}")
    print(f"wrote {args.output}")
    if args.output.resolve().parent != args.protocols_dir.resolve():
        print(f"note: a suite is read beside its protocols (pool); move {args.output.name} into {args.protocols_dir}")
    return 0


def _derive_configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="a declared protocol whose step to apply (e.g. graph-multihop-protocol-v2: "
                                     "add the rescue family)")
    parser.add_argument("--protocol", type=Path, required=True, help="the parent protocol file (read only)")
    parser.add_argument("--version", required=True, help="protocol_version of the derived protocol")
    parser.add_argument("--output", type=Path, required=True, help="the protocol file to write (refused if it exists)")
    _data_dir(parser)


def _derive(args: argparse.Namespace) -> int:
    entry = _declared(args.name)
    if isinstance(entry.step, (Root, SuitePin)):
        raise RefusedInput(f"{args.name} is a {entry.step.kind}: it has no step to apply to another protocol")
    if args.version in registry.check_declarations(registry.DECLARED):
        raise RefusedInput(f"--version {args.version} names a declared protocol (`{typed(f'protocol show {args.version}')}` "
                           f"shows it); give the derived protocol a name of its own")
    refuse_existing(args.output)
    parent = load_protocol(args.protocol)  # validated first: a malformed parent is refused, not a KeyError
    if args.version == parent["protocol_version"]:
        raise RefusedInput("--version must differ from the parent protocol's")
    try:
        derived = entry.step.derive(parent, args.version, Inputs(data_dir=args.data_dir, protocol=load_protocol))
    except Skipped as skipped:
        raise RefusedInput(str(skipped)) from None
    save(args.output, validate_protocol(derived))
    print(f"wrote {args.output} ({entry.step.summary()})")
    return 0


# ------------------------------------------------------------------------------------- new


def _new_configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--questions", type=Path, required=True,
                        help="the question file (a JSON array, or JSON lines for musique_v1)")
    parser.add_argument("--corpus", type=Path,
                        help="the passage corpus file, a JSON array of {title, text} (the hipporag_* layouts only; "
                             "in the question file's folder)")
    parser.add_argument("--layout", required=True, choices=sorted(TEMPLATES),
                        help="the row format of the question file; hipporag_* adds a separate corpus file")
    parser.add_argument("--test", required=True,
                        help="the test split: 'all' (every question) or counts per stratum, e.g. 2=40,3=30,4=30 "
                             "(MuSiQue hops) or bridge=50,comparison=22 (HotpotQA types)")
    parser.add_argument("--development",
                        help="counts of a development split drawn from the same file after the test split "
                             "(absent: the cohort is test-only and warms up on the corpus warm-up query)")
    parser.add_argument("--output", type=Path, required=True, help="the protocol file to write (refused if it exists)")
    parser.add_argument("--version", help="protocol_version (default: the output file's name without .json)")
    parser.add_argument("--title", help="the protocol's title (default: names the files and the layout)")
    parser.add_argument("--dataset-name", help="the dataset's name (default: the question file's name)")
    parser.add_argument("--license", default="not stated", help="the dataset's licence")
    parser.add_argument("--attribution", default="not stated", help="whom to credit for the data")
    parser.add_argument("--graph", type=Path, metavar="PATH",
                        help="an external knowledge graph to import and judge (docs/graph-import.md): its file, or "
                             "for graphrag_parquet_v1 the folder of its four tables")
    parser.add_argument("--graph-format", metavar="NAME",
                        help=f"with --graph: {', '.join(GRAPH_FORMATS)}")
    parser.add_argument("--producer", metavar="TEXT", help="with --graph: the model or tool that made the graph")
    parser.add_argument("--allow", action="append", default=[], metavar="RULE",
                        help=f"with --graph: a passage rule to count instead of refuse (repeatable): "
                             f"{', '.join(PASSAGE_RULES)}")
    for flag in PROTOCOL_FLAGS:  # each family's own (protocols/route.py ProtocolFlag)
        parser.add_argument(f"--{flag.name}", action="store_true", help=flag.help)
    flagships = ", ".join(f"{method} with --{flag.name}" for flag in PROTOCOL_FLAGS
                          for method in flag.step(next(iter(DATASETS.values())))["methods"])
    parser.add_argument("--question", metavar="METHOD",
                        help="the flagship method whose question the run answers first (the primary contrast; "
                             "default: the last family added asks its own): graph_hybrid_imported or hipporag2 "
                             f"with --graph, {flagships}; printed, and written into the protocol")


def question_line(protocol: dict) -> str:
    """The question the protocol's run answers first, and the others it could ask."""
    evaluation = protocol["evaluation"]
    contrast = evaluation["primary_contrast"]
    line = (f"question: {contrast['candidate']} - {contrast['baseline']} on {evaluation['contrast_metrics'][0]} "
            f"({contrast['label']})")
    others = [method for method in questions_in(protocol) if method != contrast["candidate"]]
    return line + (f"; --question {' or '.join(others)} asks another" if others else "")


def new_run(check: Callable[..., object] | None) -> Callable[[argparse.Namespace], int]:
    """`lab protocol new` reading its rows with `check` (lab/cross_stage_commands.py hands in the importer's)."""
    return lambda args: _new(args, check)


def _new(args: argparse.Namespace, check: Callable[..., object] | None = None) -> int:
    refuse_existing(args.output, locks.lock_path(args.output))
    graph_flags = (args.graph_format, args.producer) + tuple(args.allow)
    if args.graph is None and any(graph_flags):
        raise RefusedInput("--graph-format, --producer and --allow go with --graph")
    families = [flag for flag in PROTOCOL_FLAGS if getattr(args, flag.name.replace("-", "_"))]
    for flag in families:
        if args.graph is not None and builds_graph(flag):
            raise RefusedInput(f"--graph and --{flag.name} are two graphs: a protocol imports one or builds the other")
    if args.graph is not None and not (args.graph_format and args.producer):
        raise RefusedInput("--graph needs --graph-format and --producer (docs/graph-import.md)")
    builder = (graph_builder_pin(args.graph, args.graph_format, args.producer, args.allow)
               if args.graph is not None else None)
    if builder is not None and check is not None:  # the graph is read from its own folder
        inner = check
        check = lambda protocol, folder: inner(protocol, folder, args.graph if args.graph.is_dir() else args.graph.parent)  # noqa: E731
    protocol = new_protocol(
        questions=args.questions, corpus=args.corpus, layout=args.layout, test=args.test,
        development=args.development, version=args.version or args.output.stem, title=args.title,
        dataset={"name": args.dataset_name or args.questions.name, "license": args.license,
                 "attribution": args.attribution}, check=check, graph_builder=builder,
        families=[flag.name for flag in families], question=args.question)
    locks.check_frozen(args.output, protocol)  # its name is not the lab's, nor one frozen beside it
    save(args.output, protocol)
    frozen = locks.freeze(args.output, protocol)
    for role, entry in protocol["source_files"].items():
        print(f"pinned {role}: {entry['name']} ({entry['bytes']:,} bytes, sha256 {entry['sha256']})")
    for role, entry in protocol["graph_builder"].get("graph_file", {}).get("files", {}).items():
        print(f"pinned graph {'file' if role == 'graph' else role + ' table'}: {entry['name']} ({entry['bytes']:,} bytes, sha256 {entry['sha256']})")
    splits = protocol["selection"]["splits"]
    print("splits: " + "; ".join(f"{name} {split['counts']}" for name, split in splits.items())
          + ("" if "development" in splits else " (test-only: warm-up on the corpus warm-up query)"))
    print(question_line(protocol))
    print(f"wrote {args.output}")
    print(f"wrote {frozen} (its lock: `lab run` refuses the file once it changes)")
    return 0


COMMANDS: tuple[Command, ...] = (
    Command("protocol", "declared protocols and suites: their lineage, their byte-for-byte check, new versions",
            description=("Every committed protocol and suite is declared once in protocols/registry.py: its file,\n"
                         "its parent and the derivation step that makes it (docs/protocols.md)."),
            subcommands=(
                Command("list", "list every declared protocol and suite with its parent and step", run=_list),
                Command("show", "show one protocol's lineage from its root and its step's parameters, or any "
                                "protocol file: digest, lock, what it runs",
                        configure=_show_configure, run=_show),
                Command("freeze", "freeze your own protocol file: its digest in a lock beside it, checked by lab run",
                        description=("Write FILE.lock.json beside FILE: the protocol's name, the digest of its\n"
                                     "content and of each field. `lab run` then refuses the file, before it\n"
                                     "writes anything, once its content no longer matches (naming the fields\n"
                                     "that changed), and refuses another file in the same folder that carries\n"
                                     "the same name with other content. A lock is never rewritten; `lab\n"
                                     "protocol new` writes one. docs/protocols.md, \"Your own protocol, frozen\"."),
                        configure=_freeze_configure, run=_freeze),
                Command("regenerate", "rebuild every declared file from its parent and compare, or write the set",
                        description=("Rebuild every declared protocol and suite from its committed parent.\n"
                                     "--check compares bytes with the committed files: exit 0 when all are equal,\n"
                                     "1 naming each that differs, is undeclared or cannot be derived. Sample pins\n"
                                     "and the full cohort read the shared data; when it is absent they are\n"
                                     "reported as skipped, with the reason. --output-dir writes the regenerated\n"
                                     "set into a new directory. Committed files are frozen and never rewritten:\n"
                                     "a changed derivation is a new version."),
                        configure=_regenerate_configure, run=_regenerate),
                Command("suite", "pin a declared suite over the protocol files of another folder",
                        description=("Pin a declared suite over the protocol files of another folder (a twin\n"
                                     "cohort whose files have other hashes): each file's digest is computed\n"
                                     "here, and every contrast's methods and metric are checked in it."),
                        configure=_suite_configure, run=_suite),
                Command("new", "write a frozen protocol for your own question (and corpus) files",
                        description=("Write a frozen protocol for your own files: the question file (and, for the\n"
                                     "HippoRAG layout, the passage corpus) pinned by SHA-256 and size, computed\n"
                                     "here; the methods and evaluation of the layout's v3 sample protocol; the test\n"
                                     "split 'all' or counts per stratum, a development split only when asked.\n"
                                     "Example (docs/own-data.md):\n"
                                     "  lab protocol new --questions data/musique_train.json --corpus\n"
                                     "      data/musique_train_corpus.json --layout hipporag_musique_v1 --test all\n"
                                     "      --output mine-v1.json"),
                        configure=_new_configure, run=_new),
                Command("routes", "print the table of search routes the docs hold, made from the registry",
                        description=("Print the search routes of protocols/routes.py as the Markdown table that\n"
                                     "docs/api.md holds between its markers (tests/protocols/test_route_table.py\n"
                                     "holds it to the registry); `--write docs/api.md` puts it there."),
                        configure=_routes_configure, run=_routes),
                Command("derive", "apply a declared protocol's step to another protocol file",
                        description=("Apply the step that makes a declared protocol to another parent (a test\n"
                                     "cohort, a twin): `lab protocol derive graph-multihop-protocol-v2\n"
                                     "--protocol mine-v1.json --version mine-v2 --output mine-v2.json` adds the\n"
                                     "rescue family to mine-v1.json."),
                        configure=_derive_configure, run=_derive),
            )),
)
