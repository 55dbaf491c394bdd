"""Independent check of a `hybrid` page (`weighted_rrf_v1`, `weighted_rrf_v2`, docs/retrieval.md): the BM25
and cosine lists recomputed here, fused by the profile's rule in exact rationals, and compared with
the page's hits (channels, exact scores, order; near-tie swaps of a channel allowed: fused_lists.py)."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.verification.failure import Findings
from evaluator.verification.fused_lists import check_fused
from evaluator.verification.page_checker import PageChecker


def check_hybrid(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    fused, order, lists = checker.fused(query, spec["profile"])
    yield from check_fused(page.get("hits") or [], spec["limit"], checker.profiles[spec["profile"]], fused, order,
                           lists)
