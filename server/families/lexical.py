"""The lexical family (route `lexical`, profile `bm25_v1`): admitted search -> BM25 ranking over the
scope's inverted index -> page (docs/retrieval.md)."""

from __future__ import annotations

from server.retrieval import page_parts as parts
from server.retrieval.bm25 import bm25
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search


def search_lexical(index: ScopeIndex, search: Search) -> dict:
    ranking = bm25(index, search.text(), search.limit)
    hits = [parts.hit(index, rank, rid, score, None,
                      {"lexical": {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                      None)
            for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
    work = parts.work(records_examined=ranking.matched, candidates_ranked=ranking.matched)
    return parts.page(search, {"limit": search.limit}, None, hits, parts.coverage(), work, anchors=[], relations=[])
