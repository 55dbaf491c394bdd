"""HippoRAG 2's recomputation for the verifier (docs/hipporag2.md), by another algorithm than the server's.

The server walks with a sparse matrix product (scipy, one sum per node, then one floor). Here the
transitions are recomputed from the graph's exact weights with Python integers, and each step
gathers m(u) t(u, v) along an edge list and sums per target with `np.add.at`: every product is
below 2^62 and every sum too, so both agree on every bit or one of them is wrong.

Dense seeds are the one input recomputed from floats that may differ by an ulp between two
implementations of cosine: a passage whose normalized score lies within `AMBIGUOUS` of a grid
boundary may be floored either way, and the page's digest of the dense seeds decides (at most
`MAX_AMBIGUOUS` such passages per query; more fails).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from builders.embedding.sections.hipporag2 import fact_key, phrase_key
from builders.hipporag2_graph import add_synonyms, build, build_ner, fact_text, ner_output_of, triples_of
from evaluator.verification import recompute as rc
from evaluator.verification.failure import Findings
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
from protocols.families.graphs.hipporag2 import FIXTURE_SECTION, PASSAGE, PHRASE, SECTION_GRAPHS

AMBIGUOUS = 1e-9  # in normalized-score units: ulp differences are below 1e-15, the grid step is 2^-16
MAX_AMBIGUOUS = 10


def dense_seeds(cosines: np.ndarray, low: float, high: float, bits: int, digest: object) -> np.ndarray | None:
    """The dense seeds whose digest is `digest`: the recomputed floors, or those with some ambiguous
    passages floored the other way; None when no such choice exists."""
    scaled = np.ones_like(cosines) if high == low else (cosines - low) / (high - low)
    return floors_by_digest(scaled * float(1 << bits), AMBIGUOUS * (1 << bits), digest, MAX_AMBIGUOUS)


# ---------------------------------------------------------------- the page


@dataclass(frozen=True)
class Table:
    """The evaluator's own HippoRAG 2 graph, under the lab's record ids (built once per campaign)."""

    passages: list[str]  # passage record ids, ascending
    facts: list[str]  # fact record ids, ascending
    ends: dict[str, tuple[str, str]]  # fact record id -> (subject, object)
    fact_units: np.ndarray  # unit rows (float32) of the facts, in `facts` order
    passage_units: np.ndarray  # unit rows (float32) of the passages, in `passages` order
    holders: dict[str, int]  # phrase -> how many passages hold it
    phrases: list[str]  # the NER graph's phrases, ascending (the link targets; none for an imported graph)
    phrase_units: np.ndarray  # their unit rows, widened to float64 once
    nodes: list[str]
    edges: tuple[np.ndarray, np.ndarray, np.ndarray]
    edge_count: int


def table(checker: PageChecker, transition_bits: int) -> Table:
    # passage vectors from the checker's matrix: a validation worker's inputs hold no document vectors
    return checker.derived_table(("hipporag2", transition_bits), lambda: _table(
        checker.frozen, checker.record_of, checker.vectors.__getitem__, transition_bits))


def _table(frozen, record_of: Mapping[str, str], vector_of, transition_bits: int) -> Table:
    docs = list(frozen.documents)
    ner = frozen.fixture[FIXTURE_SECTION]["graph"] == SECTION_GRAPHS[1]
    graph = build_ner(docs, ner_output_of(frozen.relations)) if ner else build(docs, triples_of(frozen.relations))
    found: dict[str, list[tuple[str, float]]] = {}
    for a, b, cosine in frozen.fixture[FIXTURE_SECTION]["synonyms"]:
        found.setdefault(a, []).append((b, cosine))
    add_synonyms(graph, found)
    renamed = {}
    for (a, b), weight in graph.undirected().items():
        a, b = (PASSAGE + record_of[n[len(PASSAGE):]] if n.startswith(PASSAGE) else n for n in (a, b))
        renamed[(a, b) if a < b else (b, a)] = weight
    passages = sorted(record_of[d] for d in docs)
    phrases = sorted({n for pair in renamed for n in pair if n.startswith(PHRASE)})
    nodes = [PASSAGE + p for p in passages] + phrases
    by_record = {record_of[fact_key(fact_text(f))]: f for f in graph.facts}
    facts = sorted(by_record)
    fact_units = unit_rows([frozen.records.vectors[fact_key(fact_text(by_record[r]))] for r in facts])
    passage_units = unit_rows([vector_of(r) for r in passages])  # float64 of the float32 vectors: exact
    linkable = graph.phrases if ner else []
    phrase_units = unit_rows([frozen.records.vectors[phrase_key(one)] for one in linkable]).astype(np.float64)
    return Table(passages, facts, {r: (by_record[r][0], by_record[r][2]) for r in facts}, fact_units, passage_units,
                 {one: len(ids) for one, ids in graph.holders.items()}, linkable, phrase_units, nodes,
                 edge_arrays(nodes, renamed, transition_bits), len(renamed))


def check_hipporag2(checker: PageChecker, query: Mapping, page: Mapping, spec: Mapping) -> Findings:
    """The route's verifier (evaluator/verification/routes.py): every number of the page from the
    frozen inputs by cosine_exact_v1's rule; a page's cosines within the channel tolerance of ours
    (another build of numpy may sum in another order), every integer exactly."""
    profile = checker.profiles[spec["profile"]]
    rules = profile["pagerank"]
    mine = table(checker, rules["transition_bits"])
    section = page.get("hipporag2") or {}
    hits = page.get("hits") or []
    unit = query_unit(checker.frozen.query_vectors[query["id"]])
    fact_cosines, dense = exact_cosines(mine.fact_units, unit), exact_cosines(mine.passage_units, unit)
    for rank, field, message in page_failures(section, hits, mine, fact_cosines, dense, profile, spec["limit"],
                                              rc.COSINE_TOLERANCE):
        yield rank, field if rank else f"hipporag2.{field}", message


def page_failures(section: Mapping, hits: Sequence[Mapping], mine: Table, fact_cosines: np.ndarray,
                  dense: np.ndarray, profile: Mapping, limit: int, tolerance: float) -> Findings:
    """The first differences between a page and the recomputation (none: the page holds)."""
    linking, passages = profile["linking"], profile["passages"]
    faults = [*graph_failures(section, mine)] or [*_fact_failures(section, mine, fact_cosines, linking, tolerance)]
    if faults:
        yield from faults
        return
    phrases = _phrase_seeds(section["facts"], mine, linking, passages)
    if section.get("phrases") != phrases:
        yield None, "phrases", f"{section.get('phrases')}, recomputed {phrases}"
        return
    yield from ranking_failures(section, hits, mine, dense, phrases, profile, limit, tolerance)


def graph_failures(section: Mapping, mine: Table) -> Findings:
    graph = {"passages": len(mine.passages), "phrases": len(mine.nodes) - len(mine.passages),
             "facts": len(mine.facts), "edges": mine.edge_count}
    if section.get("graph") != graph:
        yield None, "graph", f"{section.get('graph')}, recomputed {graph}"


def ranking_failures(section: Mapping, hits: Sequence[Mapping], mine: Table, dense: np.ndarray,
                     phrases: Sequence[Mapping], profile: Mapping, limit: int, tolerance: float) -> Findings:
    """Given the phrase seeds (already checked): the dense seeds, the walk and the hits."""
    passages, rules = profile["passages"], profile["pagerank"]
    faults = [*dense_range_failures(section, dense, tolerance)]
    if faults:
        yield from faults
        return
    low, high = section["dense_range"]
    if not phrases:
        yield from dense_order_failures(section, hits, mine.passages, dense, limit, tolerance, "phrase")
        return
    seeds = dense_seeds(dense, low, high, passages["dense_bits"], section.get("dense_digest"))
    if seeds is None:
        yield None, "dense_digest", f"{section.get('dense_digest')} is no flooring of the recomputed dense scores"
        return
    vector = np.zeros(len(mine.nodes), dtype=np.int64)
    vector[: len(mine.passages)] = seeds
    position = {node: i for i, node in enumerate(mine.nodes)}
    for entry in phrases:
        vector[position[PHRASE + entry["phrase"]]] += entry["units"]
    yield from walked_failures(section, hits, mine.passages, mine.edges, vector, rules, limit)


def _fact_failures(section: Mapping, mine: Table, cosines: np.ndarray, linking: Mapping, tolerance: float
                   ) -> Findings:
    """The linked facts: the top `facts` by cosine up to near ties, each cosine within the tolerance,
    each score the floor of its cosine normalized over the page's range (float64, as specified)."""
    listed = section.get("facts") or []
    count = min(linking["facts"], len(mine.facts))
    if len(listed) != count:
        yield None, "facts", f"{len(listed)} linked facts, recomputed {count}"
        return
    if not count:
        return
    low, high = section.get("fact_range") or [None, None]
    if not (isinstance(low, float) and isinstance(high, float) and abs(low - cosines.min()) <= tolerance
            and abs(high - cosines.max()) <= tolerance):
        yield None, "fact_range", f"{section.get('fact_range')}, recomputed [{cosines.min()!r}, {cosines.max()!r}]"
        return
    position = {rid: i for i, rid in enumerate(mine.facts)}
    chosen = []
    for j, entry in enumerate(listed):
        i = position.get(entry.get("id"))
        if i is None:
            yield None, f"facts[{j}].id", f"{entry.get('id')!r} is not a fact of the graph"
            return
        cosine = entry.get("cosine")
        if not isinstance(cosine, float) or abs(cosine - cosines[i]) > tolerance:
            yield None, f"facts[{j}].cosine", f"{entry['id']}: {cosine!r}, recomputed {cosines[i]!r}"
            return
        scaled = 1.0 if high == low else (cosine - low) / (high - low)
        score = int(np.floor(scaled * float(1 << linking["fact_score_bits"])))
        if entry.get("score") != score:
            yield None, f"facts[{j}].score", f"{entry['id']}: {entry.get('score')}, recomputed {score}"
            return
        chosen.append(i)
    keys = [(-entry["cosine"], entry["id"]) for entry in listed]
    if keys != sorted(keys):
        yield None, "facts", "linked facts are not in cosine-descending, id-ascending order"
        return
    weakest = min(cosines[i] for i in chosen)
    others = np.delete(cosines, chosen)
    if len(others) and others.max() > weakest + 2 * tolerance:
        yield None, "facts", f"a fact scoring {others.max()!r} is left out for one scoring {weakest!r}"
        return



def _phrase_seeds(listed: Sequence[Mapping], mine: Table, linking: Mapping, passages: Mapping) -> list[dict]:
    """The phrase seeds the linked facts give, in exact rationals: top `phrases` by weight, ties by phrase."""
    bits = linking["fact_score_bits"]
    total: dict[str, Fraction] = {}
    seen: dict[str, int] = {}
    for entry in listed:
        for one in mine.ends[entry["id"]]:
            if one in mine.holders:
                total[one] = total.get(one, Fraction(0)) + Fraction(entry["score"], (1 << bits) * mine.holders[one])
                seen[one] = seen.get(one, 0) + 1
    weights = sorted(((-(value / seen[one]), one) for one, value in total.items()))[: linking["phrases"]]
    unit = Fraction(passages["node_weight"]) / (1 << passages["dense_bits"])
    return [{"phrase": one, "units": int(-weight / unit)} for weight, one in weights]
