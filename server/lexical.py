"""The lexical family (route `lexical`, profile `bm25_v1`): `POST .../search/lexical` body -> validated
request -> BM25 ranking over the scope's inverted index -> page (docs/retrieval.md)."""

from __future__ import annotations

from server import validation
from server.retrieval import page_parts as parts
from server.retrieval.bm25 import bm25
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import SEARCH_LIMIT
from server.retrieval.v1_routes_shared import v1_page, v1_profile


def search_lexical(index: ScopeIndex, body: dict) -> dict:
    profile = v1_profile(body, "lexical")
    query = validation.query_text(body["query"])
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    ranking = bm25(index, query, limit)
    hits = [parts.hit(index, rank, rid, score, None,
                      {"lexical": {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                      None)
            for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
    work = parts.work(records_examined=ranking.matched, candidates_ranked=ranking.matched)
    return v1_page("lexical", profile, {"limit": limit}, None, hits, parts.coverage(), work)
