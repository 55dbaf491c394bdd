"""Dataset pins: a template protocol rebased onto another dataset's files.

The template's methods, budgets, profiles and evaluation are kept, key for key and in order; the
identity (version, title), the dataset (name, licence, attribution), the pinned source files and
the selection's splits are replaced, and `expected_ids` is cleared (a new cohort pins none). A row
format other than the template's is written right after the title, with its selection version.

Two steps differ only in where the file hashes come from:
- a sample pin reads them from a shared sample (../shared/data/<sample>/): the file's SHA-256 is
  computed here and must equal the one its MANIFEST.json states, so no hash is typed by hand;
- a dataset pin takes them as data (the synthetic corpus, whose generator lives in importer/:
  tests/importer/test_synthetic.py checks its default output has these hashes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ground.artifacts import ROW_FORMATS
from ground.canonical import sha256_file
from ground.errors import RefusedInput
from ground.files import load_json
from protocols.derivations import Inputs, Skipped


def rebase(template: dict, version: str, title: str, dataset: dict, source_files: dict, splits: dict,
           row_format: str | None) -> dict:
    """The template with identity, dataset, files and splits replaced; key order kept."""
    replaced = {"protocol_version": version, "title": title, "dataset": dict(dataset),
                "source_files": {role: dict(entry) for role, entry in source_files.items()}}
    protocol: dict = {}
    for key, value in template.items():
        if key == "row_format" and row_format is not None:
            continue  # written after the title below
        protocol[key] = replaced.get(key, value)
        if key == "title" and row_format is not None:
            protocol["row_format"] = row_format
    selection = dict(protocol["selection"])
    if row_format is not None:
        selection["version"] = ROW_FORMATS[row_format].selection_version
    selection["splits"] = {name: {"source": split["source"], "counts": dict(split["counts"])}
                           for name, split in splits.items()}
    selection["expected_ids"] = None
    protocol["selection"] = selection
    return protocol


@dataclass(frozen=True)
class DatasetPin:
    title: str
    dataset: dict  # name, license, attribution
    source_files: dict  # role -> {"name", "sha256"}
    splits: dict  # split -> {"source": role, "counts": {stratum: n}}
    row_format: str | None = None  # None: the template's

    kind = "dataset pin"

    def summary(self) -> str:
        return f"dataset pin: {', '.join(entry['name'] for entry in self.source_files.values())}"

    def derive(self, parent: dict, version: str, inputs: Inputs | None = None) -> dict:
        return rebase(parent, version, self.title, self.dataset, self.source_files, self.splits, self.row_format)


@dataclass(frozen=True)
class SamplePin:
    sample: str  # the sample's folder in the shared data
    manifest_dataset: str  # the `dataset` its MANIFEST.json must state
    row_format: str
    title: str
    dataset: dict  # name, license, attribution (the MANIFEST's provenance is appended)
    splits: dict  # split -> {"source": "dev", "counts": {stratum: n}}

    kind = "sample pin"

    def summary(self) -> str:
        return f"sample pin: shared/data/{self.sample} (hash checked against its MANIFEST.json)"

    def derive(self, parent: dict, version: str, inputs: Inputs | None = None) -> dict:
        if inputs is None:
            raise RefusedInput("a sample pin reads the shared data: give its folder")
        name, sha256, provenance = manifest_file(inputs.data_dir / self.sample, self.manifest_dataset)
        dataset = {**self.dataset, "attribution": f"{self.dataset['attribution']}. Sample rows: {provenance}."}
        return rebase(parent, version, self.title, dataset, {"dev": {"name": name, "sha256": sha256}},
                      self.splits, self.row_format)


def manifest_file(sample_dir: Path, dataset: str) -> tuple[str, str, str]:
    """(file name, raw SHA-256 computed here, provenance) of a shared sample; skipped when the sample
    is absent, refused when its file's hash or dataset contradicts its MANIFEST.json."""
    if not sample_dir.is_dir():
        raise Skipped(f"{sample_dir} is absent (the shared samples live only in ../shared, never in this repo)")
    manifest = load_json(sample_dir / "MANIFEST.json", "sample manifest")
    if manifest.get("dataset") != dataset:
        raise RefusedInput(f"{sample_dir}/MANIFEST.json describes dataset {manifest.get('dataset')!r}, not {dataset!r}")
    path = sample_dir / manifest["file"]
    if not path.is_file():
        raise RefusedInput(f"sample file not found: {path}")
    actual = sha256_file(path)
    if actual != manifest["sha256"]:
        raise RefusedInput(f"{path} has SHA-256 {actual}, its MANIFEST.json says {manifest['sha256']}")
    return manifest["file"], actual, manifest["provenance"]
