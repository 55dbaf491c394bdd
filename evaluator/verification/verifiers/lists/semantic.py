"""Independent check of a `semantic` page (`cosine_exact_v1`, docs/retrieval.md): every cosine recomputed
from the fixture's vectors, compared hit by hit within the cosine tolerance."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.verification import recompute as rc
from evaluator.verification.failure import Findings
from evaluator.verification.page_checker import PageChecker
from evaluator.verification.single_channel import check_single


def check_semantic(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    yield from check_single(page.get("hits") or [], "semantic", checker.cosines(query), rc.COSINE_TOLERANCE, spec)
