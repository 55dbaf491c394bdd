"""What the lab holds of HippoRAG 2's graph, derived from the frozen inputs (docs/hipporag2.md,
"How the lab holds the graph"), and the check that the fixture's section belongs to them.

The fixture's section (builders/embedding/hipporag2_section.py) gives the phrase and fact vectors and the
synonym edges its builder found; the imported triples of relations.json, or its pinned NER output,
give the rest. From both, this module derives the node memories (phrases, facts), the vectors the
lab binds (the facts'; for the NER graph the phrases'), and the `states`, `mentions` and
`synonym_of` relations, keyed like documents and edges so that prepare writes them, and evaluate's
snapshots and the audit compare them, as they do the corpus.

The check recomputes the section's phrases, facts, question phrases and synonym edges itself: the
phrases and facts from the triples or the entities, the question phrases from the fixture's
query_entities, the synonyms from the stored phrase vectors, exactly, except that a pair whose
cosine lies within the profile's tolerance of the threshold may be present or absent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from builders.embedding import decode_vector
from builders.embedding.hipporag2_section import query_phrases
from builders.hipporag2_graph import fact_text, mentioned, ner_output_of, phrase, stated, synonyms, triples_of
from ground.canonical import digest
from protocols.profiles.hipporag2 import (
    COSINE_REF, FACT_ENDS, FIXTURE_SECTION, GRAPH_NODE, HIPPORAG2_GRAPH, MENTIONS, NER_REF, NODE_FACT, NODE_PHRASE,
    SECTION_GRAPHS, STATES, SYNONYM_OF, TRIPLES_REF,
)

GRAPH_METHOD = "hipporag2_graph_v1"


def phrase_key(text: str) -> str:
    """The state key and external id of a phrase node: no document id starts with '~'."""
    return "~e:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def fact_key(text: str) -> str:
    return "~f:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


@dataclass
class GraphNodes:
    payloads: dict[str, dict] = field(default_factory=dict)  # node key -> memory payload
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # fact (NER graph: phrase) key -> float32 vector
    receipts: dict[str, str] = field(default_factory=dict)
    edges: list[dict] = field(default_factory=list)  # relations.json-shaped, endpoints by key
    question_phrases: dict[str, np.ndarray] = field(default_factory=dict)  # NER graph: question phrase -> vector


def graph_nodes(fixture: Mapping, relations: Mapping) -> GraphNodes:
    """The nodes, vectors and edges of the fixture's HippoRAG 2 section (empty without one)."""
    section = fixture.get(FIXTURE_SECTION)
    out = GraphNodes()
    if section is None:
        return out
    if section["graph"] == SECTION_GRAPHS[1]:
        return _ner_nodes(fixture, relations, section, out)
    by_passage, _ = stated([d["id"] for d in fixture["source"]["documents"]], triples_of(relations))
    producer = relations["imported"]["producer"][:200]  # a relation names its model in at most 200 characters
    for entry in section["phrases"]:
        out.payloads[phrase_key(entry["id"])] = {"content": entry["id"], "metadata": {GRAPH_NODE: NODE_PHRASE}}
    facts = {fact_text(fact): fact for counts in by_passage.values() for fact in counts}
    for entry in section["facts"]:
        subject, _, obj = facts[entry["id"]]
        key = fact_key(entry["id"])
        out.payloads[key] = {"content": entry["id"], "metadata": {GRAPH_NODE: NODE_FACT, FACT_ENDS[0]: subject,
                                                                   FACT_ENDS[1]: obj}}
        out.vectors[key] = decode_vector(entry["vector"])
        out.receipts[key] = entry["vector_sha256"]
    for pid, counts in by_passage.items():
        for fact, count in counts.items():
            text = fact_text(fact)
            out.edges.append(_edge(STATES, pid, fact_key(text), f"{TRIPLES_REF}{count}", "external_model", producer))
    return _with_synonyms(fixture, section, out)


def _ner_nodes(fixture: Mapping, relations: Mapping, section: Mapping, out: GraphNodes) -> GraphNodes:
    """The NER graph: phrase nodes bound to their vectors, a `mentions` relation per passage phrase."""
    for entry in section["phrases"]:
        key = phrase_key(entry["id"])
        out.payloads[key] = {"content": entry["id"], "metadata": {GRAPH_NODE: NODE_PHRASE}}
        out.vectors[key] = decode_vector(entry["vector"])
        out.receipts[key] = entry["vector_sha256"]
    ner = ner_output_of(relations)
    producer = f"{ner['model']['model_distribution']}=={ner['model']['model_version']}"[:200]
    for pid, phrases in mentioned([d["id"] for d in fixture["source"]["documents"]], ner).items():
        for one, labels in phrases.items():
            out.edges.append(_edge(MENTIONS, pid, phrase_key(one), NER_REF + ",".join(labels), "model_inference",
                                   producer))
    out.question_phrases = {entry["id"]: decode_vector(entry["vector"]) for entry in section["query_phrases"]}
    return _with_synonyms(fixture, section, out)


def _with_synonyms(fixture: Mapping, section: Mapping, out: GraphNodes) -> GraphNodes:
    model = fixture["space"]["model"][:200]
    for a, b, cosine in section["synonyms"]:
        out.edges.append(_edge(SYNONYM_OF, phrase_key(a), phrase_key(b), f"{COSINE_REF}{cosine!r}",
                               "model_inference", model))
    out.edges.sort(key=lambda edge: edge["id"])
    return out


def question_phrases(query_entities: Mapping, query_id: str, most: int) -> list[str]:
    """A question's entities as phrases, distinct, ascending, the first `most` (hipporag_ner_v1's linking)."""
    for entry in query_entities["queries"]:
        if entry["id"] == query_id:
            return sorted({one for text, _ in entry["entities"] if (one := phrase(text))})[:most]
    raise KeyError(query_id)


def _edge(kind: str, source: str, target: str, evidence: str, origin: str, model: str) -> dict:
    return {"id": f"{kind}:" + hashlib.sha256(f"{source}\x00{target}".encode("utf-8")).hexdigest()[:40],
            "kind": kind, "source": source, "target": target,
            "provenance": {"origin": origin, "method": GRAPH_METHOD, "method_revision": "1",
                           "evidence_ref": evidence, "model": model}}


def section_failures(fixture: Mapping, relations: Mapping) -> list[str]:
    """Why the fixture's section does not belong to these relations and its own vectors (none: it does)."""
    section = fixture.get(FIXTURE_SECTION)
    if section is None:
        return []
    if section["relations_digest"] != digest(relations):
        return [f"{FIXTURE_SECTION}.relations_digest is not the digest of the relations file"]
    if any(d["id"].startswith("~") for d in fixture["source"]["documents"]):
        return ["a document id starts with '~', the prefix of HippoRAG 2's node keys"]
    passage_ids = [d["id"] for d in fixture["source"]["documents"]]
    faults = []
    if section["graph"] == SECTION_GRAPHS[1]:
        facts, left_out = [], {}
        phrases = sorted({one for found in mentioned(passage_ids, ner_output_of(relations)).values() for one in found})
        asked = query_phrases(fixture["query_entities"]) if "query_entities" in fixture else None
        if [e["id"] for e in section["query_phrases"]] != asked:
            faults.append(f"{FIXTURE_SECTION}.query_phrases are not the fixture's query_entities as phrases")
    else:
        by_passage, left_out = stated(passage_ids, triples_of(relations))
        facts = sorted({fact for counts in by_passage.values() for fact in counts})
        phrases = sorted({end for subject, _, obj in facts for end in (subject, obj)})
    if [e["id"] for e in section["phrases"]] != phrases:
        faults.append(f"{FIXTURE_SECTION}.phrases are not the {section['graph']} graph's {len(phrases)} phrases")
    if [e["id"] for e in section["facts"]] != [fact_text(fact) for fact in facts]:
        faults.append(f"{FIXTURE_SECTION}.facts are not the {section['graph']} graph's {len(facts)} facts")
    if section["left_out"] != left_out:
        faults.append(f"{FIXTURE_SECTION}.left_out {section['left_out']}, recomputed {left_out}")
    if not faults:
        faults += synonym_failures(section)
    return faults


def synonym_failures(section: Mapping, rules: Mapping = HIPPORAG2_GRAPH["synonyms"]) -> list[str]:
    """The section's synonym edges against the evaluator's own search over its phrase vectors."""
    phrases = [e["id"] for e in section["phrases"]]
    if not phrases:
        return [] if not section["synonyms"] else [f"{FIXTURE_SECTION}.synonyms listed without phrases"]
    rows = np.stack([decode_vector(e["vector"]) for e in section["phrases"]])
    found = {(a, b): cosine for a, kept in synonyms(phrases, rows, rules).items() for b, cosine in kept}
    listed = {(a, b): cosine for a, b, cosine in section["synonyms"]}
    threshold, near = float(Fraction(rules["threshold"])), float(Fraction(rules["near_threshold"]))
    faults = []
    for pair in sorted(set(found) | set(listed)):
        have, want = listed.get(pair), found.get(pair)
        if have == want:
            continue
        if (have is None or want is None) and abs((have if want is None else want) - threshold) <= near:
            continue  # a float near tie at the threshold: either reading holds
        faults.append(f"synonym edge {pair[0]!r} -> {pair[1]!r}: listed {have!r}, recomputed {want!r}")
        if len(faults) >= 5:
            break
    return faults

