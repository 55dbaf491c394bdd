"""Derivation steps: how a declared protocol or suite is made from its parent (protocols/registry.py).

A step is a frozen dataclass: its fields are its parameters, plain data that `lab protocol show`
prints. Its one method, `derive(parent, version, inputs)`, returns the new value (the caller
validates it and encodes it with `ground.files.encode`); it reads nothing beyond its parent and
`inputs`, and writes nothing. One module per step:

| step | module | makes |
|---|---|---|
| root | `root.py` | nothing: a protocol written by hand, pinned by its file's SHA-256 |
| sample pin | `dataset_pin.py` | a template rebased onto a shared sample (file hash read and checked against its MANIFEST.json) |
| dataset pin | `dataset_pin.py` | a template rebased onto files whose hashes are given (the synthetic corpus) |
| full cohort | `full_cohort.py` | a split widened to every eligible row, its ids pinned from the dev metadata |
| add a method family | `method_family.py` | the parent plus methods, their frozen profiles (protocols/families/), contrast and analyses |
| embedding twin | `embedding_twin.py` | the parent with its embedding space pinned (and a threshold's profile swapped for the one calibrated for it) |
| ask a question | `question.py` | the parent with another primary contrast, read first on another metric |
| deeper evaluation | `deeper_evaluation.py` | the parent judged deeper: `evaluation.depth`, every method's limit, more recall cutoffs |
| design cohort | `design_cohort.py` | the parent's test split kept, every other row as development |
| suite | `suite_pin.py` | a suite file pinning its datasets' protocols by digest |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Inputs:
    """What a step may read besides its parent.

    `data_dir` is the shared data folder (../shared/data: each sample's folder with its
    MANIFEST.json, the MuSiQue dev metadata); `protocol` loads another protocol by file name (a
    suite's datasets), validated."""

    data_dir: Path
    protocol: Callable[[str], dict]


class Skipped(Exception):
    """A step's input is absent on this machine (the shared data): reported with the reason, not failed."""
