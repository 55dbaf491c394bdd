"""HippoRAG 2's graph from a passage's triples, as its code builds it (docs/hipporag2.md lists each rule's source),
or from a passage's NER entities (`build_ner`, hipporag_ner_v1's graph: context and synonym edges only).

Pure: the triples come from an imported graph's section (importer/graph_import.py, triples already
kept as HippoRAG's loader keeps them), the entities from the NER graph's pinned NER output
(builders/ner_graph.py), and the phrase vectors from the fixture's encoder.

- A phrase is an argument after HippoRAG's `text_processing`; a fact is a processed triple.
- Edge weights are kept per ordered pair, as HippoRAG's `node_to_node_stats` holds them: a
  relation adds 1 to (subject, object) and to (object, subject) for every triple naming the pair;
  a synonym found from `a` sets (a, b) to the cosine, replacing a relation count there; a context
  pair (passage, phrase) is 1. The undirected graph's weight between two nodes is the sum over
  both orders, since igraph keeps both as parallel edges.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ground.errors import RefusedInput
from protocols.families.graphs.hipporag2 import HIPPORAG2_GRAPH, PASSAGE, PHRASE

_NOT_KEPT = re.compile(r"[^A-Za-z0-9 ]")
_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")
SYNONYM_BLOCK = 1024  # phrase rows per matrix product: 1,024 x 100,000 float64 is 800 MB at most


def phrase(text: str) -> str:
    """HippoRAG's `text_processing` of one argument."""
    return _NOT_KEPT.sub(" ", text.lower()).strip()


def fact_text(fact: Sequence[str]) -> str:
    """The text HippoRAG 2 encodes for a fact: `str()` of the processed triple as a tuple."""
    return str(tuple(fact))


@dataclass
class Hipporag2Graph:
    passages: list[str]  # every corpus passage, ascending id
    phrases: list[str]  # ascending
    facts: list[tuple[str, str, str]]  # distinct processed triples, ascending
    holders: dict[str, list[str]]  # phrase -> the passages whose triples name it, ascending
    stats: dict[tuple[str, str], float] = field(default_factory=dict)  # ordered node pair -> weight
    left_out: dict[str, int] = field(default_factory=dict)

    def undirected(self) -> dict[tuple[str, str], float]:
        """(u, v) with u < v -> the summed weight of both orders (igraph's parallel edges)."""
        out: dict[tuple[str, str], float] = {}
        for (a, b), weight in self.stats.items():
            key = (a, b) if a < b else (b, a)
            out[key] = out.get(key, 0.0) + weight
        return out


Fact = tuple[str, str, str]


def triples_of(relations: Mapping) -> dict[str, list[list[str]]]:
    """passage id -> its kept triples, from relations.json's imported section (docs/graph-import.md)."""
    imported = relations.get("imported")
    if not imported:
        raise RefusedInput(f"relations ({relations.get('method', '?')}) hold no imported graph: "
                           f"HippoRAG 2's graph is built from imported triples (docs/hipporag2.md)")
    return {entry["id"]: entry["triples"] for entry in imported["documents"]}


def stated(passage_ids: Sequence[str], triples: Mapping[str, Sequence[Sequence[str]]]
           ) -> tuple[dict[str, dict[Fact, int]], dict[str, int]]:
    """passage -> {processed triple: how many of its triples process to it}, passages ascending and
    facts in first-seen order; and the triples left out (an empty subject or object)."""
    out: dict[str, dict[Fact, int]] = {}
    left_out = {"empty_subject_or_object": 0}
    for pid in sorted(passage_ids):
        for triple in triples.get(pid, ()):
            subject, predicate, obj = triple
            processed = (phrase(subject), phrase(predicate), phrase(obj))
            if not processed[0] or not processed[2]:
                left_out["empty_subject_or_object"] += 1
                continue
            counts = out.setdefault(pid, {})
            counts[processed] = counts.get(processed, 0) + 1
    return out, left_out


def build(passage_ids: Sequence[str], triples: Mapping[str, Sequence[Sequence[str]]]) -> Hipporag2Graph:
    """The graph without synonym edges: phrases, facts, relation and context edges."""
    stats: dict[tuple[str, str], float] = {}
    holders: dict[str, set[str]] = {}
    facts: set[Fact] = set()
    by_passage, left_out = stated(passage_ids, triples)
    for pid, counts in by_passage.items():
        for (subject, predicate, obj), count in counts.items():
            facts.add((subject, predicate, obj))
            for one in (subject, obj):
                holders.setdefault(one, set()).add(pid)
            if subject != obj:
                for pair in ((PHRASE + subject, PHRASE + obj), (PHRASE + obj, PHRASE + subject)):
                    stats[pair] = stats.get(pair, 0.0) + count
    for one, pids in holders.items():
        for pid in pids:
            stats[(PASSAGE + pid, PHRASE + one)] = 1.0
    return Hipporag2Graph(sorted(passage_ids), sorted(holders), sorted(facts),
                          {one: sorted(pids) for one, pids in holders.items()}, stats, left_out)


def ner_output_of(relations: Mapping) -> dict:
    """The pinned NER output of a document_ner_graph_v1 relations file (builders/ner_graph.py)."""
    ner = relations.get("ner")
    if not isinstance(ner, Mapping) or "documents" not in ner:
        raise RefusedInput(f"relations ({relations.get('method', '?')}) hold no NER output: hipporag_ner's graph is "
                           f"built from document_ner_graph_v1's entities (docs/hipporag2.md)")
    return dict(ner)


def mentioned(passage_ids: Sequence[str], ner_output: Mapping) -> dict[str, dict[str, list[str]]]:
    """passage -> {phrase: the labels of its entities that process to it, ascending}, passages
    ascending, phrases ascending; an entity whose phrase is empty names nothing."""
    wanted = set(passage_ids)
    out: dict[str, dict[str, list[str]]] = {}
    for entry in sorted(ner_output["documents"], key=lambda d: d["id"]):
        if entry["id"] not in wanted:
            continue
        labels: dict[str, set[str]] = {}
        for text, label in entry["entities"]:
            one = phrase(text)
            if one:
                labels.setdefault(one, set()).add(label)
        if labels:
            out[entry["id"]] = {one: sorted(labels[one]) for one in sorted(labels)}
    return out


def build_ner(passage_ids: Sequence[str], ner_output: Mapping) -> Hipporag2Graph:
    """The NER graph without synonym edges: a phrase per entity, a context edge per passage's phrase."""
    holders: dict[str, list[str]] = {}
    stats: dict[tuple[str, str], float] = {}
    for pid, phrases in mentioned(passage_ids, ner_output).items():
        for one in phrases:
            holders.setdefault(one, []).append(pid)
            stats[(PASSAGE + pid, PHRASE + one)] = 1.0
    return Hipporag2Graph(sorted(passage_ids), sorted(holders), [], holders, stats, {})


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    rows = np.asarray(vectors, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def synonyms(phrases: Sequence[str], vectors: np.ndarray, rules: Mapping = HIPPORAG2_GRAPH["synonyms"]
             ) -> dict[str, list[tuple[str, float]]]:
    """phrase -> its synonyms (phrase, cosine), best first: HippoRAG 2's `add_synonymy_edges` over
    the `nearest` phrases (itself among them) by cosine desc, phrase asc."""
    threshold = float(Fraction(rules["threshold"]))
    unit = unit_rows(vectors)
    out: dict[str, list[tuple[str, float]]] = {}
    for start in range(0, len(phrases), SYNONYM_BLOCK):
        block = unit[start:start + SYNONYM_BLOCK] @ unit.T
        for offset, row in enumerate(block):
            i = start + offset
            if len(_ALPHANUMERIC.sub("", phrases[i])) < rules["min_alphanumeric"]:
                continue
            above = np.flatnonzero(row >= threshold)
            ranked = sorted(above.tolist(), key=lambda j: (-row[j], phrases[j]))[: rules["nearest"]]
            kept = [(phrases[j], float(row[j])) for j in ranked if j != i][: rules["max_per_phrase"]]
            if kept:
                out[phrases[i]] = kept
    return out


def add_synonyms(graph: Hipporag2Graph, found: Mapping[str, Sequence[tuple[str, float]]]) -> Hipporag2Graph:
    """Each synonym found from `a` sets the ordered pair (a, b) to its cosine (replacing a relation count)."""
    for a, near in found.items():
        for b, cosine in near:
            graph.stats[(PHRASE + a, PHRASE + b)] = cosine
    return graph
