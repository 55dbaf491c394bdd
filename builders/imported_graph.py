"""`imported_triples_v1`: the title graph plus passages linked through an external graph's triples.

The relations file holds, byte for byte, what document_title_graph_v1 writes (so every method that
follows the title graph ranks exactly as under it), then one more kind, `shares_argument`:
passages linked through an argument (a subject or an object) that both passages' triples name.

- **The imported graph is an input of the file**, pinned by hash: `imported` holds the importer's
  section (importer/graph_import.py: the format, the pinned files with their SHA-256, the producer,
  the passage policy, every count and, per passage, its triples as the file wrote them) and
  `imported_digest` its digest. A rebuild (the evaluator's, `rebuild_file`) reads that section and
  refuses it when its digest or its ids disagree.
- **An argument node** is the argument normalized as the NER graph normalizes an entity (Unicode
  NFKC, casefold, whitespace collapsed: builders/ner.py `normalize`). It links the passages whose
  triples name it when 2 to `max_documents` passages do, as a star from the smallest id (the NER
  graph's rule): (p1, pi), one relation each, origin `external_model`, `model` = the producer.
- **Each relation names its argument and its predicates**: `evidence_ref` is `argument:<argument>`,
  a newline, then `predicates:` and the distinct predicates (as written, sorted, joined by " | ") of
  the two passages' triples that name the argument, cut at whole predicates so the reference stays
  within 1,024 characters, with ` (+N more)` when some were cut.
- The entity–passage incidence and the subject–object edges stay in `imported` for the methods
  that need them (HippoRAG 2's graph).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from builders import title_graph
from builders.ner import normalize
from builders.relation_record import relation_record
from ground.canonical import digest
from ground.fast_canonical import digest_finite

METHOD = "imported_triples_v1"
KIND = "shares_argument"
ORIGIN = "external_model"
EVIDENCE_PREFIX = "argument:"
PREDICATES_PREFIX = "\npredicates:"
PREDICATE_JOINER = " | "
EVIDENCE_CHARS = 1024
MAX_DOCUMENTS = 64  # as document_ner_graph_v1: an argument held by more passages links nothing specific

IMPORTED_POLICY: dict[str, Any] = {
    "input": "the imported section (importer/graph_import.py), pinned by imported_digest",
    "argument": "subject or object of a kept triple, normalized: unicode NFKC, casefold, whitespace runs "
                "collapsed to one space, stripped",
    "documents": [2, MAX_DOCUMENTS],
    "kind": KIND,
    "link": "star: the passages naming an argument, ascending id, each linked to the first",
    "edge_id": "edge- + digest([source, target, kind, argument])",
    "evidence_ref": EVIDENCE_PREFIX + "<argument>" + PREDICATES_PREFIX + "<predicates>",
    "predicates": "distinct predicates, as written, of the two passages' triples naming the argument, sorted, "
                  f"joined by {PREDICATE_JOINER!r}, whole predicates while the reference fits {EVIDENCE_CHARS} "
                  "characters, then ' (+N more)'",
    "origin": ORIGIN,
    "model": "the graph's producer (graph_builder.graph_file.producer)",
}
POLICY: dict[str, Any] = {
    "method": METHOD,
    "inputs": list(title_graph.PROJECTION_FIELDS),
    "title_graph": title_graph.POLICY,
    "imported": IMPORTED_POLICY,
}
KINDS = title_graph.KINDS + (KIND,)


def build_relations(projection: list[dict], source_digest: str, imported: dict) -> dict:
    """The whole relations.json value: the title graph's relations and the argument stars, sorted by id."""
    documents = title_graph._checked_projection(projection)
    ids = {doc["id"] for doc in documents}
    strays = [doc["id"] for doc in imported.get("documents", []) if doc["id"] not in ids]
    if strays:
        raise title_graph.GraphInputError(f"imported: passage {strays[0]} is not in the projection")
    relations = title_graph.merged(title_graph._relations(documents), argument_relations(imported))
    out = title_graph.relations_file(METHOD, POLICY, KINDS, documents, relations, source_digest)
    out["imported"] = imported
    out["imported_digest"] = digest(imported)
    return out


def build_for_source(source: dict, source_digest: str, imported: dict | None = None) -> dict:
    if imported is None:
        raise title_graph.GraphInputError(f"{METHOD} builds from an imported graph: the protocol pins none")
    return build_relations(title_graph.project(source), source_digest, imported)


def rebuild_file(relations_file: dict) -> dict:
    """Rebuild from the file's projection and its pinned imported section."""
    imported = relations_file.get("imported")
    if not isinstance(imported, dict) or relations_file.get("imported_digest") != digest(imported):
        raise title_graph.GraphInputError("imported: the imported graph is missing or is not the one "
                                          "imported_digest pins")
    return build_relations(relations_file["projection"], relations_file["source_digest"], imported)


def argument_holders(imported: dict) -> dict[str, dict[str, set[str]]]:
    """argument -> {passage id -> the predicates of its triples naming the argument}."""
    holders: dict[str, dict[str, set[str]]] = defaultdict(dict)
    for doc in imported["documents"]:
        for subject, predicate, obj in doc["triples"]:
            for argument in (normalize(subject), normalize(obj)):
                if argument:
                    holders[argument].setdefault(doc["id"], set()).add(predicate)
    return holders


def evidence(argument: str, predicates: set[str]) -> str | None:
    """The relation's evidence_ref, or None when even its argument does not fit."""
    head = EVIDENCE_PREFIX + argument + PREDICATES_PREFIX
    if len(head) > EVIDENCE_CHARS:
        return None
    ordered = sorted(predicates)
    for count in range(len(ordered), -1, -1):
        cut = len(ordered) - count
        text = head + PREDICATE_JOINER.join(ordered[:count]) + (f" (+{cut} more)" if cut else "")
        if len(text) <= EVIDENCE_CHARS:
            return text
    return None


def argument_relations(imported: dict) -> list[dict]:
    revision, model = digest(POLICY), imported["producer"]
    low, high = IMPORTED_POLICY["documents"]
    out = []
    for argument, held in sorted(argument_holders(imported).items()):
        if not low <= len(held) <= high:
            continue
        hub, *others = sorted(held)
        for other in others:
            ref = evidence(argument, held[hub] | held[other])
            if ref is None:
                continue
            out.append(relation_record("edge-" + digest_finite([hub, other, KIND, argument]), KIND, hub, other,
                                       origin=ORIGIN, method=METHOD, revision=revision, evidence=ref, model=model))
    return out
