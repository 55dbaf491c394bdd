"""The semantic family (route `semantic`, profile `cosine_exact_v1`): `POST .../search/semantic` body ->
validated request -> exact cosine over every live binding of one space -> page (docs/retrieval.md)."""

from __future__ import annotations

from server import validation
from server.retrieval import page_parts as parts
from server.retrieval.cosine import cosine
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import SEARCH_LIMIT, number, vector_query
from server.retrieval.v1_routes_shared import v1_page, v1_profile


def search_semantic(index: ScopeIndex, body: dict) -> dict:
    profile = v1_profile(body, "semantic")
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    min_score = number(body.get("min_score", -1.0), "min_score", -1.0, 1.0)
    vq = vector_query(index, body)
    ranking = cosine(index, vq.query, limit, min_score)
    hits = [parts.hit(index, rank, rid, score, None,
                      {"semantic": {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                      parts.receipt(index, vq, rid))
            for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=ranking.scored, candidates_ranked=ranking.scored, embeddings_missing=missing)
    parameters = {"limit": limit, "min_score": min_score, "space_id": vq.receipt["space_id"]}
    return v1_page("semantic", profile, parameters, vq, hits, parts.coverage(embeddings=missing == 0), work)
