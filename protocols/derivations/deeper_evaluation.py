"""Deeper evaluation: the parent with every method returning `depth` documents and recall judged at
more cutoffs (docs/protocols.md, docs/reports.md "Depth").

The new protocol differs from its parent in `protocol_version`, `title`, `evaluation.depth`,
`evaluation.recall_cutoffs` (the parent's plus the deeper ones) and every method's `limit` (= depth).
`evaluation.k` stays, so nDCG@k, judged recall@k and the supports metrics keep their names and
their cutoff; the deeper cutoffs add `recall@20`, `recall@50`, `recall@100`, and the public report
gets the recall-at-k curve (k = 1..depth). The depth is validated like any protocol field: at least
k, at most the lab's search limit (protocols/schema.py SEARCH_LIMIT_MAX, the server's `search_limit`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ground.errors import RefusedInput
from protocols.derivations import Inputs


@dataclass(frozen=True)
class DeeperEvaluation:
    depth: int  # documents each method returns and each ranking is judged to
    recall_cutoffs: tuple[int, ...]  # added to the parent's (each above its k, at most depth)
    title_suffix: str

    kind = "deeper evaluation"

    def summary(self) -> str:
        return f"deeper evaluation: depth {self.depth}, recall at {', '.join(map(str, self.recall_cutoffs))}"

    def derive(self, parent: dict, version: str, inputs: Inputs | None = None) -> dict:
        evaluation = parent["evaluation"]
        if "depth" in evaluation:
            raise RefusedInput(f"the parent protocol {parent['protocol_version']} already declares a depth")
        if any(spec["limit"] != evaluation["k"] for spec in parent["methods"].values()):
            raise RefusedInput("every method of the parent must return k documents (limit = evaluation.k)")
        protocol = copy.deepcopy(parent)
        protocol["protocol_version"] = version
        protocol["title"] = parent["title"] + self.title_suffix
        deeper = protocol["evaluation"]
        deeper["depth"] = self.depth
        deeper["recall_cutoffs"] = sorted(set(deeper["recall_cutoffs"]) | set(self.recall_cutoffs))
        for spec in protocol["methods"].values():
            spec["limit"] = self.depth
        return protocol
