"""The prf route: `POST .../search/prf` body -> validated request -> the two PRF channels -> page.

Every request carries the query text and vector (one request layout for the three profiles). The
page is the v1 layout (server/retrieval/page_parts.py) plus `feedback`: per channel used, the feedback
documents (id, revision, first-pass rank and score) and, for RM3, every term of the expanded query
with its weight; for Rocchio, beta. The evaluator recomputes all of it (evaluator/verification/verifiers/prf.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np

from ground.canonical import digest
from protocols.profiles.prf import PRF_PROFILES
from server import validation
from server.prf.feedback import rm3, rocchio
from server.retrieval import exact
from server.retrieval import page_parts as parts
from server.retrieval.bm25 import LexicalRanking, _term_weights, bm25, query_terms, top_positive
from server.retrieval.cosine import Query, SemanticRanking, cosine
from server.retrieval.fusion import fuse
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import VectorQuery, profile_name, vector_query
from server.retrieval.tokenize import bm25_tokens

PROFILE_NAMES = tuple(PRF_PROFILES)


def rm3_ranking(index: ScopeIndex, query: str, profile: Mapping, depth: int) -> tuple[LexicalRanking, dict]:
    """bm25_rm3_v1's second pass and its feedback block: the expanded query's weighted BM25."""
    first = bm25(index, query, profile["fb_docs"])
    inverted = index.lexical
    feedback = [(Counter(bm25_tokens(index.records[rid].content)), score) for rid, score in zip(first.ids, first.scores)]

    def document_frequency(term: str) -> int:
        postings = inverted.postings(term)
        return 0 if postings is None else len(postings[0])

    terms = rm3(first.terms, feedback, profile, document_frequency, inverted.documents)
    slots_total = len(index.slot_ids)
    scores = np.zeros(slots_total, dtype=np.float64)
    if inverted.documents and inverted.total_length:
        for term, weight in terms:
            postings = inverted.postings(term)
            if postings is None:
                continue
            slots, tfs = postings
            cached = inverted.term_derived(term, "bm25_v1",
                                           lambda: _term_weights(index, term, slots, tfs, slots_total))
            values = cached.values[slots] if cached.dense else cached.values
            scores[slots] += weight * values
    matched = int(np.count_nonzero(scores))
    chosen = top_positive(scores, index.id_rank(), depth, matched)
    ranking = LexicalRanking([index.slot_ids[s] for s in chosen.tolist()], scores[chosen].tolist(), matched,
                             [term for term, _ in terms])
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


def search_prf(index: ScopeIndex, body: dict) -> dict:
    """POST .../search/prf: validate, rank on the live index, and build the page (no fence)."""
    name = profile_name(body, "prf", PROFILE_NAMES)
    profile = PRF_PROFILES[name]
    query = validation.query_text(body["query"])
    limit = validation.integer(body["limit"], "limit", 1, profile["limit_max"])
    vq = vector_query(index, body)
    missing = parts.missing_embeddings(index, vq)
    if profile["channel"] == "lexical":
        ranking, block = rm3_ranking(index, query, profile, limit)
        hits = [parts.hit(index, rank, rid, score, None,
                          {"lexical": {"rank": rank, "raw_score": score, "contribution": score,
                                       "contribution_exact": None}}, parts.receipt(index, vq, rid))
                for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
        feedback, examined = {"lexical": block}, ranking.matched
    elif profile["channel"] == "semantic":
        ranking, block = rocchio_ranking(index, vq, profile, limit)
        hits = [parts.hit(index, rank, rid, score, None,
                          {"semantic": {"rank": rank, "raw_score": score, "contribution": score,
                                        "contribution_exact": None}}, parts.receipt(index, vq, rid))
                for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
        feedback, examined = {"semantic": block}, ranking.scored
    else:
        channels = profile["channels"]
        lex, lex_block = rm3_ranking(index, query, PRF_PROFILES[channels["lexical"]["profile"]],
                                     channels["lexical"]["depth"])
        sem, sem_block = rocchio_ranking(index, vq, PRF_PROFILES[channels["semantic"]["profile"]],
                                         channels["semantic"]["depth"])
        fused = fuse(profile["fusion"], profile, {"lexical": (lex.ids, lex.scores), "semantic": (sem.ids, sem.scores)})
        hits = []
        for rank, entry in enumerate(fused[:limit], start=1):
            hit_channels = {}
            for channel in ("lexical", "semantic"):
                part = entry.channels.get(channel)
                hit_channels[channel] = (parts.rational_channel(part.rank, part.raw_score, part.contribution)
                                         if part else parts.rational_channel(None, None, (0, 1)))
            hits.append(parts.hit(index, rank, entry.id, exact.to_float(entry.score), exact.to_text(entry.score),
                                  hit_channels, parts.receipt(index, vq, entry.id)))
        feedback, examined = {"lexical": lex_block, "semantic": sem_block}, lex.matched + sem.scored
    work = parts.work(records_examined=examined, candidates_ranked=examined, embeddings_missing=missing)
    page = parts.page("prf", name, digest(profile), {"limit": limit, "space_id": vq.receipt["space_id"]}, vq, hits,
                      parts.coverage(embeddings=missing == 0), work)
    page["feedback"] = feedback
    return page
