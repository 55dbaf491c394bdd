"""The independent check of a `titlesim` page (docs/extend-a-method.md, step 5).

tests/lab/test_extend_a_method.py writes this file as evaluator/verification/verifiers/lists/<family>.py
(`titlesim`) in a copy of the repository. Each passage's title vector comes from the frozen fixture
section through the records the evaluator derived from it (what prepare wrote to the lab); every
cosine is recomputed here in float64 and the page held to that order up to near ties.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.verification import recompute as rc
from evaluator.verification.failure import Findings
from evaluator.verification.page_checker import PageChecker
from evaluator.verification.single_channel import check_single


def check_titlesim(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    held = checker.frozen.records
    titles = {checker.record_of[edge["source"]]: held.vectors[edge["target"]]
              for edge in held.edges if edge["kind"] == "titled"}
    scores = rc.cosines(checker.frozen.query_vectors[query["id"]], titles)
    yield from check_single(page.get("hits") or [], "titlesim", scores, rc.COSINE_TOLERANCE, spec)
