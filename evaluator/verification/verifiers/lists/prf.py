"""Independent check of a `prf` page (`bm25_rm3_v1`, `cosine_rocchio_v1`, `prf_hybrid_v1`, docs/prf.md).

Recomputed from the frozen inputs with the evaluator's own BM25, cosine and fusion (never the
server's code): the feedback documents (the first pass's best `fb_docs`), RM3's relevance model
and every term of the expanded query with its weight, Rocchio's moved query vector, the second
pass's scores and, for the hybrid, the exact weighted reciprocal-rank fusion of the two. The float
channels are compared as the lab's BM25 and cosine checks compare them (rc.BM25_TOLERANCE,
rc.COSINE_TOLERANCE: the two sides sum in other orders); the fused scores exactly (rationals).
A feedback id, an expansion term or a weight that is not the recomputation's fails the page.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping

import numpy as np

from evaluator.verification import recompute as rc
from evaluator.verification.failure import Finding, Findings
from evaluator.verification.fused_lists import check_fused
from evaluator.verification.page_checker import PageChecker
from evaluator.verification.single_channel import check_single


def expansion(checker: PageChecker, query: Mapping, profile: Mapping) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """(feedback documents with their BM25 scores, expanded query terms with weights), recomputed.

    Written from the definition (docs/prf.md) term by term: for each candidate term, its weight is
    the sum over feedback documents of (its tf / the document's kept length) * the document's
    score, so the loops run over terms, not documents (the server runs over documents)."""
    bm25 = checker.bm25
    feedback = rc.ordered(checker.bm25_scores(query), profile["fb_docs"])
    documents = len(bm25.lengths)
    rule = profile["term_filter"]

    def kept(term: str) -> bool:
        return (rule["min_length"] <= len(term) <= rule["max_length"]
                and bm25.document_frequency(term) <= rule["max_document_share"] * documents)

    kept_length = {rid: sum(tf for term, tf in bm25.term_frequencies[rid].items() if kept(term))
                   for rid, _ in feedback}
    vocabulary = sorted({term for rid, _ in feedback for term in bm25.term_frequencies[rid] if kept(term)})
    weights = {}
    for term in vocabulary:
        weights[term] = math.fsum(bm25.term_frequencies[rid][term] / kept_length[rid] * score
                                  for rid, score in feedback if bm25.term_frequencies[rid].get(term))
    chosen = sorted(weights, key=lambda term: (-weights[term], term))[: profile["fb_terms"]]
    total = math.fsum(weights[term] for term in chosen)
    relevance = {term: weights[term] / total for term in chosen} if total > 0 else {}
    terms = list(dict.fromkeys(rc.bm25_tokens(query["question"])))
    lam = profile["original_query_weight"]
    final = {}
    for term in set(terms) | set(relevance):
        value = lam * (1.0 / len(terms) if term in terms else 0.0) + (1.0 - lam) * relevance.get(term, 0.0)
        if value > 0:
            final[term] = value
    return feedback, sorted(final.items(), key=lambda item: (-item[1], item[0]))


def expanded_scores(checker: PageChecker, terms: list[tuple[str, float]]) -> rc.Scores:
    """The second pass: per record, sum of weight * bm25_v1 term score over the expanded terms."""
    bm25 = checker.bm25
    arrays = bm25._arrays()
    avgdl = bm25.average_length
    total = np.zeros(len(arrays.ids), dtype=np.float64)
    touched = np.zeros(len(arrays.ids), dtype=bool)
    for term, weight in terms:
        positions, tf = arrays.postings.get(term, (None, None))
        if positions is None:
            continue
        norm = bm25.k1 * (1.0 - bm25.b + bm25.b * arrays.lengths[positions] / avgdl)
        total[positions] += weight * (bm25.idf(term) * tf * (bm25.k1 + 1.0) / (tf + norm))
        touched[positions] = True
    return rc.Scores(arrays.ids, arrays.position, total, touched)


def moved_scores(checker: PageChecker, query: Mapping, profile: Mapping) -> tuple[list[tuple[str, float]], rc.Scores]:
    """(feedback documents with their cosines, every record's cosine to the moved query)."""
    feedback = rc.ordered(checker.cosines(query), profile["fb_docs"])
    q = np.asarray(checker.frozen.query_vectors[query["id"]], dtype=np.float64)
    moved = q / float(np.linalg.norm(q))
    if feedback:
        rows = [checker.vectors[rid] / float(np.linalg.norm(checker.vectors[rid])) for rid, _ in feedback]
        moved = moved + profile["beta"] * (np.sum(rows, axis=0) / len(rows))
    return feedback, checker.cosine_index.scores(moved)


def _lexical(checker: PageChecker, query, name):
    work = checker.work(query).derived  # the query's shared work: one recomputation for every page
    key = ("prf", name)
    if key not in work:
        profile = checker.profiles[name]
        feedback, terms = expansion(checker, query, profile)
        work[key] = (feedback, terms, expanded_scores(checker, terms))
    return work[key]


def _semantic(checker: PageChecker, query, name):
    work = checker.work(query).derived
    key = ("prf", name)
    if key not in work:
        work[key] = moved_scores(checker, query, checker.profiles[name])
    return work[key]


def _check_documents(have, want, score_key, tolerance, where) -> Findings:
    listed = [(d.get("id"), d.get("rank")) for d in have or []]
    if listed != [(rid, r) for r, (rid, _) in enumerate(want, start=1)]:
        yield None, f"{where}.documents", f"{listed}, recomputed {[rid for rid, _ in want]}"
        return
    for d, (rid, score) in zip(have, want):
        if not rc.near_tie(d.get(score_key, float("nan")), score, tolerance):
            yield None, f"{where}.documents", f"{rid} {score_key} {d.get(score_key)}, recomputed {score!r}"


def check_rm3_block(checker: PageChecker, query, block, name) -> Generator[Finding, None, tuple[list, rc.Scores]]:
    feedback, terms, scores = _lexical(checker, query, name)
    yield from _check_documents((block or {}).get("documents"), feedback, "score", rc.BM25_TOLERANCE,
                                "feedback.lexical")
    have = [(e.get("term"), e.get("weight")) for e in (block or {}).get("expansion") or []]
    if [t for t, _ in have] != [t for t, _ in terms]:
        yield None, "feedback.lexical.expansion", f"terms {[t for t, _ in have]}, recomputed {[t for t, _ in terms]}"
    else:
        for (term, weight), (_, want) in zip(have, terms):
            if not isinstance(weight, float) or not rc.near_tie(weight, want, rc.BM25_TOLERANCE):
                yield None, "feedback.lexical.expansion", f"{term} weight {weight}, recomputed {want!r}"
    return feedback, scores


def check_rocchio_block(checker: PageChecker, query, block, name) -> Generator[Finding, None, rc.Scores]:
    feedback, scores = _semantic(checker, query, name)
    yield from _check_documents((block or {}).get("documents"), feedback, "cosine", rc.COSINE_TOLERANCE,
                                "feedback.semantic")
    if (block or {}).get("beta") != checker.profiles[name]["beta"]:
        yield None, "feedback.semantic.beta", f"{(block or {}).get('beta')}, profile {checker.profiles[name]['beta']}"
    return scores


def check_prf(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    name = spec["profile"]
    profile = checker.profiles[name]
    hits = page.get("hits") or []
    feedback = page.get("feedback") or {}
    if profile["channel"] == "lexical":
        _, scores = yield from check_rm3_block(checker, query, feedback.get("lexical"), name)
        yield from check_single(hits, "lexical", scores, rc.BM25_TOLERANCE, {"limit": spec["limit"]})
        return
    if profile["channel"] == "semantic":
        scores = yield from check_rocchio_block(checker, query, feedback.get("semantic"), name)
        yield from check_single(hits, "semantic", scores, rc.COSINE_TOLERANCE,
                                {"limit": spec["limit"], "min_score": profile["min_score"]})
        return
    channels = profile["channels"]
    _, lex = yield from check_rm3_block(checker, query, feedback.get("lexical"), channels["lexical"]["profile"])
    sem = yield from check_rocchio_block(checker, query, feedback.get("semantic"), channels["semantic"]["profile"])
    sem_profile = checker.profiles[channels["semantic"]["profile"]]
    lists = {"lexical": rc.ordered(lex, channels["lexical"]["depth"]),
             "semantic": rc.ordered(sem, channels["semantic"]["depth"], min_score=sem_profile["min_score"])}
    fused = rc.fuse(profile["fusion"], {c: [rid for rid, _ in lst] for c, lst in lists.items()},
                    {c: channels[c]["weight"] for c in channels}, profile["k"])
    yield from check_fused(hits, spec["limit"], profile, fused, rc.fused_order(fused), lists)
