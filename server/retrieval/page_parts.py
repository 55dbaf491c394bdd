"""The parts every search page is built from (the page layout of docs/contracts.md).

Every family's page is `page(...)`: the envelope (method, profile and its digest, parameters, the
query vector's receipt, hits, coverage, stop reasons, work) around the hits the family ranked, and
the family's own top-level fields (anchors and relations of a graph method, a walk's or a
PageRank's section) passed by name. Hits and their channels come from the builders below.
"""

from __future__ import annotations

from server.retrieval import exact
from server.retrieval.fusion import Fused
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search, VectorQuery


def coverage(graph: bool = True, embeddings: bool = True) -> dict:
    return {"source": True, "candidates": True, "graph": graph, "embeddings": embeddings,
            "complete": graph and embeddings}


def work(**counts: int) -> dict:
    """The page's work counters: every one present, zero unless counted."""
    counters = {"records_examined": 0, "adjacency_examined": 0, "relations_examined": 0, "nodes_admitted": 0,
                "affinity_lookups": 0, "affinity_reuses": 0, "candidates_ranked": 0,
                "stale_relations_skipped": 0, "embeddings_missing": 0, "affinity_missing": 0}
    counters.update(counts)
    return counters


def receipt(index: ScopeIndex, vq: VectorQuery | None, record_id: str) -> dict | None:
    """The receipt of the record's live binding in the query's space (None without a vector)."""
    if vq is None:
        return None
    binding = index.live_binding(vq.query.space.space_id, record_id)
    return None if binding is None else binding.receipt()


def hit(index: ScopeIndex, rank: int, record_id: str, score: float, score_exact: str | None,
        channels: dict, receipt: dict | None, proof: dict | None = None, **own) -> dict:
    """A ranked or fused hit with its record; `own`: the family's own fields of a hit, by name."""
    record = index.records[record_id]
    return {"rank": rank, "id": record_id, "revision": record.revision, "payload": record.payload,
            "score": score, "score_exact": score_exact, "channels": channels,
            "embedding_receipt": receipt, "proof": proof, **own}


def ref(index: ScopeIndex, record_id: str) -> dict:
    return {"id": record_id, "revision": index.records[record_id].revision}


def missing_embeddings(index: ScopeIndex, vq: VectorQuery) -> int:
    """Records without a live binding in the query's space."""
    return len(index.records) - vq.query.space.live_count()


def page(search: Search, parameters: dict, receipt: dict | None, hits: list[dict], coverage: dict, work: dict,
         stop_reasons: list | tuple = (), **sections) -> dict:
    """The page (without `fence`, which the app adds under the same lock); `sections`: the family's
    own top-level fields, by name."""
    return {"method": search.route, "profile": search.profile_name, "profile_digest": search.profile_digest,
            "parameters": parameters, "query_receipt": receipt, "hits": hits, **sections, "coverage": coverage,
            "stop_reasons": list(stop_reasons), "work": work}


def rational_channel(rank: int | None, raw: float | None, part: tuple[int, int]) -> dict:
    """A channel whose contribution is an exact rational (rank-derived scores)."""
    return {"rank": rank, "raw_score": raw, "contribution": exact.to_float(part),
            "contribution_exact": exact.to_text(part)}


def fused_channels(entry: Fused | None, names: tuple[str, ...] = ("lexical", "semantic")) -> dict:
    """A fused hit's channels: each one's rank, raw score and exact contribution (zero where the
    channel did not rank it, or the hit is not in the fused list at all)."""
    channels = {}
    for name in names:
        part = None if entry is None else entry.channels.get(name)
        channels[name] = (rational_channel(part.rank, part.raw_score, part.contribution) if part
                          else rational_channel(None, None, (0, 1)))
    return channels
