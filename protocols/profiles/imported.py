"""The graph methods over an imported graph's relations (docs/graph-import.md): every parameter.

Each entry is an existing frozen profile with the relation kinds it follows replaced by the
`shares_argument` relations of `imported_triples_v1` (passages linked through an argument their
triples share), and nothing else changed, so that the same method over the title graph and over
the imported graph can stand side by side in one protocol:

- `typed_path_imported_v1`: typed_path_balanced_v1 weighing shares_argument 1.0 and every title
  graph kind 0 (graph route);
- `seeded_walk_imported_v1`: seeded_walk_v1 walking shares_argument instead of the title graph (walk);
- `entity_walk_imported_v1`: entity_walk_v1 whose entity step follows shares_argument instead of
  shares_name (walk).

`relations` names the builder whose relations a profile follows; a protocol that does not build
them is refused (protocols/schema.py). Published defaults of the parents, no tuning.
"""

from __future__ import annotations

import copy

from protocols.graph_file import IMPORTED_BUILDER
from protocols.profiles.v1 import V1_PROFILES
from protocols.profiles.walk import WALK_PROFILES

IMPORTED_KINDS = ["shares_argument"]


def _typed_path() -> dict:
    profile = copy.deepcopy(V1_PROFILES["typed_path_balanced_v1"])
    profile["kind_weights"] = {kind: 0.0 for kind in profile["kind_weights"]} | {kind: 1.0 for kind in IMPORTED_KINDS}
    profile["relations"] = IMPORTED_BUILDER
    return profile


def _seeded_walk() -> dict:
    profile = copy.deepcopy(WALK_PROFILES["seeded_walk_v1"])
    profile["graph"]["kinds"] = list(IMPORTED_KINDS)
    profile["graph"]["relations"] = IMPORTED_BUILDER
    return profile


def _entity_walk() -> dict:
    profile = copy.deepcopy(WALK_PROFILES["entity_walk_v1"])
    profile["entity_step"]["kinds"] = list(IMPORTED_KINDS)
    profile["entity_step"]["relations"] = IMPORTED_BUILDER
    return profile


IMPORTED_GRAPH_PROFILES: dict[str, dict] = {"typed_path_imported_v1": _typed_path()}
IMPORTED_WALK_PROFILES: dict[str, dict] = {
    "seeded_walk_imported_v1": _seeded_walk(),
    "entity_walk_imported_v1": _entity_walk(),
}
