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

from builders.embedding import vector_sha256
from evaluator.verification import recompute as rc
from evaluator.verification.verifiers.hipporag2 import (
    Found,
    Table,
    exact_cosines,
    graph_failures,
    query_unit,
    ranking_failures,
    table,
)
from protocols.routes import route_of


def check_hipporag_ner(checker, query: Mapping, page: Mapping, spec: Mapping, fail) -> None:
    """The route's verifier (evaluator/verification/routes.py)."""
    profile = checker.profiles[spec["profile"]]
    mine = table(checker, profile["pagerank"]["transition_bits"])
    route = route_of(spec)
    entities = checker.frozen.entity_phrases(route.data.section, query["id"], route.entity_limit(profile))
    dense = exact_cosines(mine.passage_units, query_unit(checker.frozen.query_vectors[query["id"]]))
    for rank, field, message in page_failures(page.get("hipporag_ner") or {}, page.get("hits") or [], mine, entities,
                                              dense, profile, spec["limit"], rc.COSINE_TOLERANCE):
        fail(rank, field if rank else f"hipporag_ner.{field}", message)


def page_failures(section: Mapping, hits: Sequence[Mapping], mine: Table, entities: Sequence[tuple[str, np.ndarray]],
                  dense: np.ndarray, profile: Mapping, limit: int, tolerance: float) -> Found:
    """The first differences between a page and the recomputation (none: the page holds)."""
    faults = graph_failures(section, mine) or link_failures(section.get("entities"), mine, entities, tolerance)
    if faults:
        return faults
    phrases = phrase_seeds([entry["phrase"] for entry in section["entities"]], mine, profile["passages"])
    if section.get("phrases") != phrases:
        return [(None, "phrases", f"{section.get('phrases')}, recomputed {phrases}")]
    return ranking_failures(section, hits, mine, dense, phrases, profile, limit, tolerance)


def link_failures(listed, mine: Table, entities: Sequence[tuple[str, np.ndarray]], tolerance: float) -> Found:
    if not isinstance(listed, list) or len(listed) != len(entities):
        return [(None, "entities", f"{listed!r}: the query has {len(entities)} entity phrases")]
    position = {one: i for i, one in enumerate(mine.phrases)}
    for j, (entry, (text, vector)) in enumerate(zip(listed, entities)):
        if not isinstance(entry, dict) or entry.get("entity") != text or entry.get("vector_sha256") != vector_sha256(vector):
            return [(None, f"entities[{j}]", f"{entry!r}: the query's phrase is {text!r} with vector "
                                             f"{vector_sha256(vector)}")]
        i = position.get(entry.get("phrase"))
        if i is None:
            return [(None, f"entities[{j}].phrase", f"{text!r}: linked phrase {entry.get('phrase')!r} is not a phrase "
                                                    f"of the graph")]
        cosines = np.clip(mine.phrase_units @ query_unit(vector), -1.0, 1.0)
        cosine = entry.get("cosine")
        if not isinstance(cosine, float) or abs(cosine - cosines[i]) > tolerance:
            return [(None, f"entities[{j}].cosine", f"{text!r}: {cosine!r} to {mine.phrases[i]!r}, recomputed "
                                                    f"{cosines[i]!r}")]
        best = int(np.argmax(cosines))
        if cosines[best] > cosines[i] + 2 * tolerance:
            return [(None, f"entities[{j}].phrase", f"{text!r}: linked to {mine.phrases[i]!r} ({cosines[i]!r}), but "
                                                    f"{mine.phrases[best]!r} is nearer ({cosines[best]!r})")]
    return []


def phrase_seeds(linked: Sequence[str], mine: Table, passages: Mapping) -> list[dict]:
    """Each linked phrase once, 1 / its passage count in the passage seeds' unit; weight desc, phrase asc."""
    unit = Fraction(passages["node_weight"]) / (1 << passages["dense_bits"])
    weights = sorted((-Fraction(1, mine.holders[one]), one) for one in set(linked))
    return [{"phrase": one, "units": int(-weight / unit)} for weight, one in weights]
