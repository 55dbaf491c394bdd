"""Layout pin: a template protocol rebased onto a cohort's own files, whatever their layout.

The template's methods, profiles, budgets and evaluation are kept (dataset_pin.rebase); the files
are pinned by name, SHA-256 and size; the selection takes the test split from the question file,
by counts or "all", and a development split from the same file only when counts are given for one.
Without a development split the cohort is test-only: the protocol says so in `test_only`, and each
method warms up on the corpus warm-up query (ground.artifacts.WARMUP_CORPUS) instead of the
smallest development query (docs/hipporag.md).

The registry uses it for the HippoRAG cohorts (hashes and sizes from the published files, or read
from a shared sample and checked against its MANIFEST.json); `lab protocol new` uses
`layout_protocol` for a user's own files (protocols/new.py).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

from ground.artifacts import CORPUS_ROLE, QUESTIONS_ROLE, WARMUP_CORPUS, WARMUP_DEVELOPMENT
from ground.canonical import sha256_file
from ground.errors import RefusedInput
from ground.files import load_json
from protocols.derivations import Inputs, Skipped
from protocols.derivations.dataset_pin import rebase
from protocols.published import FIELD as PUBLISHED_COHORT

TEST_ONLY = ("No development split: every question of the cohort is measured. Methods and profiles were "
             "designed on other rows (the shared samples' development rows), never on these; each method warms "
             "up once on the corpus warm-up query (evaluation.warmup), which is no question of the cohort.")


def layout_protocol(template: dict, version: str, title: str, dataset: dict, row_format: str | None,
                    files: dict, test_counts: dict | str, development_counts: dict | str | None = None,
                    test_only: str = TEST_ONLY, published_cohort: dict | None = None) -> dict:
    """The template rebased onto `files` (role -> {name, sha256, bytes}; the questions under
    "questions", a corpus under "corpus"): test (and development) drawn from the question file."""
    splits = {"test": {"source": QUESTIONS_ROLE, "counts": test_counts}}
    if development_counts is not None:
        splits["development"] = {"source": QUESTIONS_ROLE, "counts": development_counts}
    rebased = rebase(template, version, title, dataset, files, {}, row_format)
    protocol: dict = {}
    for key, value in rebased.items():
        protocol[key] = value
        if key == ("row_format" if "row_format" in rebased else "title"):
            if development_counts is None:
                protocol["test_only"] = test_only
            if published_cohort is not None:
                protocol[PUBLISHED_COHORT] = dict(published_cohort)
    selection = protocol["selection"]
    protocol["selection"] = {**selection, "order": list(splits),
                             "splits": {name: {"source": s["source"], "counts": copy.deepcopy(s["counts"])}
                                        for name, s in splits.items()}}
    evaluation = copy.deepcopy(protocol["evaluation"])
    evaluation["split"] = "test"
    evaluation["warmup"] = WARMUP_DEVELOPMENT if development_counts is not None else WARMUP_CORPUS
    protocol["evaluation"] = evaluation
    return protocol


def file_pin(path: Path) -> dict:
    """{name, sha256, bytes} of a file, computed here."""
    return {"name": path.name, "sha256": sha256_file(path), "bytes": path.stat().st_size}


@dataclass(frozen=True)
class LayoutPin:
    title: str
    dataset: dict  # name, license, attribution
    row_format: str
    files: dict  # role -> {"name"} and, unless `sample` is given, "sha256" and "bytes"
    sample: str | None = None  # a shared sample folder: hashes and sizes computed, checked against MANIFEST.json
    test_counts: dict | str = "all"
    published_cohort: dict | None = None
    test_only: str = TEST_ONLY
    development_counts: dict | None = field(default=None)

    kind = "layout pin"

    def summary(self) -> str:
        names = " + ".join(entry["name"] for entry in self.files.values())
        where = f"shared/data/{self.sample}" if self.sample else "pinned by hash and size"
        return f"layout pin ({self.row_format}): {names}, {where}"

    def derive(self, parent: dict, version: str, inputs: Inputs | None = None) -> dict:
        files = self.sample_files(inputs) if self.sample else {role: dict(e) for role, e in self.files.items()}
        return layout_protocol(parent, version, self.title, self.dataset, self.row_format, files, self.test_counts,
                               self.development_counts, self.test_only, self.published_cohort)

    def sample_files(self, inputs: Inputs | None) -> dict:
        """Each file's name, SHA-256 and size computed from the shared sample; refused when its
        MANIFEST.json states another hash or size."""
        if inputs is None:
            raise RefusedInput("a sample layout pin reads the shared data: give its folder")
        if self.sample is None:
            raise RefusedInput(f"{self.title}: this layout pin names no shared sample to read")
        folder = inputs.data_dir / self.sample
        if not folder.is_dir():
            raise Skipped(f"{folder} is absent (the shared samples live only in ../shared, never in this repo)")
        stated = load_json(folder / "MANIFEST.json", "sample manifest").get("files", {})
        files = {}
        for role, entry in self.files.items():
            path = folder / entry["name"]
            if not path.is_file():
                raise RefusedInput(f"sample file not found: {path}")
            pin = file_pin(path)
            want = stated.get(entry["name"], {})
            if (want.get("sha256"), want.get("bytes")) != (pin["sha256"], pin["bytes"]):
                raise RefusedInput(f"{path} has {pin['bytes']} bytes and SHA-256 {pin['sha256']}; its MANIFEST.json "
                                   f"says {want.get('bytes')} bytes and {want.get('sha256')}")
            files[role] = pin
        return files


__all__ = ["CORPUS_ROLE", "QUESTIONS_ROLE", "LayoutPin", "TEST_ONLY", "file_pin", "layout_protocol"]
