"""Ask a question: the parent with another primary contrast, read first on another metric.

A protocol's primary contrast is the question its run answers: the report, the public page and the
summary open with it, read on the first contrast metric. A protocol that adds a family's flagship
method asks that method's question (HippoRAG 2 against its own dense retriever on R@5, the paper's
claim) only when it says so; this step says so, and changes nothing else: methods, profiles,
cohort and the other metrics stay the parent's, so both protocols' rankings are the same.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ground.errors import RefusedInput
from protocols.derivations import Inputs


@dataclass(frozen=True)
class AskQuestion:
    candidate: str  # the method the question is about
    baseline: str  # the method it is measured against
    metric: str  # the contrast metric the question is read on (moved first)
    label: str  # "confirmatory", or "exploratory: ..." with the reason
    title_suffix: str = ""  # appended to the parent's title

    kind = "ask a question"

    def summary(self) -> str:
        return f"ask a question: {self.candidate} - {self.baseline} on {self.metric}"

    def derive(self, parent: dict, version: str, inputs: Inputs | None = None) -> dict:
        for role, method in (("candidate", self.candidate), ("baseline", self.baseline)):
            if method not in parent["methods"]:
                raise RefusedInput(f"the question's {role} {method!r} is not a method of the protocol "
                                   f"{parent['protocol_version']} (its methods: {', '.join(parent['methods'])})")
        protocol = copy.deepcopy(parent)
        protocol["protocol_version"] = version
        protocol["title"] = parent["title"] + self.title_suffix
        evaluation = protocol["evaluation"]
        evaluation["primary_contrast"] = {"candidate": self.candidate, "baseline": self.baseline, "label": self.label}
        evaluation["contrast_metrics"] = [self.metric] + [m for m in evaluation["contrast_metrics"] if m != self.metric]
        return protocol
