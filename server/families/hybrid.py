"""The hybrid family (route `hybrid`): admitted search -> the BM25 and cosine lists fused by the
profile's rule (server/retrieval/fusion.py) -> page (docs/retrieval.md)."""

from __future__ import annotations

from server.retrieval import exact
from server.retrieval import page_parts as parts
from server.retrieval.fusion import fused_base
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search


def search_hybrid(index: ScopeIndex, search: Search) -> dict:
    vq = search.vector(index)
    base = fused_base(index, search.profile, search.text(), vq.query)
    hits = [parts.hit(index, rank, entry.id, exact.to_float(entry.score), exact.to_text(entry.score),
                      parts.fused_channels(entry), parts.receipt(index, vq, entry.id))
            for rank, entry in enumerate(base.fused[: search.limit], start=1)]
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=base.examined, candidates_ranked=len(base.fused), embeddings_missing=missing)
    parameters = {"limit": search.limit, "space_id": vq.receipt["space_id"]}
    return parts.page(search, parameters, vq.receipt, hits, parts.coverage(embeddings=missing == 0), work,
                      anchors=[], relations=[])
