"""The prf route: admitted search -> the two PRF channels -> page.

Every request carries the query text and vector (one request layout for the three profiles). The
page is the v1 layout (server/retrieval/page_parts.py) plus `feedback`: per channel used, the feedback
documents (id, revision, first-pass rank and score) and, for RM3, every term of the expanded query
with its weight; for Rocchio, beta. The evaluator recomputes all of it (evaluator/verification/verifiers/lists/prf.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np

from protocols.families.lists.prf import PRF_PROFILES
from server.families.prf.feedback import rm3, rocchio
from server.retrieval import exact
from server.retrieval import page_parts as parts
from server.retrieval.bm25 import LexicalRanking, bm25, ranked, term_scores
from server.retrieval.cosine import Query, SemanticRanking, cosine
from server.retrieval.fusion import fuse_lists
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search, VectorQuery
from server.retrieval.tokenize import bm25_tokens


def rm3_ranking(index: ScopeIndex, query: str, profile: Mapping, depth: int) -> tuple[LexicalRanking, dict]:
    """bm25_rm3_v1's second pass and its feedback block: the expanded query's weighted BM25."""
    first = bm25(index, query, profile["fb_docs"])
    inverted = index.lexical
    feedback = [(Counter(bm25_tokens(index.records[rid].content)), score) for rid, score in zip(first.ids, first.scores)]

    def document_frequency(term: str) -> int:
        postings = inverted.postings(term)
        return 0 if postings is None else len(postings[0])

    terms = rm3(first.terms, feedback, profile, document_frequency, inverted.documents)
    ranking = ranked(index, term_scores(index, terms), depth, [term for term, _ in terms])
    block = {"documents": [{**parts.ref(index, rid), "rank": rank, "score": score}
                           for rank, (rid, score) in enumerate(zip(first.ids, first.scores), start=1)],
             "expansion": [{"term": term, "weight": weight} for term, weight in terms]}
    return ranking, block


def rocchio_ranking(index: ScopeIndex, vq: VectorQuery, profile: Mapping, depth: int) -> tuple[SemanticRanking, dict]:
    """cosine_rocchio_v1's second pass and its feedback block."""
    first = cosine(index, vq.query, profile["fb_docs"], -1.0)
    space = vq.query.space
    rows = [space.rows[space.bindings[rid].row] for rid in first.ids]
    moved = rocchio(vq.query.unit64, rows, profile["beta"])
    ranking = cosine(index, Query(space, moved, moved.astype(np.float32)), depth, profile["min_score"])
    block = {"documents": [{**parts.ref(index, rid), "rank": rank, "cosine": score}
                           for rank, (rid, score) in enumerate(zip(first.ids, first.scores), start=1)],
             "beta": profile["beta"]}
    return ranking, block


def _single_channel_hits(index: ScopeIndex, vq: VectorQuery, channel: str, ids: list[str], scores: list[float]
                         ) -> list[dict]:
    return [parts.hit(index, rank, rid, score, None,
                      {channel: {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                      parts.receipt(index, vq, rid))
            for rank, (rid, score) in enumerate(zip(ids, scores), start=1)]


def search_prf(index: ScopeIndex, search: Search) -> dict:
    """POST .../search/prf: rank on the live index and build the page (no fence)."""
    profile, limit = search.profile, search.limit
    query = search.text()
    vq = search.vector(index)
    missing = parts.missing_embeddings(index, vq)
    if profile["channel"] == "lexical":
        lexical, block = rm3_ranking(index, query, profile, limit)
        hits = _single_channel_hits(index, vq, "lexical", lexical.ids, lexical.scores)
        feedback, examined = {"lexical": block}, lexical.matched
    elif profile["channel"] == "semantic":
        semantic, block = rocchio_ranking(index, vq, profile, limit)
        hits = _single_channel_hits(index, vq, "semantic", semantic.ids, semantic.scores)
        feedback, examined = {"semantic": block}, semantic.scored
    else:
        channels = profile["channels"]
        lex, lex_block = rm3_ranking(index, query, PRF_PROFILES[channels["lexical"]["profile"]],
                                     channels["lexical"]["depth"])
        sem, sem_block = rocchio_ranking(index, vq, PRF_PROFILES[channels["semantic"]["profile"]],
                                         channels["semantic"]["depth"])
        fused = fuse_lists(profile, (lex.ids, lex.scores), (sem.ids, sem.scores))
        hits = [parts.hit(index, rank, entry.id, exact.to_float(entry.score), exact.to_text(entry.score),
                          parts.fused_channels(entry), parts.receipt(index, vq, entry.id))
                for rank, entry in enumerate(fused[:limit], start=1)]
        feedback, examined = {"lexical": lex_block, "semantic": sem_block}, lex.matched + sem.scored
    work = parts.work(records_examined=examined, candidates_ranked=examined, embeddings_missing=missing)
    return parts.page(search, {"limit": limit, "space_id": vq.receipt["space_id"]}, vq.receipt, hits,
                      parts.coverage(embeddings=missing == 0), work, anchors=[], relations=[], feedback=feedback)
