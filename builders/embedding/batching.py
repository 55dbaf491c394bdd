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

Queries are always encoded one per call, as a user's query arrives.
"""

from __future__ import annotations

from dataclasses import dataclass

from ground.errors import RefusedInput

DOCUMENT_ORDER = "tokens_desc_then_source_order"
POLICIES = ("fixed", "token_budget")


@dataclass(frozen=True)
class Batching:
    policy: str = "fixed"
    batch_size: int = 32
    token_budget: int | None = None

    def check(self) -> "Batching":
        if self.policy not in POLICIES:
            raise RefusedInput(f"--batching must be one of {', '.join(POLICIES)}, got {self.policy!r}")
        _positive("--batch-size", self.batch_size)
        if self.policy == "token_budget":
            _positive("--token-budget", self.token_budget)
        elif self.token_budget is not None:
            raise RefusedInput("--token-budget applies to --batching token_budget only")
        return self

    def provenance(self) -> dict:
        if self.policy == "fixed":
            return {"documents": self.batch_size, "document_order": DOCUMENT_ORDER, "queries": 1}
        return {"policy": self.policy, "documents": self.batch_size, "token_budget": self.token_budget,
                "document_order": DOCUMENT_ORDER, "queries": 1}

    def plan(self, lengths: list[int]) -> list[list[int]]:
        """Indices of each batch; `lengths` are the padded lengths (tokens the encoder really sees)."""
        order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
        if self.policy == "fixed":
            return [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        batches, current = [], []
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
