"""The frozen inputs a validation worker needs, written once by the caller and read by every worker
of the host (docs/scale.md, "Workers that share their inputs").

The caller (evaluate, audit: the process that loaded and cross-checked the inputs) writes into a
fresh directory beside the run:

- the packed arrays (evaluator/verification/packed.py) as `.npy` files, which every worker maps
  read-only (`np.load(mmap_mode="r")`): the pages of a file mapped by several processes are held
  once by the kernel, so the document matrix and the BM25 postings cost one copy per host;
- `ids.json`, the document ids of the arrays' rows and the BM25 terms;
- `view.json`, the rest of what a checker reads: the protocol, the fixture without its document
  vectors (the matrix replaces their base64 text) and the relations without their projection (only
  the import's rebuild reads it, and the caller has done that).

A `Shared` reference (directory, manifest, manifest digest) goes to the workers. The manifest names
the digests of the inputs the files were derived from and the SHA-256 of every file; a worker
refuses the files unless the manifest is the caller's (its digest), its inputs are the ones the
caller cross-checked and every file's bytes hash to the manifest's value, so a file changed after
the caller wrote it is refused with its name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from evaluator.inputs import Frozen, InputMismatch, frozen_view
from evaluator.verification.packed import ARRAYS, Packed, pack
from ground.canonical import digest, sha256_file

FORMAT = 1
INPUTS = ("protocol", "source", "fixture", "relations")


@dataclass(frozen=True)
class Shared:
    """Where a caller's shared checker inputs are and what they must hash to."""

    directory: str
    manifest: dict
    digest: str


def view_of(frozen: Frozen) -> dict:
    """What a worker's checker reads besides the arrays (see the module docstring)."""
    fixture = {k: v for k, v in frozen.fixture.items() if k != "documents"}
    fixture["documents"] = [{k: v for k, v in entry.items() if k != "vector"} for entry in frozen.fixture["documents"]]
    relations = {k: v for k, v in frozen.relations.items() if k != "projection"}
    return {"protocol": frozen.protocol, "fixture": fixture, "relations": relations}


def write_shared(frozen: Frozen, directory: Path) -> Shared:
    """Writes the packed arrays, ids and view of `frozen` (cross-checked) into `directory` (created
    here, read-only files); returns the reference the workers get."""
    directory = Path(directory)
    directory.mkdir(mode=0o700)
    documents = frozen.documents
    packed = pack(frozen.doc_vectors, {d: documents[d]["text"] for d in documents})
    del documents
    files: dict[str, str] = {}

    def written(name: str, path: Path) -> None:
        os.chmod(path, 0o444)
        files[name] = sha256_file(path)

    for name, array in packed.arrays().items():
        path = directory / f"{name}.npy"
        np.save(path, np.ascontiguousarray(array), allow_pickle=False)
        written(f"{name}.npy", path)
    for name, value in (("ids.json", {"vector_ids": packed.vector_ids, "text_ids": packed.text_ids,
                                      "terms": packed.terms}),
                        ("view.json", view_of(frozen))):
        path = directory / name
        path.write_bytes(orjson.dumps(value))
        written(name, path)
    manifest = {"format": FORMAT, "inputs": {k: frozen.digests.get(k) for k in INPUTS}, "files": files}
    return Shared(str(directory), manifest, digest(manifest))


def open_shared(shared: Shared, digests: Mapping[str, Any]) -> tuple[Frozen, Packed]:
    """The frozen view and the mapped arrays of `shared`, refused (InputMismatch) unless they are
    the files the caller wrote from the inputs with `digests`."""
    if digest(shared.manifest) != shared.digest:
        raise InputMismatch("shared checker inputs: the manifest is not the one the caller wrote")
    if shared.manifest.get("format") != FORMAT:
        raise InputMismatch(f"shared checker inputs: format {shared.manifest.get('format')!r}, this checkout reads {FORMAT}")
    derived = shared.manifest["inputs"]
    differing = sorted(k for k in INPUTS if derived.get(k) != digests.get(k))
    if differing:
        raise InputMismatch(f"shared checker inputs: derived from other inputs than the checked ones "
                            f"({', '.join(differing)} digest)")
    directory = Path(shared.directory)
    if not directory.is_dir():
        raise InputMismatch(f"shared checker inputs: no directory {directory} on this host (a worker on another "
                            f"machine gets the inputs themselves: join it over tls://)")
    for name, want in sorted(shared.manifest["files"].items()):
        have = sha256_file(directory / name)
        if have != want:
            raise InputMismatch(f"shared checker input {directory / name}: SHA-256 {have} is not the {want} the "
                                f"caller wrote: the file changed after it was written; refusing it")
    arrays = {name: np.load(directory / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in ARRAYS}
    ids = orjson.loads((directory / "ids.json").read_bytes())
    view = orjson.loads((directory / "view.json").read_bytes())
    frozen = frozen_view(view["protocol"], view["fixture"], view["relations"], digests)
    packed = Packed(vector_ids=ids["vector_ids"], text_ids=ids["text_ids"], terms=ids["terms"], **arrays)
    return frozen, packed
