"""The fixture's HippoRAG 2 section (`hipporag2_graph`): its phrase and fact vectors, the synonym
edges they make, and what the lab holds of them (docs/hipporag2.md, "How the lab holds the graph").

Built in the fixture stage (`lab embed build --hipporag2-graph`), never in the lab: the graph's
phrases and facts (builders/hipporag2_graph.py) are encoded by the fixture's own encoder as
documents are, their vectors L2-normalized as every fixture vector is, and the synonym edges are
found from those stored float32 vectors, so the evaluator can find them again from the fixture
alone.

Which graph (`graph`): an imported graph's triples (hipporag2_v1), or, for a document_ner_graph_v1
relations file, its NER entities (hipporag_ner_v1): no facts, and `query_phrases`, the vectors of
the questions' own entities (the fixture's query_entities) as phrases, which link to the graph's.

From the section and the relations, `records` derives the node memories (phrases, facts), the
vectors the lab binds (the facts'; for the NER graph the phrases'), and the `states`, `mentions`
and `synonym_of` relations. `failures` recomputes the section's phrases, facts, question phrases
and synonym edges: the phrases and facts from the triples or the entities, the question phrases
from the fixture's query_entities, the synonyms from the stored phrase vectors, exactly, except
that a pair whose cosine lies within the profile's tolerance of the threshold may be present or
absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from builders.embedding.sections.section import LabRecords, Section, SectionInputs, node_edge, node_key
from builders.embedding.vectors import (
    check_vector_entries,
    decode_vector,
    encode_vector,
    entry_ids,
    normalize_rows,
    vector_sha256,
)
from builders.hipporag2_graph import (
    build,
    build_ner,
    fact_text,
    mentioned,
    ner_output_of,
    phrase,
    stated,
    synonyms,
    triples_of,
)
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.fields import Fields, join
from protocols.embedding_space import encoder_of_space
from protocols.families.graphs.hipporag2 import (
    COSINE_REF,
    FACT_ENDS,
    FIXTURE_SECTION,
    HIPPORAG2_GRAPH,
    MENTIONS,
    NER_REF,
    NODE_FACT,
    NODE_PHRASE,
    SECTION_GRAPHS,
    STATES,
    SYNONYM_OF,
    TRIPLES_REF,
    synonym_rules,
)
from protocols.route import GRAPH_NODE

GRAPH_METHOD = "hipporag2_graph_v1"


# ---------------------------------------------------------------- the section


def graph_kind(relations: Mapping) -> str:
    """An imported graph's triples when the relations hold one, else the NER output's entities."""
    return SECTION_GRAPHS[0] if relations.get("imported") else SECTION_GRAPHS[1]


def query_phrases(query_entities: Mapping) -> list[str]:
    """Every question's entities as phrases, distinct, ascending (the empty phrase dropped)."""
    return sorted({one for entry in query_entities["queries"] for text, _ in entry["entities"] if (one := phrase(text))})


def section(inputs: SectionInputs) -> dict:
    """The fixture section: phrases (ascending) and facts (the graph's order) with their vectors,
    the synonym edges found from the phrase vectors as stored, and for the NER graph the questions'
    phrases with their vectors."""
    relations, passage_ids = inputs.graph(), inputs.passage_ids
    kind = graph_kind(relations)
    if kind == SECTION_GRAPHS[0]:
        graph = build(passage_ids, triples_of(relations))
    else:
        if inputs.query_entities is None:
            raise RefusedInput("the NER graph's section links the questions' entities: build the fixture with "
                               "--query-entities too (docs/hipporag2.md)")
        graph = build_ner(passage_ids, ner_output_of(relations))
    texts = [fact_text(fact) for fact in graph.facts]
    phrase_rows = _rows(inputs, graph.phrases, "phrases")
    fact_rows = _rows(inputs, texts, "facts")
    rules = synonym_rules(inputs.encoder)
    found = synonyms(graph.phrases, phrase_rows, rules) if len(graph.phrases) else {}  # float32 rows: the stored bits
    out = {
        "graph": kind,
        "relations_digest": digest(relations),
        "phrases": _entries(graph.phrases, phrase_rows),
        "facts": _entries(texts, fact_rows),
        "synonyms": [[a, b, cosine] for a in sorted(found) for b, cosine in found[a]],
        "left_out": dict(graph.left_out),
    }
    if kind == SECTION_GRAPHS[1]:
        asked = query_phrases(inputs.query_entities or {})  # refused above when absent
        out["query_phrases"] = _entries(asked, _rows(inputs, asked, "query_phrases"))
    return out


def _rows(inputs: SectionInputs, texts: list[str], role: str) -> np.ndarray:
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    what = f"{FIXTURE_SECTION} {role}"
    return normalize_rows(np.asarray(inputs.encode(texts, what), dtype=np.float32), texts, what)


def _entries(ids: list[str], rows: np.ndarray) -> list[dict]:
    return [{"id": i, "vector": encode_vector(row), "vector_sha256": vector_sha256(row)} for i, row in zip(ids, rows)]


def check_shape(f: Fields, value: Any, dimensions: int) -> None:
    """Shape, order and vectors; what the phrases, facts and synonyms must be is `failures`'."""
    entry = f.obj(value, FIXTURE_SECTION, ("graph", "relations_digest", "phrases", "facts", "synonyms", "left_out"),
                  optional=("query_phrases",))
    f.string(entry["graph"], join(FIXTURE_SECTION, "graph"), allowed=SECTION_GRAPHS)
    if ("query_phrases" in entry) != (entry["graph"] == SECTION_GRAPHS[1]):
        f.fail(join(FIXTURE_SECTION, "query_phrases"), f"present exactly when the graph is {SECTION_GRAPHS[1]}")
    f.hex64(entry["relations_digest"], join(FIXTURE_SECTION, "relations_digest"))
    for role in ("phrases", "facts", "query_phrases"):
        if role not in entry:
            continue
        entries = f.array(entry[role], join(FIXTURE_SECTION, role))
        ids = entry_ids(f, entries, join(FIXTURE_SECTION, role))
        check_vector_entries(f, entries, join(FIXTURE_SECTION, role), ids, dimensions)
    for role in ("phrases", "query_phrases"):
        if [e["id"] for e in entry.get(role, [])] != sorted(e["id"] for e in entry.get(role, [])):
            f.fail(join(FIXTURE_SECTION, role), "must be in ascending order")
    for i, edge in enumerate(f.array(entry["synonyms"], join(FIXTURE_SECTION, "synonyms"))):
        if not (isinstance(edge, list) and len(edge) == 3 and all(isinstance(x, str) for x in edge[:2])
                and isinstance(edge[2], float)):
            f.fail(join(join(FIXTURE_SECTION, "synonyms"), i), "expected [phrase, phrase, cosine]")
    f.mapping(entry["left_out"], join(FIXTURE_SECTION, "left_out"), nonempty=False)


# ---------------------------------------------------------------- what the lab holds of it


phrase_key = partial(node_key, "e")  # a phrase node's state key and external id
fact_key = partial(node_key, "f")


def records(fixture: Mapping, relations: Mapping) -> LabRecords:
    """The nodes, vectors and edges of the fixture's HippoRAG 2 section."""
    section_value = fixture[FIXTURE_SECTION]
    out = LabRecords()
    if section_value["graph"] == SECTION_GRAPHS[1]:
        return _ner_records(fixture, relations, section_value, out)
    by_passage, _ = stated([d["id"] for d in fixture["source"]["documents"]], triples_of(relations))
    producer = relations["imported"]["producer"][:200]  # a relation names its model in at most 200 characters
    for entry in section_value["phrases"]:
        out.payloads[phrase_key(entry["id"])] = {"content": entry["id"], "metadata": {GRAPH_NODE: NODE_PHRASE}}
    facts = {fact_text(fact): fact for counts in by_passage.values() for fact in counts}
    for entry in section_value["facts"]:
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
    return _with_synonyms(fixture, section_value, out)


def _ner_records(fixture: Mapping, relations: Mapping, section_value: Mapping, out: LabRecords) -> LabRecords:
    """The NER graph: phrase nodes bound to their vectors, a `mentions` relation per passage phrase."""
    for entry in section_value["phrases"]:
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
    out.phrases = {entry["id"]: decode_vector(entry["vector"]) for entry in section_value["query_phrases"]}
    return _with_synonyms(fixture, section_value, out)


def _with_synonyms(fixture: Mapping, section_value: Mapping, out: LabRecords) -> LabRecords:
    model = fixture["space"]["model"][:200]
    for a, b, cosine in section_value["synonyms"]:
        out.edges.append(_edge(SYNONYM_OF, phrase_key(a), phrase_key(b), f"{COSINE_REF}{cosine!r}",
                               "model_inference", model))
    out.edges.sort(key=lambda edge: edge["id"])
    return out


def question_phrases(fixture: Mapping, held: LabRecords, query_id: str, most: int) -> list[tuple[str, np.ndarray]]:
    """A question's entities as phrases with their vectors, distinct, ascending, the first `most`
    (hipporag_ner_v1's linking); refused when the fixture holds no NER graph section."""
    if "query_entities" not in fixture or "query_phrases" not in fixture.get(FIXTURE_SECTION, {}):
        raise RefusedInput("fixture: no question phrases (build it with lab embed --query-entities "
                           "--hipporag2-graph over a document_ner_graph_v1 relations file)")
    for entry in fixture["query_entities"]["queries"]:
        if entry["id"] == query_id:
            phrases = sorted({one for text, _ in entry["entities"] if (one := phrase(text))})[:most]
            return [(one, held.phrases[one]) for one in phrases]
    raise KeyError(query_id)


def _edge(kind: str, source: str, target: str, evidence: str, origin: str, model: str) -> dict:
    return node_edge(kind, source, target, origin=origin, method=GRAPH_METHOD, evidence=evidence, model=model)


# ---------------------------------------------------------------- does it belong to its inputs


def failures(fixture: Mapping, relations: Mapping) -> list[str]:
    """Why the fixture's section does not belong to these relations and its own vectors (none: it does)."""
    section_value = fixture[FIXTURE_SECTION]
    if section_value["relations_digest"] != digest(relations):
        return [f"{FIXTURE_SECTION}.relations_digest is not the digest of the relations file"]
    if any(d["id"].startswith("~") for d in fixture["source"]["documents"]):
        return ["a document id starts with '~', the prefix of HippoRAG 2's node keys"]
    passage_ids = [d["id"] for d in fixture["source"]["documents"]]
    faults = []
    if section_value["graph"] == SECTION_GRAPHS[1]:
        facts: list = []
        left_out: dict[str, int] = {}
        phrases = sorted({one for found in mentioned(passage_ids, ner_output_of(relations)).values() for one in found})
        asked = query_phrases(fixture["query_entities"]) if "query_entities" in fixture else None
        if [e["id"] for e in section_value["query_phrases"]] != asked:
            faults.append(f"{FIXTURE_SECTION}.query_phrases are not the fixture's query_entities as phrases")
    else:
        by_passage, left_out = stated(passage_ids, triples_of(relations))
        facts = sorted({fact for counts in by_passage.values() for fact in counts})
        phrases = sorted({end for subject, _, obj in facts for end in (subject, obj)})
    if [e["id"] for e in section_value["phrases"]] != phrases:
        faults.append(f"{FIXTURE_SECTION}.phrases are not the {section_value['graph']} graph's {len(phrases)} phrases")
    if [e["id"] for e in section_value["facts"]] != [fact_text(fact) for fact in facts]:
        faults.append(f"{FIXTURE_SECTION}.facts are not the {section_value['graph']} graph's {len(facts)} facts")
    if section_value["left_out"] != left_out:
        faults.append(f"{FIXTURE_SECTION}.left_out {section_value['left_out']}, recomputed {left_out}")
    if not faults:
        faults += synonym_failures(section_value, synonym_rules(encoder_of_space(fixture["space"])))
    return faults


def synonym_failures(section_value: Mapping, rules: Mapping = HIPPORAG2_GRAPH["synonyms"]) -> list[str]:
    """The section's synonym edges against the evaluator's own search over its phrase vectors."""
    phrases = [e["id"] for e in section_value["phrases"]]
    if not phrases:
        return [] if not section_value["synonyms"] else [f"{FIXTURE_SECTION}.synonyms listed without phrases"]
    rows = np.stack([decode_vector(e["vector"]) for e in section_value["phrases"]])
    found = {(a, b): cosine for a, kept in synonyms(phrases, rows, rules).items() for b, cosine in kept}
    listed = {(a, b): cosine for a, b, cosine in section_value["synonyms"]}
    threshold, near = float(Fraction(rules["threshold"])), float(Fraction(rules["near_threshold"]))
    faults = []
    for pair in sorted(set(found) | set(listed)):
        have, want = listed.get(pair), found.get(pair)
        if have == want:
            continue
        one = have if want is None else want
        if (have is None or want is None) and one is not None and abs(one - threshold) <= near:
            continue  # a float near tie at the threshold: either reading holds
        faults.append(f"synonym edge {pair[0]!r} -> {pair[1]!r}: listed {have!r}, recomputed {want!r}")
        if len(faults) >= 5:
            break
    return faults


SECTION = Section(
    FIXTURE_SECTION,
    help="also encode the phrases and facts of the imported graph in --relations (or, for a "
         "document_ner_graph_v1 relations file, its entities and the questions'), and find their synonym "
         "edges (the hipporag2 methods' input; docs/hipporag2.md)",
    build=section, check_shape=check_shape, records=records, failures=failures, query_phrases=question_phrases,
    needs=("relations",),
)
