"""`document_ner_graph_v1`: document_entity_graph_v1 plus passages linked through spaCy entities.

The relations file holds, byte for byte, what document_entity_graph_v1 writes (the title graph and
the `shares_name` relations, so every earlier method ranks as under v4 and `graph_ppr_names` can
walk the names), then one more kind, `shares_entity`: passages linked through the named entities
the pinned recognizer (builders/ner.py) finds in their paragraph text.

- **The NER output is an input of the file**, pinned by hash: `ner` holds the model's provenance
  (meta.json, the SHA-256 of its files) and, per document, its [normalized text, label] entities;
  `ner_digest` is its digest. A rebuild (the evaluator's, `rebuild_file`) reads that section
  instead of running the model again, and refuses it when its digest or its ids disagree.
- **An entity node** is a normalized text (labels kept in the NER output: spaCy labels one name
  differently in different sentences, so the node is the string, as a question's entity is matched
  by string). It links the passages that hold it when 2 to `max_documents` passages hold it.
- **Linear, not quadratic**: the passages p1 < p2 < ... < pn holding an entity are linked as a star
  from the smallest id, (p1, pi) for i >= 2, one relation each, whose evidence_ref is
  `entity:<text>`. So the entity's passages are exactly the distinct endpoints of the relations
  naming it, and its passage count (HippoRAG's node specificity) is derivable from the relations.
  Two passages sharing several entities carry one relation per entity (the id digests the entity).

The builder sees exactly {id, title, paragraph_text} per document (the title graph's projection).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from builders import entity_graph, ner, title_graph
from builders.relation_record import relation_record
from ground.canonical import digest

METHOD = "document_ner_graph_v1"
FORMAT = title_graph.FORMAT
KIND = "shares_entity"
EVIDENCE_PREFIX = "entity:"
MAX_DOCUMENTS = 64  # an entity held by more passages is too common to link anything specific

NER_POLICY: dict[str, Any] = {
    "recognizer": ner.POLICY,
    "text": "paragraph_text only",
    "node": "the normalized entity text (labels kept in the NER output, not in the node)",
    "documents": [2, MAX_DOCUMENTS],
    "kind": KIND,
    "link": "star: the passages holding an entity, ascending id, each linked to the first",
    "edge_id": "edge- + digest([source, target, kind, entity])",
    "evidence_ref": EVIDENCE_PREFIX + "<entity>",
    "origin": "model_inference",
}
POLICY: dict[str, Any] = {
    "method": METHOD,
    "inputs": list(title_graph.PROJECTION_FIELDS),
    "title_graph": title_graph.POLICY,
    "entity": entity_graph.ENTITY_POLICY,
    "ner": NER_POLICY,
}
KINDS = entity_graph.KINDS + (KIND,)


def run_ner(documents: list[dict], nlp=None, progress=None) -> dict:
    """The NER output of a checked projection: the model's provenance and each document's entities.
    `progress(done, total)`, if given, is called after each batch (rate and ETA on long builds)."""
    nlp = nlp if nlp is not None else ner.load_pipeline()
    found = ner.entities((doc["paragraph_text"] for doc in documents), nlp, progress=progress,
                         total=len(documents))
    return {"model": ner.provenance(),
            "documents": [{"id": doc["id"], "entities": ents} for doc, ents in zip(documents, found)]}


def model_label(ner_output: dict) -> str:
    """The relations' `model`: the distribution, its version and the digest of its file hashes."""
    model = ner_output["model"]
    return f"{model['model_distribution']}=={model['model_version']} files:{digest(model['file_sha256'])[:16]}"


def build_relations(projection: list[dict], source_digest: str, ner_output: dict | None = None) -> dict:
    """The whole relations.json value; runs the pinned NER unless given its output (a rebuild)."""
    documents = title_graph._checked_projection(projection)
    if ner_output is None:
        ner_output = run_ner(documents)
    elif [d["id"] for d in ner_output.get("documents", [])] != [d["id"] for d in documents]:
        raise title_graph.GraphInputError("ner: its documents are not the projection's, in id order")
    base = entity_graph.build_relations(documents, source_digest)
    relations = title_graph.merged(base["relations"], ner_relations(ner_output))
    out = title_graph.relations_file(METHOD, POLICY, KINDS, documents, relations, source_digest)
    out["ner"] = ner_output
    out["ner_digest"] = digest(ner_output)
    return out


def build_for_source(source: dict, source_digest: str) -> dict:
    return build_relations(title_graph.project(source), source_digest)


def rebuild_file(relations_file: dict) -> dict:
    """Rebuild from the file's projection and its pinned NER output (the model is not run again)."""
    ner_output = relations_file.get("ner")
    if not isinstance(ner_output, dict) or relations_file.get("ner_digest") != digest(ner_output):
        raise title_graph.GraphInputError("ner: the NER output is missing or is not the one ner_digest pins")
    return build_relations(relations_file["projection"], relations_file["source_digest"], ner_output)


def entity_holders(ner_output: dict) -> dict[str, list[str]]:
    """entity text -> the ids of the passages holding it, ascending (the NER output is in id order)."""
    holders: dict[str, list[str]] = defaultdict(list)
    for doc in ner_output["documents"]:
        for text in sorted({text for text, _ in doc["entities"]}):
            holders[text].append(doc["id"])
    return holders


def ner_relations(ner_output: dict) -> list[dict]:
    revision, model = digest(POLICY), model_label(ner_output)
    low, high = NER_POLICY["documents"]
    out = []
    for text, ids in sorted(entity_holders(ner_output).items()):
        if not low <= len(ids) <= high or len(EVIDENCE_PREFIX + text) > 1024:
            continue
        hub = ids[0]
        for other in ids[1:]:
            out.append(relation_record("edge-" + digest([hub, other, KIND, text]), KIND, hub, other,
                                       origin="model_inference", method=METHOD, revision=revision,
                                       evidence=EVIDENCE_PREFIX + text, model=model))
    return out
