"""How documents are grouped into encode calls: part of the space, because it can move bits.

A transformer batch is padded to its longest input; the padded shapes change the order of float
summation, so the same text can come out different in the last bit under another grouping
(measured for sentence-transformers: up to 1.4e-7 between batch sizes 32 and 16). Documents are
always ordered longest first (ties in source order), then cut into batches:

- `fixed`: `batch_size` documents per call (the lab's first policy; its provenance keeps the
  original shape, so fixtures built with it keep their revision);
- `token_budget`: length buckets. A batch grows, longest first, while its padded size (documents x
  longest tokens) stays within `token_budget` and it holds at most `batch_size` documents; short
  documents travel in large batches, long ones in small batches, and little time goes to padding
  or to attention over long padded rows.

Which texts go through the plan is the recipe, also part of the space:

- recipe 1: documents only; queries one per call (as a user's query arrives, so each has a real
  latency), a family's section texts (entities, sentences, phrases, facts) in fixed batches of 32 in
  their given order. Fixtures built before recipe 2 keep it, their provenance unchanged;
- recipe 2: every text the fixture holds (documents, queries, each section's texts) through this
  plan, each kind planned on its own. Padding is what a fixed batch in source order wastes: on 1,500
  LinearRAG sentences under all-MiniLM-L6-v2, token_budget 64/2048 ran 2.5x the fixed batches of
  recipe 1 and 1.4x sentence-transformers' own length-sorted `encode()` (docs/embeddings.md,
  "Throughput"). A query's time is then its batch's time over the batch's size, as a document's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ground.errors import RefusedInput

DOCUMENT_ORDER = "tokens_desc_then_source_order"
POLICIES = ("fixed", "token_budget")
RECIPES = (1, 2)
SECTION_BATCH = 32  # recipe 1's fixed batches of section texts


@dataclass(frozen=True)
class Batching:
    policy: str = "fixed"
    batch_size: int = 32
    token_budget: int | None = None
    recipe: int = 1

    @property
    def plans_every_text(self) -> bool:
        return self.recipe >= 2

    def check(self) -> "Batching":
        if self.policy not in POLICIES:
            raise RefusedInput(f"--batching must be one of {', '.join(POLICIES)}, got {self.policy!r}")
        _positive("--batch-size", self.batch_size)
        if self.policy == "token_budget":
            _positive("--token-budget", self.token_budget)
        elif self.token_budget is not None:
            raise RefusedInput("--token-budget applies to --batching token_budget only")
        if self.recipe not in RECIPES:
            raise RefusedInput(f"--recipe must be one of {', '.join(map(str, RECIPES))}, got {self.recipe!r}")
        return self

    def provenance(self) -> dict:
        if self.plans_every_text:
            shape = {"recipe": self.recipe, "policy": self.policy, "documents": self.batch_size}
            if self.policy == "token_budget":
                shape["token_budget"] = self.token_budget
            return {**shape, "document_order": DOCUMENT_ORDER, "queries": "planned", "texts": "planned"}
        if self.policy == "fixed":
            return {"documents": self.batch_size, "document_order": DOCUMENT_ORDER, "queries": 1}
        return {"policy": self.policy, "documents": self.batch_size, "token_budget": self.token_budget,
                "document_order": DOCUMENT_ORDER, "queries": 1}

    def plan_of(self, kind: str, lengths: list[int]) -> list[list[int]]:
        """The batches of one kind of text ("documents", "queries" or "texts": a section's) under
        this recipe: recipe 2 plans every kind; recipe 1 plans documents only, encodes a query
        alone and a section's texts in fixed batches of SECTION_BATCH in their order."""
        if kind == "documents" or self.plans_every_text:
            return self.plan(lengths)
        size = 1 if kind == "queries" else SECTION_BATCH
        return [list(range(start, min(start + size, len(lengths)))) for start in range(0, len(lengths), size)]

    @classmethod
    def of_provenance(cls, shape: dict) -> "Batching":
        """The batching a fixture's provenance records (recipe 1 where it names none)."""
        return cls(shape.get("policy", "fixed"), shape["documents"], shape.get("token_budget"),
                   shape.get("recipe", 1)).check()

    def plan(self, lengths: list[int]) -> list[list[int]]:
        """Indices of each batch; `lengths` are the padded lengths (tokens the encoder really sees)."""
        order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
        if self.policy == "fixed" or self.token_budget is None:  # check(): a budget unless fixed
            return [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:
            longest = lengths[current[0]] if current else lengths[i]
            if current and (len(current) >= self.batch_size or (len(current) + 1) * longest > self.token_budget):
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches


def _positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RefusedInput(f"{name} must be a positive integer, got {value!r}")
