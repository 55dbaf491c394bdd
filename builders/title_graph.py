"""`document_title_graph_v1`: typed relations between documents from their titles alone (docs/design.md §5.1).

The builder sees a projection of exactly {id, title, paragraph_text} per document, so no question,
answer or judgment can shape an edge. `same_entity` joins documents with identical normalized
titles; `semantic_related` points from a paragraph to every document whose whole normalized title
it mentions. Titles are found by one pass over each paragraph's tokens (see TitleIndex), so the
build is linear in corpus size.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from builders.normalize import MIN_SINGLE_TOKEN_CHARS, normalize_text, normalized_tokens, title_is_eligible
from builders.relation_record import relation_record
from ground.artifacts import document_id_matches
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.fast_canonical import digest_finite

FORMAT = "relations_v1"
METHOD = "document_title_graph_v1"
PROJECTION_FIELDS = ("id", "title", "paragraph_text")
SAME_ENTITY = "same_entity"
SEMANTIC_RELATED = "semantic_related"
KINDS = (SAME_ENTITY, SEMANTIC_RELATED)

POLICY: dict[str, Any] = {
    "method": METHOD,
    "inputs": list(PROJECTION_FIELDS),
    "normalization": "unicode NFKC, casefold, \\w+ tokens joined by one space",
    "same_entity": {
        "match": "identical normalized titles",
        "neighbors_per_document": 4,
        "neighbor_order": "target id ascending",
        "assertion": "one per unordered pair, source = smaller id",
    },
    "semantic_related": {
        "text": "paragraph_text only, normalized, title excluded",
        "match": "whole normalized title, space-delimited",
        "eligible_titles": "non-empty, not all digits, several tokens or >= "
                           f"{MIN_SINGLE_TOKEN_CHARS} characters",
        "skip": "documents with the source's own normalized title",
        "candidate_order": "normalized title length descending, target id ascending",
        "targets_per_document": 8,
        "direction": "mentioning -> mentioned",
    },
    "edge_id": "edge- + digest([source, target, kind])",
    "evidence_ref": {
        "same_entity": "title-sha256:<digest(normalized title)>",
        "semantic_related": "document-sha256:<digest(source document)>:title-sha256:<digest(normalized title)>",
    },
}
SAME_ENTITY_NEIGHBORS = POLICY["same_entity"]["neighbors_per_document"]
MENTION_TARGETS = POLICY["semantic_related"]["targets_per_document"]


class GraphInputError(RefusedInput):
    """A projection the builder refuses: extra fields, duplicate ids, ids that do not match text."""


def project(source: dict) -> list[dict]:
    """The builder's only view of a source.json value: {id, title, paragraph_text}, sorted by id."""
    documents = [{key: doc[key] for key in PROJECTION_FIELDS} for doc in source["documents"]]
    return sorted(documents, key=lambda d: d["id"])


def build_relations(projection: list[dict], source_digest: str) -> dict:
    """The whole relations.json value for a projection (see docs/contracts.md)."""
    documents = _checked_projection(projection)
    return relations_file(METHOD, POLICY, KINDS, documents, _relations(documents), source_digest)


def relations_file(method: str, policy: dict, kinds: tuple[str, ...], documents: list[dict],
                   relations: list[dict], source_digest: str) -> dict:
    """The relations.json envelope every graph builder writes: its method and frozen policy, the
    projection and relations it produced, each with its digest, and counts per kind."""
    return {
        "format": FORMAT,
        "method": method,
        "policy": copy.deepcopy(policy),  # callers may mutate the value; the policy stays frozen
        "policy_digest": digest(policy),
        "source_digest": source_digest,
        "projection": documents,
        "projection_digest": digest(documents),
        "relations": relations,
        "relations_digest": digest(relations),
        "counts": {kind: sum(1 for r in relations if r["kind"] == kind) for kind in kinds},
    }


def merged(*kinds: list[dict]) -> list[dict]:
    """Relations of several kinds as one list sorted by id (a builder that adds a kind to another's
    relations: each kind digests its own name into its ids, so no two kinds' ids collide)."""
    edges = {edge["id"]: edge for relations in kinds for edge in relations}
    return [edges[key] for key in sorted(edges)]


def build_for_source(source: dict, source_digest: str) -> dict:
    """The relations file of a whole source.json value (the importer's graph stage)."""
    return build_relations(project(source), source_digest)


def rebuild(relations_file: dict) -> dict:
    """Rebuild a relations.json value from the projection and source digest it records."""
    if not isinstance(relations_file, dict) or "projection" not in relations_file or "source_digest" not in relations_file:
        raise GraphInputError("relations file has no projection or source_digest to rebuild from")
    return build_relations(relations_file["projection"], relations_file["source_digest"])


def verify_relations(relations_file: dict, source: dict | None = None) -> None:
    """Refuse a relations.json value that its own projection does not reproduce byte for byte,
    or (given the source) whose projection or source digest is not that source's."""
    if digest(rebuild(relations_file)) != digest(relations_file):
        raise GraphInputError("relations file differs from the rebuild of its own projection")
    if source is not None:
        if relations_file["source_digest"] != digest(source):
            raise GraphInputError("relations file source_digest is not the digest of the given source")
        if relations_file["projection"] != project(source):
            raise GraphInputError("relations file projection is not the projection of the given source")


def _checked_projection(projection: Any) -> list[dict]:
    if not isinstance(projection, list):
        raise GraphInputError("projection: expected a list of documents")
    seen: set[str] = set()
    for i, doc in enumerate(projection):
        if not isinstance(doc, dict):
            raise GraphInputError(f"projection[{i}]: expected an object")
        if set(doc) != set(PROJECTION_FIELDS):
            extra = sorted(set(doc) - set(PROJECTION_FIELDS))
            missing = sorted(set(PROJECTION_FIELDS) - set(doc))
            reason = f"unexpected field(s) {extra}" if extra else f"missing field(s) {missing}"
            raise GraphInputError(
                f"projection[{i}]: {reason}; the graph builder accepts exactly id, title, paragraph_text"
            )
        for key in PROJECTION_FIELDS:
            if not isinstance(doc[key], str):
                raise GraphInputError(f"projection[{i}].{key}: expected a string")
        if doc["id"] in seen:
            raise GraphInputError(f"projection[{i}].id: duplicate id {doc['id']!r}")
        seen.add(doc["id"])
        if not document_id_matches(doc["id"], doc["title"], doc["paragraph_text"]):
            raise GraphInputError(
                f"projection[{i}].id: {doc['id']!r} does not match the digest of its title and paragraph_text"
            )
    return sorted(({key: doc[key] for key in PROJECTION_FIELDS} for doc in projection),
                  key=lambda d: d["id"])


def _relations(documents: list[dict]) -> list[dict]:
    revision = digest(POLICY)
    titles: dict[str, list[str]] = defaultdict(list)
    own_title: dict[str, str] = {}
    for doc in documents:  # sorted by id, so every title's id list is ascending
        title = normalize_text(doc["title"])
        own_title[doc["id"]] = title
        titles[title].append(doc["id"])
    # titles, documents and edge keys hold strings only, so `digest_finite` gives `digest`'s value
    # (ground/fast_canonical.py) without a json.dumps call per item: 188,000 of them at full scale
    title_refs = {title: "title-sha256:" + digest_finite(title) for title in titles}
    index = TitleIndex(title for title in titles if title_is_eligible(title))

    edges: dict[tuple[str, str, str], dict] = {}
    for doc in documents:
        title = own_title[doc["id"]]
        for other in [x for x in titles[title] if x != doc["id"]][:SAME_ENTITY_NEIGHBORS]:
            source, target = sorted((doc["id"], other))
            _add(edges, source, target, SAME_ENTITY, title_refs[title], revision)
        mentioned = index.mentioned(normalized_tokens(doc["paragraph_text"]), title)
        candidates = _mention_targets(mentioned, titles)
        if candidates:
            document_ref = "document-sha256:" + digest_finite(doc) + ":"
            for t, target in candidates:
                _add(edges, doc["id"], target, SEMANTIC_RELATED, document_ref + title_refs[t], revision)
    return [edges[key] for key in sorted(edges, key=lambda k: edges[k]["id"])]


class TitleIndex:
    """Every eligible title, found by walking each paragraph's tokens once.

    From each token, the walk extends one token at a time while the run so far is the prefix of
    some title, so a common word costs one set lookup unless a title continues with the next
    word. The cost per paragraph is about its length, whatever the title vocabulary looks like
    (indexing each title under its rarest token instead degrades to scanning thousands of titles
    per paragraph when titles are made of common words, as in the synthetic corpus).
    """

    def __init__(self, eligible: Iterable[str]):
        self.titles = set(eligible)
        self.prefixes: set[str] = set()
        for title in self.titles:
            run = ""
            for token in title.split(" "):
                run = f"{run} {token}" if run else token
                self.prefixes.add(run)

    def mentioned(self, tokens: list[str], own: str) -> set[str]:
        """Titles other than `own` occurring as whole token runs in `tokens`."""
        titles, prefixes = self.titles, self.prefixes
        found = set()
        n = len(tokens)
        for i, token in enumerate(tokens):
            if token not in prefixes:
                continue
            run, j = token, i + 1
            while True:
                if run in titles and run != own:
                    found.add(run)
                if j == n:
                    break
                run = f"{run} {tokens[j]}"
                if run not in prefixes:
                    break
                j += 1
        return found


def _mention_targets(mentioned: set[str], titles: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The first MENTION_TARGETS (title, target) pairs by title length desc, then target id.

    Titles are taken longest first, one length at a time, until the cut is filled; within a
    length, only the first MENTION_TARGETS ids of each title can make it (ids ascend per title).
    """
    by_length: dict[int, list[str]] = defaultdict(list)
    for title in mentioned:
        by_length[len(title)].append(title)
    chosen: list[tuple[str, str]] = []
    for length in sorted(by_length, reverse=True):
        group = [(t, target) for t in by_length[length] for target in titles[t][:MENTION_TARGETS]]
        group.sort(key=lambda pair: pair[1])
        chosen.extend(group[:MENTION_TARGETS - len(chosen)])
        if len(chosen) == MENTION_TARGETS:
            break
    return chosen


def _add(edges: dict, source: str, target: str, kind: str, evidence: str, revision: str) -> None:
    key = (source, target, kind)
    if key in edges:
        return
    edges[key] = relation_record("edge-" + digest_finite([source, target, kind]), kind, source, target,
                                 origin="tool_observation", method=METHOD, revision=revision, evidence=evidence,
                                 model=None)
