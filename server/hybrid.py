"""The hybrid family (route `hybrid`): `POST .../search/hybrid` body -> validated request -> the BM25 and
cosine lists fused by the profile's rule -> page (docs/retrieval.md)."""

from __future__ import annotations

from server import validation
from server.retrieval import exact
from server.retrieval import page_parts as parts
from server.retrieval.fusion import Fused
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import SEARCH_LIMIT, vector_query
from server.retrieval.v1_routes_shared import fused_list, v1_page, v1_profile


def _fused_channels(entry: Fused) -> dict:
    channels = {}
    for channel in ("lexical", "semantic"):
        part = entry.channels.get(channel)
        channels[channel] = (parts.rational_channel(part.rank, part.raw_score, part.contribution) if part
                             else parts.rational_channel(None, None, (0, 1)))
    return channels


def search_hybrid(index: ScopeIndex, body: dict) -> dict:
    profile = v1_profile(body, "hybrid")
    query = validation.query_text(body["query"])
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    vq = vector_query(index, body)
    fused, examined = fused_list(index, profile, query, vq)
    hits = [parts.hit(index, rank, entry.id, exact.to_float(entry.score), exact.to_text(entry.score),
                      _fused_channels(entry), parts.receipt(index, vq, entry.id))
            for rank, entry in enumerate(fused[:limit], start=1)]
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=examined, candidates_ranked=len(fused), embeddings_missing=missing)
    parameters = {"limit": limit, "space_id": vq.receipt["space_id"]}
    return v1_page("hybrid", profile, parameters, vq, hits, parts.coverage(embeddings=missing == 0), work)
