"""`lab protocol new`: a frozen protocol for your own files, their hashes and sizes computed here.

The protocol keeps the methods, profiles and evaluation of the template for its layout (the v3 sample
protocol of the dataset whose row format the files use: the eight v1 methods, graph_walk and
suite-graph-v3's primary contrast) and pins the question file (and the corpus file, for the
HippoRAG layout) by name, SHA-256 and size. The test split is every question ("all") or counts per
stratum; a development split, drawn from the same file after the test split, only when its counts
are given; without one the cohort is test-only (protocols/derivations/layout_pin.py). Nothing reads
a row here; `check` (handed in by `lab protocol new`: importer.cohort.read_cohort, the import's own
reading, which protocols may not import) reads every row before anything is written (docs/own-data.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ground.artifacts import ALL_ROWS, CORPUS_ROLE, QUESTIONS_ROLE, ROW_FORMATS
from ground.errors import RefusedInput
from protocols.committed import committed_file
from protocols.derivations.layout_pin import file_pin, layout_protocol
from protocols.derivations.method_family import AddMethodFamily
from protocols.graph_file import GRAPH_FILE, GRAPH_FORMATS, IMPORTED_BUILDER, PASSAGE_RULES, PASSAGES
from protocols.route import ProtocolFlag
from protocols.routes import PROTOCOL_FLAGS
from protocols.schema import load_protocol, validate_protocol

# layout -> the committed protocol whose methods and evaluation a new protocol keeps (each row
# format declares its own, ground/artifacts.py)
TEMPLATES = {name: row_format.template for name, row_format in ROW_FORMATS.items()}


def parse_counts(text: str, layout: str, flag: str) -> dict | str:
    """`all`, or `stratum=n` pairs separated by commas, one for every stratum of the layout."""
    strata = ROW_FORMATS[layout].strata
    if text.strip() == ALL_ROWS:
        return ALL_ROWS
    counts: dict[str, int] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or key not in strata or not value.isdigit():
            raise RefusedInput(f"{flag} {text!r}: expected 'all' or stratum=count pairs over the strata of {layout} "
                               f"({', '.join(strata)}), e.g. {','.join(f'{s}=10' for s in strata)}")
        counts[key] = int(value)
    missing = [s for s in strata if s not in counts]
    if missing:
        raise RefusedInput(f"{flag} {text!r}: give a count for every stratum of {layout} (0 allowed); "
                           f"missing {', '.join(missing)}")
    return {s: counts[s] for s in strata}


DATASETS = {"musique": "musique", "hotpotqa": "hotpotqa", "2wiki": "2wikimultihopqa"}  # a layout's word -> dataset


def dataset_of(layout: str) -> str:
    """The dataset whose published settings a layout's rows take (musique, hotpotqa, 2wikimultihopqa)."""
    return next(name for key, name in DATASETS.items() if key in layout)


def builds_graph(flag: ProtocolFlag) -> bool:
    """Whether a family flag's step builds a graph of its own (then it goes not with `--graph`)."""
    return any(flag.step(dataset).get("graph_builder") for dataset in DATASETS.values())


def add_family(protocol: dict, flag: ProtocolFlag, dataset: str, version: str) -> dict:
    """The protocol plus the flag's family, its step's `requires` held to the methods the protocol has
    (a layout's template lacks some of the suites' methods, graph_ppr among them)."""
    fields = flag.step(dataset)
    requires = {method: profile for method, profile in fields.get("requires", {}).items()
                if method in protocol["methods"]}
    return AddMethodFamily(**{**fields, "requires": requires}).derive(protocol, version)


def graph_builder_pin(graph: Path, graph_format: str, producer: str, allow: list[str]) -> dict:
    """`graph_builder` for an external graph (docs/graph-import.md): the file (or, for GraphRAG, the
    folder holding its four `<role>.parquet` tables) pinned by name, SHA-256 and size, its format,
    its producer, and the passage rules `allow`ed (the others refuse)."""
    if graph_format not in GRAPH_FORMATS:
        raise RefusedInput(f"--graph-format {graph_format!r}: one of {', '.join(GRAPH_FORMATS)}")
    roles = GRAPH_FORMATS[graph_format]
    if roles == ("graph",):
        paths = {"graph": graph}
    else:
        paths = {role: graph / f"{role}.parquet" for role in roles}
    for role, path in paths.items():
        if not path.is_file():
            raise RefusedInput(f"--graph {graph}: no {role} file {path}" if len(roles) > 1 else f"file not found: {path}")
    if not producer or not producer.strip():
        raise RefusedInput("--producer: name the model or tool that made the graph (the reports print it)")
    unknown = [rule for rule in allow if rule not in PASSAGE_RULES]
    if unknown:
        raise RefusedInput(f"--allow {unknown[0]!r}: one of {', '.join(PASSAGE_RULES)}")
    builder = {"method": IMPORTED_BUILDER,
               GRAPH_FILE: {"format": graph_format, "producer": producer,
                            "files": {role: file_pin(path) for role, path in paths.items()}}}
    if allow:
        builder[PASSAGES] = {rule: "allow" for rule in PASSAGE_RULES if rule in allow}
    return builder


def questions_in(protocol: dict) -> list[str]:
    """The flagship methods of a protocol whose question it may ask (protocols/registry.py QUESTIONS)."""
    from protocols.registry import QUESTIONS

    return [method for method in protocol["methods"] if method in QUESTIONS]


def ask(protocol: dict, method: str, version: str) -> dict:
    from protocols.registry import QUESTIONS

    if method not in questions_in(protocol):
        raise RefusedInput(f"--question {method!r}: this protocol's flagship methods are "
                           f"{', '.join(questions_in(protocol)) or 'none'} (a family flag adds one: "
                           f"{', '.join(['--graph'] + [f'--{flag.name}' for flag in PROTOCOL_FLAGS])})")
    return QUESTIONS[method].derive(protocol, version)


def new_protocol(*, questions: Path, corpus: Path | None, layout: str, test: str, development: str | None,
                 version: str, title: str | None = None, dataset: dict | None = None,
                 template: Path | None = None, check: Callable[[dict, Path], object] | None = None,
                 graph_builder: dict | None = None, families: Sequence[str] = (),
                 question: str | None = None) -> dict:
    """The validated protocol value (nothing written); `check(protocol, folder)` refuses rows the
    import would refuse. With `graph_builder` (graph_builder_pin) the protocol imports that graph
    and adds the imported-graph family's methods and HippoRAG 2's (protocols/registry.py
    IMPORTED_GRAPH_FAMILY, HIPPORAG2_FAMILY). `families` names family flags (a route's
    `protocol_flag`, protocols/route.py), each family added in the registry's order by its own step
    for the layout's dataset. `question` names the flagship method whose question
    (protocols/registry.py QUESTIONS) the protocol asks first; without it, the last family added
    asks its own."""
    if layout not in TEMPLATES:
        raise RefusedInput(f"--layout {layout!r}: one of {', '.join(TEMPLATES)}")
    corpus_role = ROW_FORMATS[layout].corpus_role
    if (corpus is None) != (corpus_role is None):
        raise RefusedInput(f"--layout {layout} " + ("reads its passages from a corpus file: give --corpus"
                                                    if corpus_role else "takes no --corpus: its documents are "
                                                                        "the rows' own paragraphs"))
    for path in (questions, corpus):
        if path is not None and not path.is_file():
            raise RefusedInput(f"file not found: {path}")
    if corpus is not None and corpus.resolve().parent != questions.resolve().parent:
        raise RefusedInput("--questions and --corpus must be in one folder: the import reads both from its "
                           "--data-dir, by the names the protocol pins")
    files = {QUESTIONS_ROLE: file_pin(questions)}
    if corpus is not None:
        files[CORPUS_ROLE] = file_pin(corpus)
        if files[CORPUS_ROLE]["name"] == files[QUESTIONS_ROLE]["name"]:
            raise RefusedInput("--questions and --corpus name the same file")
    template_protocol = load_protocol(template or committed_file(TEMPLATES[layout]))
    names = " + ".join(entry["name"] for entry in files.values())
    protocol = layout_protocol(
        template_protocol, version,
        title or f"Graph-assisted multi-hop retrieval on {names} ({layout})",
        dataset or {"name": questions.name, "license": "not stated", "attribution": "not stated"},
        layout, files, parse_counts(test, layout, "--test"),
        parse_counts(development, layout, "--development") if development is not None else None)
    if graph_builder is not None:
        from dataclasses import replace

        from protocols.registry import HIPPORAG2_FAMILY, IMPORTED_GRAPH_FAMILY

        family = replace(IMPORTED_GRAPH_FAMILY, graph_builder=graph_builder, title_suffix=" (imported graph)",
                         primary_contrast={**(IMPORTED_GRAPH_FAMILY.primary_contrast or {}), "label": "confirmatory"})
        # and HippoRAG 2 over the same graph (docs/hipporag2.md), the title kept
        protocol = replace(HIPPORAG2_FAMILY, title_suffix="").derive(family.derive(protocol, version), version)
    unknown = [name for name in families if name not in {flag.name for flag in PROTOCOL_FLAGS}]
    if unknown:
        raise RefusedInput(f"no family flag --{unknown[0]}: {', '.join(f'--{f.name}' for f in PROTOCOL_FLAGS)}")
    for flag in PROTOCOL_FLAGS:
        if flag.name in families:
            protocol = add_family(protocol, flag, dataset_of(layout), version)
    if question is not None:
        protocol = ask(protocol, question, version)
    protocol = validate_protocol(protocol)
    if check is not None:
        check(protocol, questions.parent)
    return protocol
