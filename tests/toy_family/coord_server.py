"""A toy method family, `coord`: coordination-level matching (docs/extend-a-method.md, step 3).

tests/lab/test_extend_a_method.py writes this file as server/families/<family>.py (`coord`) in a copy of the
repository. A record's score is the number of distinct query terms its text holds (the BM25
tokenizer's terms); the records holding at least the method's `min_terms` of them are ranked by that
count, then by record id. The route table has admitted the profile and the limit.
"""

from __future__ import annotations

from collections.abc import Iterable

from server.retrieval import page_parts as parts
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search
from server.retrieval.tokenize import bm25_tokens

MAX_TERMS = 64


def rank_coord(terms: set[str], texts: Iterable[tuple[str, str]], min_terms: int) -> list[tuple[str, int]]:
    """The pure core: (record id, distinct query terms held), at least `min_terms`, best first."""
    held = [(record_id, len(terms & set(bm25_tokens(text)))) for record_id, text in texts]
    return sorted(((rid, n) for rid, n in held if n >= min_terms), key=lambda entry: (-entry[1], entry[0]))


def search_coord(index: ScopeIndex, search: Search) -> dict:
    min_terms = search.integer("min_terms", 1, MAX_TERMS)
    ranked = rank_coord(set(bm25_tokens(search.text())),
                        ((rid, record.content) for rid, record in index.records.items()), min_terms)
    hits = [parts.hit(index, rank, rid, float(n), None,
                      {"coord": {"rank": rank, "raw_score": float(n), "contribution": float(n), "contribution_exact": None}},
                      None)
            for rank, (rid, n) in enumerate(ranked[: search.limit], start=1)]
    work = parts.work(records_examined=len(index.records), candidates_ranked=len(ranked))
    return parts.page(search, {"limit": search.limit, "min_terms": min_terms}, None, hits, parts.coverage(), work)
