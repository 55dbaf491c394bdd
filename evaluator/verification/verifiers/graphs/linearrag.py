"""LinearRAG's recomputation for the verifier (docs/linearrag.md), from the frozen inputs alone.

The graph comes from the fixture section's recognizer output and the passages' texts
(builders/embedding/sections/linearrag.py derives it; the vectors are the section's), the cosines
from cosine_exact_v1's rule here, the walk from evaluator/verification/whole_graph_walk.py. Then:

- each link: the question's entity (the section's, lower-cased, ascending), its vector, a graph
  entity whose cosine is ours within the channel tolerance and no entity nearer by more than twice
  that (a near tie may go either way);
- the bridging replayed round by round: each active entity's candidate sentences recomputed, the
  page's taken ones held to be its top ones up to near ties with their cosines ours within the
  tolerance; from the page's cosines every score, tier and weight follows in float64 exactly as the
  server computes them, so the activations and entity seeds must be equal;
- the passage seeds from our dense cosines and bonuses, floored on the 2^-32 grid, a value within a
  hair of a boundary floored either way as the page's digest decides;
- the walk, its iteration count and last change, and every hit's id and mass exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from builders.embedding import vector_sha256
from builders.embedding.sections.linearrag import entity_key, graph_of, sentence_key
from evaluator.verification import recompute as rc
from evaluator.verification.entity_links import link_failures
from evaluator.verification.failure import Finding, Findings
from evaluator.verification.page_checker import PageChecker
from evaluator.verification.whole_graph_walk import (
    dense_order_failures,
    dense_range_failures,
    edge_arrays,
    exact_cosines,
    floors_by_digest,
    query_unit,
    unit_rows,
    walked_failures,
)
from protocols.families.graphs.linearrag import ENTITY, PASSAGE, draw_order
from protocols.routes import route_of

MAX_AMBIGUOUS = 10
AMBIGUOUS_UNITS = 1e-4  # of the 2^-32 grid: a float64 weight's rounding is below 1e-6 of them



@dataclass
class Table:
    """The evaluator's own LinearRAG graph, under the lab's record ids (built once per campaign)."""

    passages: list[str]  # passage record ids, ascending
    passage_units: np.ndarray
    lowered: list[str]
    entities: list[str]  # ascending texts
    entity_units: np.ndarray
    sentences_of: dict[str, list[str]]  # entity -> sentence texts naming it, ascending
    entities_of: dict[str, list[str]]  # sentence text -> entities, ascending
    sentence_row: dict[str, int]  # sentence text -> its row in `sentence_units`
    sentence_id: dict[str, str]  # sentence text -> its lab record id
    sentence_units: np.ndarray
    nodes: list[str]
    edges: tuple[np.ndarray, np.ndarray, np.ndarray]
    edge_count: int
    occurrences: dict[str, dict[int, int]] = field(default_factory=dict)

    def occurrences_of(self, entity: str) -> dict[int, int]:
        """passage position -> non-overlapping matches of the entity's lower-cased text, found left to
        right with str.find (the server counts with str.count)."""
        found = self.occurrences.get(entity)
        if found is None:
            needle, found = entity.lower(), {}
            for i, text in enumerate(self.lowered):
                count, at = 0, text.find(needle)
                while at >= 0:
                    count += 1
                    at = text.find(needle, at + len(needle))
                if count:
                    found[i] = count
            self.occurrences[entity] = found
        return found


def table(checker: PageChecker, transition_bits: int) -> Table:
    return checker.derived_table(("linearrag", transition_bits), lambda: _table(checker, transition_bits))


def _table(checker: PageChecker, transition_bits: int) -> Table:
    frozen, record_of = checker.frozen, checker.record_of
    held = frozen.records
    graph = graph_of(frozen.fixture)
    docs = list(frozen.documents)
    passages = sorted(record_of[d] for d in docs)
    doc_of = {record_of[d]: d for d in docs}
    weights = {(PASSAGE + record_of[pid], ENTITY + entity): share for (pid, entity), share in graph.weights().items()}
    nodes = [PASSAGE + p for p in passages] + [ENTITY + e for e in graph.entities]
    sentences_of: dict[str, list[str]] = {}
    for sentence, named in graph.sentence_entities.items():
        for entity in named:
            sentences_of.setdefault(entity, []).append(sentence)
    return Table(passages, unit_rows([checker.vectors[p] for p in passages]),
                 [frozen.documents[doc_of[p]]["text"].lower() for p in passages], graph.entities,
                 unit_rows([held.vectors[entity_key(e)] for e in graph.entities]),
                 {e: sorted(found) for e, found in sentences_of.items()},
                 {s: sorted(named) for s, named in graph.sentence_entities.items()},
                 {s: i for i, s in enumerate(graph.sentences)},
                 {s: record_of[sentence_key(s)] for s in graph.sentences},
                 unit_rows([held.vectors[sentence_key(s)] for s in graph.sentences]),
                 nodes, edge_arrays(nodes, weights, transition_bits), len(weights))


def check_linearrag(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    """The route's verifier (evaluator/verification/routes.py)."""
    profile = checker.profiles[spec["profile"]]
    mine = table(checker, profile["pagerank"]["transition_bits"])
    route = route_of(spec)
    vector = checker.frozen.query_vectors[query["id"]]
    order = draw_order(profile, vector_sha256(vector))
    entities = sorted(checker.frozen.entity_phrases(route.data.section, query["id"], route.entity_limit(profile)),
                      key=lambda entity: order(entity[0]))
    unit = query_unit(vector)
    for rank, where, message in page_failures(page.get("linearrag") or {}, page.get("hits") or [], mine,
                                              entities, unit, profile, spec["limit"], rc.COSINE_TOLERANCE, order):
        yield rank, where if rank else f"linearrag.{where}", message


def page_failures(section: Mapping, hits: Sequence[Mapping], mine: Table, entities: Sequence[tuple[str, np.ndarray]],
                  unit: np.ndarray, profile: Mapping, limit: int, tolerance: float,
                  order: Callable[[str], Any] = str) -> Findings:
    """The first differences between a page and the recomputation (none: the page holds); `entities`
    in the profile's order."""
    graph = {"passages": len(mine.passages), "entities": len(mine.entities), "sentences": len(mine.sentence_row),
             "edges": mine.edge_count}
    if section.get("graph") != graph:
        yield None, "graph", f"{section.get('graph')}, recomputed {graph}"
        return
    faults = [*link_failures(section.get("links"), "links", "node", mine.entities,
                             lambda vector: exact_cosines(mine.entity_units, query_unit(vector)), entities, tolerance,
                             len(entities) if mine.entities else 0)]
    if faults:
        yield from faults
        return
    links = [(entry["node"], entry["cosine"]) for entry in section["links"]]
    replayed = yield from replay(section.get("rounds"), links, mine, unit, profile["bridging"], tolerance, order)
    if replayed is None:
        return
    activated, weights = replayed
    want = [{"entity": e, "score": score, "tier": tier, "weight": weights[e]} for e, (score, tier) in activated.items()]
    if section.get("activated") != want:
        yield None, "activated", f"{_first_difference(section.get('activated'), want)}"
        return
    bits = profile["pagerank"]["seed_bits"]
    seeds = [{"entity": e, "units": max(0, math.floor(w * (1 << bits)))} for e, w in sorted(weights.items())]
    if section.get("entity_seeds") != seeds:
        yield None, "entity_seeds", f"{_first_difference(section.get('entity_seeds'), seeds)}"
        return
    dense = exact_cosines(mine.passage_units, unit)
    faults = [*dense_range_failures(section, dense, tolerance)]
    if faults:
        yield from faults
        return
    low, high = section["dense_range"]
    if not links:
        yield from dense_order_failures(section, hits, mine.passages, dense, limit, tolerance, "entity")
        return
    scaled = passage_weights(dense, low, high, activated, mine, profile["passages"]) * float(1 << bits)
    passage_units = floors_by_digest(scaled, AMBIGUOUS_UNITS, section.get("passage_digest"), MAX_AMBIGUOUS)
    if passage_units is None:
        yield (None, "passage_digest", f"{section.get('passage_digest')} is no flooring of the recomputed passage "
                                       f"weights")
        return
    yield from walk_failures(section, hits, mine, passage_units, seeds, profile["pagerank"], limit)


def replay(rounds, links: Sequence[tuple[str, float]], mine: Table, unit: np.ndarray, rules: Mapping,
           tolerance: float, order: Callable[[str], Any] = str
           ) -> Generator[Finding, None, tuple[dict[str, tuple[float, int]], dict[str, float]] | None]:
    """LinearRAG's bridging replayed against the page's rounds: returns (activations, weights), or
    yields the first difference and returns None."""
    threshold, top_k = rules["iteration_threshold"], rules["top_k_sentence"]
    if not isinstance(rounds, list):
        yield None, "rounds", f"{rounds!r} is not a list of rounds"
        return None
    activated: dict[str, tuple[float, int]] = {}
    weights: dict[str, float] = {}
    for entity, score in links:
        activated[entity] = (score, 1)
        weights[entity] = score
    used: set[str] = set()
    current = dict(activated)
    iteration = 1
    while current and iteration < rules["max_iterations"]:
        listed = rounds[iteration - 1] if iteration - 1 < len(rounds) else None
        where = f"rounds[{iteration - 1}]"
        if not isinstance(listed, list):
            yield None, where, f"{listed!r}: a round is recomputed here"
            return None
        new: dict[str, tuple[float, int]] = {}
        k = 0
        for entity, (score, _tier) in current.items():
            candidates = [s for s in mine.sentences_of.get(entity, ()) if s not in used]
            if score < threshold or not candidates:
                continue
            entry = listed[k] if k < len(listed) else None
            if not isinstance(entry, dict) or (entry.get("entity"), entry.get("score")) != (entity, score):
                yield None, f"{where}[{k}]", f"{entry!r}, recomputed {entity!r} spreading {score!r}"
                return None
            taken = chosen(entry.get("sentences"), candidates, mine, unit, top_k, tolerance, order)
            if isinstance(taken, str):
                yield None, f"{where}[{k}].sentences", f"{entity!r}: {taken}"
                return None
            k += 1
            for sentence, cosine in taken:
                used.add(sentence)
                for following in sorted(mine.entities_of.get(sentence, ()), key=order):
                    next_score = score * cosine
                    if next_score < threshold:
                        continue
                    weights[following] = weights.get(following, 0.0) + next_score
                    new[following] = (next_score, iteration + 1)
        if k != len(listed):
            yield None, where, f"{len(listed)} entities spread, recomputed {k}"
            return None
        activated.update(new)
        current = dict(new)
        iteration += 1
    if len(rounds) != iteration - 1:
        yield None, "rounds", f"{len(rounds)} rounds, recomputed {iteration - 1}"
        return None
    return activated, weights


def chosen(listed, candidates: Sequence[str], mine: Table, unit: np.ndarray, top_k: int,
           tolerance: float, order: Callable[[str], Any] = str) -> list[tuple[str, float]] | str:
    """The page's taken sentences [(text, the page's cosine)] when they are the candidates' top
    `top_k` by cosine up to near ties, each cosine ours within the tolerance; else why not."""
    rows = np.array([mine.sentence_row[s] for s in candidates], dtype=np.int64)
    ours = exact_cosines(mine.sentence_units[rows], unit)
    text_of: dict[Any, str] = {mine.sentence_id[s]: s for s in candidates}
    if not isinstance(listed, list) or len(listed) != min(top_k, len(candidates)):
        return f"{listed!r} are not the top {min(top_k, len(candidates))} of {len(candidates)} candidate sentences"
    taken: list[tuple[str, Any]] = []
    positions: list[int] = []
    for entry in listed:
        text = text_of.get(entry.get("id")) if isinstance(entry, dict) else None
        cosine = entry.get("cosine") if isinstance(entry, dict) else None
        if text is None or text in dict(taken):
            return f"sentence {entry!r} is no untaken sentence of the entity"
        i = candidates.index(text)
        if not isinstance(cosine, float) or abs(cosine - ours[i]) > tolerance:
            return f"sentence {entry.get('id')}: cosine {cosine!r}, recomputed {ours[i]!r}"
        taken.append((text, cosine))
        positions.append(i)
    keys = [(-cosine, order(text)) for text, cosine in taken]
    if keys != sorted(keys):
        return "taken sentences are not in cosine-descending order, ties in the profile's order"
    weakest = min(ours[i] for i in positions)
    others = np.delete(ours, positions)
    if len(others) and others.max() > weakest + 2 * tolerance:
        return f"a sentence of cosine {others.max()!r} is left for one of {weakest!r}"
    return taken


def passage_weights(dense: np.ndarray, low: float, high: float, activated: Mapping[str, tuple[float, int]],
                    mine: Table, passages: Mapping) -> np.ndarray:
    """Each passage's reset weight in float64, every operation in the declared order: ratio x the
    dense cosine normalized over the page's range, plus ln(1 + bonus), times the node weight."""
    norm = np.ones_like(dense) if high == low else (dense - low) / (high - low)
    bonus = np.zeros(len(dense), dtype=np.float64)
    for entity, (score, tier) in activated.items():
        for i, count in sorted(mine.occurrences_of(entity).items()):
            bonus[i] += score * math.log(1 + count) / tier
    scores = passages["passage_ratio"] * norm
    for i in np.flatnonzero(bonus).tolist():
        scores[i] += math.log(1 + float(bonus[i]))
    return scores * passages["passage_node_weight"]


def walk_failures(section: Mapping, hits: Sequence[Mapping], mine: Table, passage_units: np.ndarray,
                  seeds: Sequence[Mapping], rules: Mapping, limit: int) -> Findings:
    units = [int(u) for u in passage_units] + [0] * len(mine.entities)
    position = {node: i for i, node in enumerate(mine.nodes)}
    for seed in seeds:
        units[position[ENTITY + seed["entity"]]] += seed["units"]
    yield from walked_failures(section, hits, mine.passages, mine.edges, units, rules, limit)


def _first_difference(have, want) -> str:
    if not isinstance(have, list):
        return f"{have!r}, recomputed {len(want)} entries"
    for i, (a, b) in enumerate(zip(have, want)):
        if a != b:
            return f"entry {i}: {a!r}, recomputed {b!r}"
    return f"{len(have)} entries, recomputed {len(want)}"

