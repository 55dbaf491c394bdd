"""Independent check of a `lexical` page (`bm25_v1`, docs/retrieval.md): BM25 recomputed over the frozen
corpus by the evaluator's own tokenizer and index, compared hit by hit within BM25's tolerance."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.verification import recompute as rc
from evaluator.verification.failure import Findings
from evaluator.verification.page_checker import PageChecker
from evaluator.verification.single_channel import check_single


def check_lexical(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    yield from check_single(page.get("hits") or [], "lexical", checker.bm25_scores(query), rc.BM25_TOLERANCE, spec)
