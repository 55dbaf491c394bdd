"""The toy family's fixture section, `title_vectors`: every passage's title encoded by the fixture's
encoder (docs/extend-a-method.md, step 7).

tests/lab/test_extend_a_method.py writes this file as builders/embedding/sections/<family>.py (`titlesim`)
in a copy of the repository. `lab embed build --title-vectors` builds it; the lab holds each title as a
node memory with its vector, linked to its passage by a `titled` relation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from builders.embedding.sections.section import LabRecords, Section, SectionInputs
from builders.embedding.vectors import (
    check_vector_entries,
    decode_vector,
    encode_vector,
    entry_ids,
    normalize_rows,
    vector_sha256,
)
from ground.fields import Fields, join
from protocols.families.lists.titlesim import LENGTH_REF, TITLE, TITLED
from protocols.families.lists.titlesim import SECTION as NAME
from protocols.route import GRAPH_NODE


def build(inputs: SectionInputs) -> dict:
    documents = inputs.source["documents"]
    ids = [d["id"] for d in documents]
    rows = normalize_rows(np.asarray(inputs.encode([d["title"] for d in documents], f"{NAME} titles"), dtype=np.float32),
                          ids, NAME)
    return {"titles": [{"id": i, "vector": encode_vector(row), "vector_sha256": vector_sha256(row)}
                       for i, row in zip(ids, rows)]}


def check_shape(f: Fields, value: Any, dimensions: int) -> None:
    entry = f.obj(value, NAME, ("titles",))
    entries = f.array(entry["titles"], join(NAME, "titles"))
    ids = entry_ids(f, entries, join(NAME, "titles"))
    check_vector_entries(f, entries, join(NAME, "titles"), ids, dimensions)


def title_key(document_id: str) -> str:
    return "~t:" + hashlib.sha256(document_id.encode("utf-8")).hexdigest()[:40]


def records(fixture: Mapping, relations: Mapping) -> LabRecords:
    out = LabRecords()
    title_of = {d["id"]: d["title"] for d in fixture["source"]["documents"]}
    for entry in fixture[NAME]["titles"]:
        key, title = title_key(entry["id"]), title_of[entry["id"]]
        out.payloads[key] = {"content": title, "metadata": {GRAPH_NODE: TITLE}}
        out.vectors[key] = decode_vector(entry["vector"])
        out.receipts[key] = entry["vector_sha256"]
        out.edges.append({"id": f"{TITLED}:" + key[3:], "kind": TITLED, "source": entry["id"], "target": key,
                          "provenance": {"origin": "tool_observation", "method": "title_vectors_v1",
                                         "method_revision": "1", "evidence_ref": f"{LENGTH_REF}{len(title)}",
                                         "model": None}})
    out.edges.sort(key=lambda edge: edge["id"])
    return out


def failures(fixture: Mapping, relations: Mapping) -> list[str]:
    ids = [e["id"] for e in fixture[NAME]["titles"]]
    want = [d["id"] for d in fixture["source"]["documents"]]
    return [] if ids == want else [f"{NAME}.titles are not the source's {len(want)} documents in order"]


SECTION = Section(NAME, help="also encode every passage's title (the titlesim toy family's input)", build=build,
                  check_shape=check_shape, records=records, failures=failures)
