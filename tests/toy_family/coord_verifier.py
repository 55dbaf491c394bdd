"""The independent check of a `coord` page (docs/extend-a-method.md, step 5).

tests/lab/test_extend_a_method.py writes this file as evaluator/verification/verifiers/lists/<family>.py (`coord`) in a
copy of the repository. The counts are recomputed from the fixture's texts with the evaluator's own tokenizer;
the ranking, every score, the channel and the parameters must be exactly those.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.verification import recompute as rc
from evaluator.verification.failure import Findings
from evaluator.verification.page_checker import PageChecker


def check_coord(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    terms = set(rc.bm25_tokens(query["question"]))
    held = {rid: len(terms & set(rc.bm25_tokens(text))) for rid, text in checker.texts.items()}
    want = sorted((rid for rid, n in held.items() if n >= spec["min_terms"]), key=lambda rid: (-held[rid], rid))
    want = want[: spec["limit"]]
    hits = page.get("hits") or []
    have = [hit.get("id") for hit in hits]
    if have != want:
        first = rc.first_difference(have, want)
        yield (first + 1, "id", f"{have[first] if first < len(have) else None}, recomputed "
                                f"{want[first] if first < len(want) else None}")
    for i, hit in enumerate(hits, start=1):
        count = held.get(hit.get("id"))
        if count is None or hit.get("score") != float(count):
            yield i, "score", f"{hit.get('score')}, recomputed {count}"
        channel = (hit.get("channels") or {}).get("coord") or {}
        if channel.get("rank") != i or channel.get("raw_score") != hit.get("score"):
            yield i, "channels.coord", f"rank {channel.get('rank')} raw {channel.get('raw_score')}"
    if page.get("parameters") != {"limit": spec["limit"], "min_terms": spec["min_terms"]}:
        yield None, "parameters", f"{page.get('parameters')} are not the method's"
