"""hipporag_ner's recomputation for the verifier (docs/hipporag2.md): the entity links, the phrase
seeds they give, then the same dense seeds, walk and hits as hipporag2's (verifiers/hipporag2.py).

A link holds when the page names the query's phrase and vector, its phrase is a phrase of the
graph, its cosine is the recomputed one within the channel tolerance, and no phrase beats it by
more than twice that (a near tie may go either way, as cosine ties do elsewhere). The seeds are
then exact rationals of the linked phrases' passage counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

from evaluator.verification import recompute as rc
from evaluator.verification.entity_links import link_failures
from evaluator.verification.failure import Findings
from evaluator.verification.page_checker import PageChecker
from evaluator.verification.verifiers.graphs.hipporag2.hipporag2_verifier import (
    Table,
    exact_cosines,
    graph_failures,
    query_unit,
    ranking_failures,
    table,
)
from protocols.routes import route_of


def check_hipporag_ner(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    """The route's verifier (evaluator/verification/routes.py)."""
    profile = checker.profiles[spec["profile"]]
    mine = table(checker, profile["pagerank"]["transition_bits"])
    route = route_of(spec)
    entities = checker.frozen.entity_phrases(route.data.section, query["id"], route.entity_limit(profile))
    dense = exact_cosines(mine.passage_units, query_unit(checker.frozen.query_vectors[query["id"]]))
    for rank, field, message in page_failures(page.get("hipporag_ner") or {}, page.get("hits") or [], mine, entities,
                                              dense, profile, spec["limit"], rc.COSINE_TOLERANCE):
        yield rank, field if rank else f"hipporag_ner.{field}", message


def page_failures(section: Mapping, hits: Sequence[Mapping], mine: Table, entities: Sequence[tuple[str, np.ndarray]],
                  dense: np.ndarray, profile: Mapping, limit: int, tolerance: float) -> Findings:
    """The first differences between a page and the recomputation (none: the page holds)."""
    faults = [*graph_failures(section, mine)] or [*link_failures(
        section.get("entities"), "entities", "phrase", mine.phrases,
        lambda vector: np.clip(mine.phrase_units @ query_unit(vector), -1.0, 1.0), entities, tolerance, len(entities))]
    if faults:
        yield from faults
        return
    phrases = phrase_seeds([entry["phrase"] for entry in section["entities"]], mine, profile["passages"])
    if section.get("phrases") != phrases:
        yield None, "phrases", f"{section.get('phrases')}, recomputed {phrases}"
        return
    yield from ranking_failures(section, hits, mine, dense, phrases, profile, limit, tolerance)


def phrase_seeds(linked: Sequence[str], mine: Table, passages: Mapping) -> list[dict]:
    """Each linked phrase once, 1 / its passage count in the passage seeds' unit; weight desc, phrase asc."""
    unit = Fraction(passages["node_weight"]) / (1 << passages["dense_bits"])
    weights = sorted((-Fraction(1, mine.holders[one]), one) for one in set(linked))
    return [{"phrase": one, "units": int(-weight / unit)} for weight, one in weights]
