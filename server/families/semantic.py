"""The semantic family (route `semantic`, profile `cosine_exact_v1`): admitted search -> exact cosine
over every live binding of one space -> page (docs/retrieval.md)."""

from __future__ import annotations

from server.retrieval import page_parts as parts
from server.retrieval.cosine import cosine
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search


def search_semantic(index: ScopeIndex, search: Search) -> dict:
    min_score = search.number("min_score", -1.0, 1.0, default=-1.0)
    vq = search.vector(index)
    ranking = cosine(index, vq.query, search.limit, min_score)
    hits = [parts.hit(index, rank, rid, score, None,
                      {"semantic": {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                      parts.receipt(index, vq, rid))
            for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=ranking.scored, candidates_ranked=ranking.scored, embeddings_missing=missing)
    parameters = {"limit": search.limit, "min_score": min_score, "space_id": vq.receipt["space_id"]}
    return parts.page(search, parameters, vq.receipt, hits, parts.coverage(embeddings=missing == 0), work,
                      anchors=[], relations=[])
