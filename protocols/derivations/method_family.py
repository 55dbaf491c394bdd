"""Add a method family: the parent's methods plus new ones, each with its frozen ranking profile.

Every added method names its profile, and the profile's value is copied from its route's entry in
protocols/routes.py (the catalog entry the server serves): the protocol is a snapshot of it, and from then on the
evaluator compares the live catalog with that snapshot. Besides the methods, the step may set the
primary contrast, add exploratory analyses (under `evaluation.exploratory_analyses`, created with
its label when the parent has none), add contrast metrics and name the graph builder whose
relations the new methods follow (`graph_builder`: protocol v4's entity graph, docs/graph-v4.md).
Everything else is the parent's, key for key, so a diff against the parent shows exactly what the
family adds.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ground.errors import RefusedInput
from protocols.derivations import Inputs
from protocols.routes import PROFILES as FROZEN_PROFILES  # every family's catalog entries


@dataclass(frozen=True)
class AddMethodFamily:
    title_suffix: str  # appended to the parent's title
    methods: dict  # method name -> method fields (route, profile, limit, ...), in the order they are added
    primary_contrast: dict | None = None  # replaces the parent's when given
    exploratory_analyses: dict = field(default_factory=dict)  # analysis name -> declaration, added
    contrast_metrics: tuple[str, ...] = ()  # appended to the parent's contrast metrics when absent
    requires: dict = field(default_factory=dict)  # method name -> the profile the parent's method must use
    replaces_title_suffix: str | None = None  # a suffix of the parent's title this step's suffix replaces
    # replaces the parent's graph_builder when given: a builder's name, or the whole entry (an
    # imported graph's pinned files, protocols/graph_file.py)
    graph_builder: str | dict | None = None

    kind = "add a method family"

    def summary(self) -> str:
        return f"add a method family: {', '.join(self.methods)}"

    def derive(self, parent: dict, version: str, inputs: Inputs | None = None) -> dict:
        protocol = copy.deepcopy(parent)  # the step's own values are copied in too: a caller may edit its result
        protocol["protocol_version"] = version
        title = parent["title"]
        if self.replaces_title_suffix and title.endswith(self.replaces_title_suffix):
            title = title[:-len(self.replaces_title_suffix)]
        protocol["title"] = title + self.title_suffix
        for method, profile in self.requires.items():
            held = protocol["methods"].get(method, {}).get("profile")
            if held != profile:
                raise RefusedInput(f"the parent protocol has no method {method!r} with profile {profile!r} "
                                   f"(this family builds on it)")
        for method, fields in self.methods.items():
            profile = fields["profile"]
            if method in protocol["methods"] or profile in protocol["ranking_profiles"]:
                raise RefusedInput(f"the parent protocol already holds {method!r} or {profile!r}")
            if profile not in FROZEN_PROFILES:
                raise RefusedInput(f"{profile!r} is not a frozen profile of a route in protocols/routes.py")
            protocol["methods"][method] = copy.deepcopy(fields)
            protocol["ranking_profiles"][profile] = copy.deepcopy(FROZEN_PROFILES[profile])
        if isinstance(self.graph_builder, str):
            protocol["graph_builder"] = {"method": self.graph_builder}
        elif self.graph_builder is not None:
            protocol["graph_builder"] = copy.deepcopy(self.graph_builder)
        evaluation = protocol["evaluation"]
        if self.primary_contrast is not None:
            evaluation["primary_contrast"] = copy.deepcopy(self.primary_contrast)
        if self.exploratory_analyses:
            analyses = evaluation.setdefault("exploratory_analyses", {"label": "exploratory"})
            for name, declaration in self.exploratory_analyses.items():
                if name in analyses:
                    raise RefusedInput(f"the parent protocol already declares the exploratory analysis {name!r}")
                analyses[name] = copy.deepcopy(declaration)
        added = [m for m in self.contrast_metrics if m not in evaluation["contrast_metrics"]]
        if added:
            evaluation["contrast_metrics"] = evaluation["contrast_metrics"] + added
        return protocol
