"""The fixture's LinearRAG section (`linearrag_graph`): the recognizer's mentions, the graph's
entities and sentences with their vectors, the questions' entities with theirs, and what the lab
holds of them (docs/linearrag.md, "How the lab holds the graph").

Built in the fixture stage (`lab embed build --linearrag-graph`), never in the lab: the pinned
recognizer with its parser runs over every passage and question (builders/linearrag_graph.py), and
the fixture's own encoder encodes the entities as written, the sentences, and the questions'
entities lower-cased, as documents are (unit rows). The section keeps the recognizer's output
(`mentions`), so the evaluator derives the graph again from it and the passages' texts without
running a model; that the recognizer reproduces those mentions is checked apart
(tests/lab/campaigns/test_linearrag_run.py).

What the lab holds (`records`): an entity node and a sentence node per distinct text, each bound to
its vector; a `holds_entity` relation from a passage to each of its entities (evidence
`count:N`, the entity's count in the passage's text), and a `names_entity` relation from a
sentence to each entity it names (evidence `ner:LABELS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from builders import ner
from builders.embedding.sections.section import LabRecords, Section, SectionInputs, node_edge, node_key
from builders.embedding.vectors import (
    check_vector_entries,
    decode_vector,
    encode_vector,
    entry_ids,
    normalize_rows,
    vector_sha256,
)
from builders.linearrag_graph import build, mentions, question_entities
from ground.errors import RefusedInput
from ground.fields import Fields, join
from protocols.families.graphs.linearrag import (
    COUNT_REF,
    HOLDS_ENTITY,
    NAMES_ENTITY,
    NER_REF,
    NODE_ENTITY,
    NODE_SENTENCE,
)
from protocols.families.graphs.linearrag import (
    SECTION as NAME,
)
from protocols.route import GRAPH_NODE

GRAPH_METHOD = "linearrag_graph_v1"
VECTOR_ROLES = ("entities", "sentences", "query_phrases")


def section(inputs: SectionInputs) -> dict:
    """Mentions of every passage and question, the graph's entities and sentences and the questions'
    entities with their vectors, each list ascending."""
    nlp = ner.load_pipeline(ner.PARSING_EXCLUDED)
    documents, queries = inputs.source["documents"], inputs.source["queries"]
    found = mentions((d["text"] for d in documents), nlp, ner.progress_printer("linearrag recognizer"),
                     len(documents))
    asked = mentions((q["question"] for q in queries), nlp)
    graph = build({d["id"]: d["text"] for d in documents}, {d["id"]: m for d, m in zip(documents, found)})
    position = {text: i for i, text in enumerate(graph.sentences)}
    phrases = sorted({one for entry in asked for one in question_entities(entry)})
    return {
        "recognizer": {**ner.provenance(), "components_run": ["tokenizer", "tok2vec", "parser", "ner"]},
        "mentions": [{"id": d["id"], "mentions": [[text, label, position[sentence]] for text, label, sentence in m]}
                     for d, m in zip(documents, found)],
        "query_mentions": [{"id": q["id"], "mentions": [[text, label] for text, label, _ in m]}
                           for q, m in zip(queries, asked)],
        "entities": _entries(inputs, graph.entities, "entities"),
        "sentences": _entries(inputs, graph.sentences, "sentences"),
        "query_phrases": _entries(inputs, phrases, "query_phrases"),
    }


def _entries(inputs: SectionInputs, texts: list[str], role: str) -> list[dict]:
    if not texts:
        return []
    rows = normalize_rows(np.asarray(inputs.encode(texts, f"{NAME} {role}"), dtype=np.float32), texts, f"{NAME} {role}")
    return [{"id": i, "vector": encode_vector(row), "vector_sha256": vector_sha256(row)} for i, row in zip(texts, rows)]


def check_shape(f: Fields, value: Any, dimensions: int) -> None:
    """Shape, order and vectors; what the mentions make of the graph is `failures`'."""
    entry = f.obj(value, NAME, ("recognizer", "mentions", "query_mentions") + VECTOR_ROLES)
    f.mapping(entry["recognizer"], join(NAME, "recognizer"))
    for role in ("mentions", "query_mentions"):
        for i, item in enumerate(f.array(entry[role], join(NAME, role))):
            where = join(join(NAME, role), i)
            f.obj(item, where, ("id", "mentions"))
            width = 3 if role == "mentions" else 2
            for j, mention in enumerate(f.array(item["mentions"], join(where, "mentions"))):
                if not (isinstance(mention, list) and len(mention) == width
                        and all(isinstance(x, str) and x for x in mention[:2])
                        and (width == 2 or (isinstance(mention[2], int) and not isinstance(mention[2], bool)))):
                    f.fail(join(join(where, "mentions"), j), "expected [text, label" + (", sentence index]" if width == 3
                                                                                   else "]"))
    for role in VECTOR_ROLES:
        entries = f.array(entry[role], join(NAME, role))
        ids = entry_ids(f, entries, join(NAME, role), ascending=True)
        check_vector_entries(f, entries, join(NAME, role), ids, dimensions)


def graph_of(fixture: Mapping):
    """The graph the section's mentions make of the fixture's passages (builders/linearrag_graph.py)."""
    value = fixture[NAME]
    sentences = [e["id"] for e in value["sentences"]]
    texts = {d["id"]: d["text"] for d in fixture["source"]["documents"]}
    found = {item["id"]: [(text, label, sentences[i]) for text, label, i in item["mentions"]]
             for item in value["mentions"]}
    return build(texts, found)


entity_key = partial(node_key, "le")  # an entity node's state key and external id
sentence_key = partial(node_key, "ls")


def records(fixture: Mapping, relations: Mapping) -> LabRecords:
    value = fixture[NAME]
    graph = graph_of(fixture)
    out = LabRecords()
    producer = f"{value['recognizer']['model_distribution']}=={value['recognizer']['model_version']}"[:200]
    for role, kind, key_of in (("entities", NODE_ENTITY, entity_key), ("sentences", NODE_SENTENCE, sentence_key)):
        for entry in value[role]:
            key = key_of(entry["id"])
            out.payloads[key] = {"content": entry["id"], "metadata": {GRAPH_NODE: kind}}
            out.vectors[key] = decode_vector(entry["vector"])
            out.receipts[key] = entry["vector_sha256"]
    for pid, held in graph.counts.items():
        for entity, count in held.items():
            out.edges.append(_edge(HOLDS_ENTITY, pid, entity_key(entity), f"{COUNT_REF}{count}", producer))
    for sentence, named in graph.sentence_entities.items():
        for entity, labels in named.items():
            out.edges.append(_edge(NAMES_ENTITY, sentence_key(sentence), entity_key(entity),
                                   NER_REF + ",".join(labels), producer))
    out.edges.sort(key=lambda edge: edge["id"])
    out.phrases = {entry["id"]: decode_vector(entry["vector"]) for entry in value["query_phrases"]}
    return out


def _edge(kind: str, source: str, target: str, evidence: str, model: str) -> dict:
    return node_edge(kind, source, target, origin="model_inference", method=GRAPH_METHOD, evidence=evidence,
                     model=model)


def query_phrases(fixture: Mapping, held: LabRecords, query_id: str, most: int) -> list[tuple[str, np.ndarray]]:
    """A question's entities, lower-cased, distinct, ascending, the first `most`, with their vectors."""
    for entry in fixture[NAME]["query_mentions"]:
        if entry["id"] == query_id:
            found = question_entities([(text, label, "") for text, label in entry["mentions"]])[:most]
            return [(one, held.phrases[one]) for one in found]
    raise RefusedInput(f"fixture: {NAME} holds no question {query_id}")


def failures(fixture: Mapping, relations: Mapping) -> list[str]:
    """Why the section does not belong to the fixture's passages and questions (none: it does)."""
    value = fixture[NAME]
    documents, queries = fixture["source"]["documents"], fixture["source"]["queries"]
    faults = []
    if [item["id"] for item in value["mentions"]] != [d["id"] for d in documents]:
        faults.append(f"{NAME}.mentions do not list the fixture's passages in order")
    if [item["id"] for item in value["query_mentions"]] != [q["id"] for q in queries]:
        faults.append(f"{NAME}.query_mentions do not list the fixture's questions in order")
    if any(d["id"].startswith("~") for d in documents):
        faults.append("a document id starts with '~', the prefix of LinearRAG's node keys")
    for q, item in zip(queries, value["query_mentions"]):
        if any(text not in q["question"] for text, _ in item["mentions"]):
            faults.append(f"{NAME}.query_mentions of {q['id']}: a mention is no span of the question")
            break
    if faults:
        return faults
    sentences = [e["id"] for e in value["sentences"]]
    for d, item in zip(documents, value["mentions"]):
        for text, label, i in item["mentions"]:
            if not 0 <= i < len(sentences) or text not in d["text"] or sentences[i] not in d["text"] \
                    or text not in sentences[i]:
                faults.append(f"{NAME}.mentions of {d['id']}: {text!r} ({label}) is no span of the passage in "
                              f"the sentence it names")
                break
    graph = graph_of(fixture)
    if [e["id"] for e in value["entities"]] != graph.entities:
        faults.append(f"{NAME}.entities are not the mentions' {len(graph.entities)} entities")
    if sentences != graph.sentences:
        faults.append(f"{NAME}.sentences are not the mentions' {len(graph.sentences)} sentences")
    asked = sorted({one for item in value["query_mentions"]
                    for one in question_entities([(t, label, "") for t, label in item["mentions"]])})
    if [e["id"] for e in value["query_phrases"]] != asked:
        faults.append(f"{NAME}.query_phrases are not the questions' {len(asked)} entities, lower-cased")
    return faults[:5]


SECTION = Section(
    NAME,
    help="also run the recognizer with its parser over passages and questions, and encode the LinearRAG graph's "
         "entities, sentences and the questions' entities (the linearrag method's input; docs/linearrag.md)",
    build=section, check_shape=check_shape, records=records, failures=failures, query_phrases=query_phrases,
)
