"""The lexical family (route `lexical`): BM25 over the words a passage shares with the question
(docs/retrieval.md). Its one profile, `bm25_v1`, is the first channel of every fused method.

Written out here, not loaded from a protocol file: the evaluator compares the lab's live catalog
with the protocol's frozen `ranking_profiles` copy by digest, and a catalog read from that same
file would prove nothing. Floats stay floats and integers integers exactly as the protocols write
them, because `digest` distinguishes `1` from `1.0`.
"""

from __future__ import annotations

from typing import Any

from protocols.route import TEXT, Route, fixed_limit

BM25_V1: dict[str, Any] = {
    "family": "lexical",
    "tokenizer": "maximal_unicode_letter_digit_runs_lowercased",
    "stemming": None,
    "stopwords": None,
    "query_terms": "deduplicated",
    "k1": 1.2,
    "b": 0.75,
    "idf": "ln(1+(N-df+0.5)/(df+0.5))",
    "returns": "documents_matching_at_least_one_query_term",
    "tie_break": "record_id_asc",
}

ROUTES = (
    Route("lexical", ("profile", TEXT, "limit"), {"bm25_v1": BM25_V1},
          does="ranks passages by BM25 over the words they share with the question", page="docs/retrieval.md",
          optional=("profile",), limit=fixed_limit),
)
