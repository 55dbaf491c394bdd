"""The `lab` subcommands this stage owns (declared here, dispatched by lab/cli.py): `synth`, and the
flags and output of `import`.

`import` also builds the typed graph (builders/title_graph.py), which the importer may not import
(docs/design.md §2: importer imports protocols only), so its Command is declared in lab/cross_stage_commands.py with the
graph builder passed in; everything else about it is here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from ground.artifacts import CATEGORIES
from ground.command import Command
from ground.errors import RefusedInput
from ground.run_dir import RunDir, add_file, add_run_dir, resolve
from protocols.committed import committed_file

DEFAULT_PROTOCOL = committed_file("graph-multihop-protocol-v1")

IMPORT_SUMMARY = "import the files a protocol pins into source.json and build relations.json"
IMPORT_DESCRIPTION = f"""Import the files a protocol pins into source.json and build the typed graph, relations.json.

Verifies every file's SHA-256 against the protocol, selects the queries by the frozen SHA-256
ordering, and writes source.json (documents, queries, judgments, provenance) and relations.json
(builders/title_graph.py). A protocol that pins an external graph (graph_builder.graph_file) has it read
from --graph-dir (default: --data-dir), matched to the corpus and counted (docs/graph-import.md).
The protocol's row_format says how the files read (MuSiQue, HotpotQA
distractor, 2WikiMultihopQA). Both outputs are refused if they exist (exit 2). Prints the query
counts per split and category, the documents, the relations per kind, both digests and where it wrote.

Without --protocol and --run-dir the protocol is {DEFAULT_PROTOCOL.name}. With --run-dir and
--protocol, the protocol is also copied to protocol.json there (the later steps read it), unless
the directory already holds it; one holding another protocol is refused."""


def configure_import(parser: argparse.ArgumentParser) -> None:
    add_run_dir(parser)
    add_file(parser, "--protocol", "protocol", "protocol pinning the source files, selection and counts")
    parser.add_argument("--data-dir", type=Path, metavar="DIR", help="folder holding the files the protocol names")
    # the Qilbee workflow's older name (scripts/import_musique_graph.py --source-dir)
    parser.add_argument("--source-dir", type=Path, dest="data_dir", help=argparse.SUPPRESS)
    parser.add_argument("--graph-dir", type=Path, metavar="DIR",
                        help="folder holding the external graph files the protocol pins in graph_builder.graph_file "
                             "(default: --data-dir; docs/graph-import.md)")
    add_file(parser, "--output", "source", "source.json to write (must not exist)")
    add_file(parser, "--relations", "relations", "relations.json to write (must not exist)")


def run_import(args: argparse.Namespace, graph_builders: Mapping[str, Callable]) -> int:
    """`lab import`; `graph_builders` maps each graph builder's name to its (source, source digest)
    -> relations function, and the protocol's `graph_builder.method` picks one."""
    from ground.files import save
    from importer import import_source
    from protocols.schema import load_protocol

    if args.data_dir is None:
        raise RefusedInput("give --data-dir DIR: the folder holding the files the protocol names")
    protocol = resolve(args, "--protocol", "protocol", default=None if args.run_dir else DEFAULT_PROTOCOL)
    output, relations = resolve(args, "--output", "source"), resolve(args, "--relations", "relations")
    keep = _protocol_copy(args, protocol)
    method = load_protocol(protocol)["graph_builder"]["method"]
    if method not in graph_builders:
        raise RefusedInput(f"{protocol}: no graph builder {method!r} in this lab ({', '.join(graph_builders)})")
    print(f"importing {args.data_dir} with {protocol}", file=sys.stderr)
    summary = import_source(protocol, args.data_dir, output, relations, graph_builder=graph_builders[method],
                            log=lambda line: print(line, file=sys.stderr, flush=True), graph_dir=args.graph_dir)
    for split, n in summary["queries"].items():
        categories = ", ".join(f"{c} {k}" for c, k in summary["categories"][split].items())
        print(f"queries {split}: {n} ({categories})")
    print(f"documents: {summary['documents']}")
    print("relations: " + ", ".join(f"{kind} {n}" for kind, n in summary["relation_counts"].items()))
    if "imported" in summary:
        imported = summary["imported"]
        print(f"imported graph: {imported['format']} by {imported['producer']}: "
              + ", ".join(f"{key} {n}" for key, n in imported["counts"].items()))
        print("left out: " + (", ".join(f"{key} {n}" for key, n in imported["left_out"].items()) or "nothing"))
    print(f"source digest: {summary['source_digest']}")
    print(f"relations digest: {summary['relations_digest']}")
    print(f"wrote {summary['output']}")
    print(f"wrote {summary['relations']}")
    if keep is not None:
        save(keep, load_protocol(protocol))
        print(f"wrote {keep}")
    return 0


def _protocol_copy(args: argparse.Namespace, protocol: Path) -> Path | None:
    """Where to copy an explicit --protocol so the run directory holds it (the later steps read
    protocol.json there); None when there is no run directory or it already holds this protocol.
    A run directory holding another protocol is refused before anything is written."""
    from ground.canonical import digest
    from ground.files import load_json

    if args.run_dir is None or args.protocol is None:
        return None
    target = RunDir(args.run_dir).protocol
    if not target.exists():
        return target
    if digest(load_json(target, "protocol")) != digest(load_json(protocol, "protocol")):
        raise RefusedInput(f"{target} is another protocol than --protocol {protocol}")
    return None


SYNTH_DESCRIPTION = """Write a synthetic corpus into a new directory (docs/synthetic.md).

MuSiQue shape (default): DIR/synthetic_train.jsonl and DIR/synthetic_dev.jsonl; --shape hotpotqa or
2wikimultihopqa: one HotpotQA- or 2Wiki-shaped dev file (a JSON array). The default seed and size
of the MuSiQue shape are the ones protocols/frozen/datasets/synthetic-v1.json pins by SHA-256. Prints each file
written with its SHA-256, rows and rows per category."""


def configure_synth(parser: argparse.ArgumentParser) -> None:
    from importer import synthetic, synthetic_context

    parser.add_argument("--output-dir", type=Path, metavar="DIR", required=True, help="new directory to create")
    parser.add_argument("--shape", choices=("musique", *synthetic_context.SHAPES), default="musique",
                        help="row format of the files (default: musique)")
    parser.add_argument("--seed", help=f"default: {synthetic.DEFAULT_SEED} (musique), "
                                       f"{synthetic_context.DEFAULT_SEED} (the other shapes)")
    parser.add_argument("--questions", type=int, default=synthetic.DEFAULT_QUESTIONS,
                        help="dev rows (musique: train gets 35%% as many; 7,000 give about 100,000 paragraphs; "
                             "default: %(default)s)")


def run_synth(args: argparse.Namespace) -> int:
    import json
    from collections import Counter

    from ground.canonical import sha256_bytes
    from ground.files import refuse_existing
    from importer import synthetic, synthetic_context

    if args.questions < 1:
        raise RefusedInput(f"--questions must be at least 1, got {args.questions}")
    refuse_existing(args.output_dir)
    if args.shape != "musique":
        files = synthetic_context.generate_context_file(args.shape, args.seed or synthetic_context.DEFAULT_SEED,
                                                        args.questions)
        for path in synthetic.write_files(args.output_dir, files):
            rows = json.loads(files[path.name])
            by_type = Counter(row["type"] for row in rows)
            counts = ", ".join(f"{name} {by_type[name]}" for name in synthetic_context.SHAPES[args.shape]["types"])
            print(f"wrote {path} sha256 {sha256_bytes(files[path.name])} rows {len(rows)} ({counts})")
        return 0
    files = synthetic.generate_files(args.seed or synthetic.DEFAULT_SEED, args.questions)
    for path in synthetic.write_files(args.output_dir, files):
        data = files[path.name]
        rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
        by_prefix = Counter(synthetic.iter_hop_prefixes(rows))
        counts = ", ".join(f"{prefix} {by_prefix[prefix]}" for prefix in CATEGORIES)
        print(f"wrote {path} sha256 {sha256_bytes(data)} rows {len(rows)} ({counts}) "
              f"distinct paragraphs {len(synthetic.distinct_paragraphs(rows))}")
    return 0


DATA_VERIFY_DESCRIPTION = """Check the shared samples under a data folder against the lab's pins.

Every file of every sample folder (importer/samples.py; docs/data.md lists them) is looked for
under --data-dir, its size and SHA-256 compared with the pin. Prints one line per file (ok,
missing, or what differs) and a last line that counts them. Exit 0 when every file is there and
equal, 1 when any is missing or different, 2 when --data-dir is no folder. Reads only."""


def configure_data_verify(parser: argparse.ArgumentParser) -> None:
    from importer.samples import DEFAULT_DATA_DIR

    parser.add_argument("--data-dir", type=Path, metavar="DIR", default=DEFAULT_DATA_DIR,
                        help=f"the folder holding the sample folders (default: {DEFAULT_DATA_DIR}, beside the clone)")


def run_data_verify(args: argparse.Namespace) -> int:
    from importer.samples import verify

    if not args.data_dir.is_dir():
        raise RefusedInput(f"--data-dir {args.data_dir} is not a folder: give the folder that holds the sample "
                           f"folders (docs/data.md)")
    findings = verify(args.data_dir)
    for f in findings:
        where = f"{f.name}" if f.folder == "." else f"{f.folder}/{f.name}"
        print(f"{f.status:8} {where}" + (f": {f.detail}" if f.detail else ""))
    bad = [f for f in findings if f.status != "ok"]
    print(f"{len(findings) - len(bad)} of {len(findings)} files as pinned under {args.data_dir}"
          + (f"; {len(bad)} missing or different" if bad else ""))
    return 1 if bad else 0


def run_data_list(args: argparse.Namespace) -> int:
    from importer.samples import tables

    print(tables(), end="")
    return 0


COMMANDS: tuple[Command, ...] = (
    Command("synth", "write a synthetic MuSiQue-, HotpotQA- or 2Wiki-shaped corpus into a new directory",
            description=SYNTH_DESCRIPTION, configure=configure_synth, run=run_synth),
    Command("data", "the shared samples: list them, verify a folder of them", subcommands=(
        Command("list", "every sample folder and file the lab pins (docs/data.md's tables)", run=run_data_list),
        Command("verify", "check the sample folders under --data-dir against their pins",
                description=DATA_VERIFY_DESCRIPTION, configure=configure_data_verify, run=run_data_verify),
    )),
)
