"""Suites: several dataset protocols pooled under one contrast declared before any campaign runs.

A suite file (`protocols/frozen/suites/suite-*.json`, format `graph_evaluation_suite_v1`) pins each dataset's
protocol by file name and digest, and declares the pooled primary contrast (candidate, baseline,
metric), the pooling rule (units resampled within each dataset: queries or clusters; datasets
weighted equally or by query count), the resamples, confidence, permutations and the seed.
docs/suites.md describes the format and the pooled statistics; evaluator/numbers/pooling.py
computes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ground.canonical import digest
from ground.errors import RefusedInput
from ground.fields import Fields, join
from ground.files import load_validated
from protocols.committed import suite_member
from protocols.schema import MIN_PERMUTATIONS, ProtocolError, load_protocol

SUITE_FORMAT = "graph_evaluation_suite_v1"
POOLING_RULES = ("stratified_paired_bootstrap_v1",)
UNITS = ("query", "cluster")
WEIGHTS = ("equal", "query_count")
SUITE_KEYS = ("format", "suite_version", "title", "datasets", "primary_contrast", "pooling", "seed")
POOLING_KEYS = ("rule", "unit", "weights", "resamples", "confidence", "permutations")
# optional: further pooled contrasts declared with the primary one, labelled "secondary" (reported
# beside it, never instead of it; suite-graph-v3 declares one, docs/graph-v3.md)
OPTIONAL_SUITE_KEYS = ("secondary_contrasts",)


class SuiteError(RefusedInput):
    """A suite file that is missing, malformed, or pins a protocol that does not hold."""


def load_suite(path: str | Path) -> dict:
    """Read and validate a suite file (shape only; `pinned_protocols` checks the protocols)."""
    return load_validated(path, "suite", validate_suite, SuiteError)


def validate_suite(value: Any) -> dict:
    f = Fields(SuiteError)
    f.obj(value, "", SUITE_KEYS, optional=OPTIONAL_SUITE_KEYS)
    f.string(value["format"], "format", allowed=[SUITE_FORMAT])
    f.string(value["suite_version"], "suite_version")
    f.string(value["title"], "title")
    datasets = f.array(value["datasets"], "datasets", nonempty=True)
    for i, entry in enumerate(datasets):
        path = join("datasets", i)
        f.obj(entry, path, ("name", "protocol", "protocol_digest"))
        f.string(entry["name"], join(path, "name"))
        name = f.string(entry["protocol"], join(path, "protocol"))
        # looked up beside the suite file; a path here could point anywhere
        if "/" in name or "\\" in name or name in (".", ".."):
            f.fail(join(path, "protocol"), f"must be a plain file name beside the suite, got {name!r}")
        f.hex64(entry["protocol_digest"], join(path, "protocol_digest"))
    f.unique([d["name"] for d in datasets], "datasets.name")
    f.unique([d["protocol_digest"] for d in datasets], "datasets.protocol_digest")
    contrast = f.obj(value["primary_contrast"], "primary_contrast", ("candidate", "baseline", "metric", "label"))
    for key in ("candidate", "baseline", "metric"):
        f.string(contrast[key], join("primary_contrast", key))
    f.string(contrast["label"], "primary_contrast.label", allowed=["confirmatory"])
    if contrast["candidate"] == contrast["baseline"]:
        f.fail("primary_contrast.baseline", "must differ from the candidate")
    for i, secondary in enumerate(f.array(value.get("secondary_contrasts", []), "secondary_contrasts")):
        path = join("secondary_contrasts", i)
        f.obj(secondary, path, ("candidate", "baseline", "metric", "label"))
        for key in ("candidate", "baseline", "metric"):
            f.string(secondary[key], join(path, key))
        f.string(secondary["label"], join(path, "label"), allowed=["secondary"])
        if secondary["candidate"] == secondary["baseline"]:
            f.fail(join(path, "baseline"), "must differ from the candidate")
    pooling = f.obj(value["pooling"], "pooling", POOLING_KEYS)
    f.string(pooling["rule"], "pooling.rule", allowed=POOLING_RULES)
    f.string(pooling["unit"], "pooling.unit", allowed=UNITS)
    f.string(pooling["weights"], "pooling.weights", allowed=WEIGHTS)
    f.integer(pooling["resamples"], "pooling.resamples", minimum=1)
    confidence = f.number(pooling["confidence"], "pooling.confidence")
    if not 0.0 < confidence < 1.0:
        f.fail("pooling.confidence", f"must lie strictly between 0 and 1, got {confidence}")
    f.integer(pooling["permutations"], "pooling.permutations", minimum=MIN_PERMUTATIONS)
    f.integer(value["seed"], "seed", minimum=0)
    return value


def pinned_protocols(suite: dict, suite_path: str | Path) -> dict[str, dict]:
    """Each dataset's protocol, read beside the suite file, validated, with the pinned digest, and
    holding the contrast's two methods and its metric. Keyed by dataset name, in suite order."""
    out = {}
    for i, entry in enumerate(suite["datasets"]):
        where = f"suite {suite_path}: datasets[{i}] ({entry['name']})"
        try:
            protocol = load_protocol(suite_member(suite_path, entry["protocol"]))
        except ProtocolError as exc:
            raise SuiteError(f"{where}: {exc}") from None
        if digest(protocol) != entry["protocol_digest"]:
            raise SuiteError(f"{where}: {entry['protocol']} has digest {digest(protocol)}, the suite pins "
                             f"{entry['protocol_digest']}")
        check_contrasts(suite, entry["protocol"], protocol, where)
        out[entry["name"]] = protocol
    return out


def check_contrasts(suite: dict, name: str, protocol: dict, where: str) -> None:
    """Refuse a pinned protocol (file `name`) that lacks a contrast's two methods or its metric."""
    for contrast in [suite["primary_contrast"]] + list(suite.get("secondary_contrasts", [])):
        for role in ("candidate", "baseline"):
            if contrast[role] not in protocol["methods"]:
                raise SuiteError(f"{where}: the {role} {contrast[role]!r} is not a method of {name}")
        if contrast["metric"] not in protocol["evaluation"]["contrast_metrics"]:
            raise SuiteError(f"{where}: metric {contrast['metric']!r} is not among the contrast metrics of {name}")
