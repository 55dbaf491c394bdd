"""The parts every search page is built from (the page layout of docs/contracts.md).

Public so that every method family lays its page out the same way: the v1 routes
(server/graph/graph_route.py) and the ANN lane (server/ann/ann_route.py) build their pages only from
these; a family with fields of its own (rescue, walk) adds them to the same layout.
"""

from __future__ import annotations

from server.retrieval import exact
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import VectorQuery


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
        channels: dict, receipt: dict | None, proof: dict | None = None) -> dict:
    record = index.records[record_id]
    return {"rank": rank, "id": record_id, "revision": record.revision, "payload": record.payload,
            "score": score, "score_exact": score_exact, "channels": channels,
            "embedding_receipt": receipt, "proof": proof}


def ref(index: ScopeIndex, record_id: str) -> dict:
    return {"id": record_id, "revision": index.records[record_id].revision}


def missing_embeddings(index: ScopeIndex, vq: VectorQuery) -> int:
    """Records without a live binding in the query's space."""
    return len(index.records) - vq.query.space.live_count()


def page(route: str, profile: str, profile_digest: str, parameters: dict, vq: VectorQuery | None,
         hits: list[dict], coverage: dict, work: dict, anchors: list | None = None,
         relations: list | None = None, stop_reasons: list | None = None) -> dict:
    """The page (without `fence`, which the app adds under the same lock)."""
    return {"method": route, "profile": profile, "profile_digest": profile_digest,
            "parameters": parameters, "query_receipt": None if vq is None else vq.receipt, "hits": hits,
            "anchors": anchors or [], "relations": relations or [], "coverage": coverage,
            "stop_reasons": stop_reasons or [], "work": work}


def rational_channel(rank: int | None, raw: float | None, part: tuple[int, int]) -> dict:
    """A channel whose contribution is an exact rational (rank-derived scores)."""
    return {"rank": rank, "raw_score": raw, "contribution": exact.to_float(part),
            "contribution_exact": exact.to_text(part)}
