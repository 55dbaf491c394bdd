"""Suite: several datasets' protocols pooled under one contrast (protocols/suite.py, docs/suites.md).

The suite pins each dataset's protocol by file name and by the digest computed here from the
protocol it reads (`inputs.protocol`: the committed file, or for `lab protocol suite` a file of
another folder), so no digest is ever typed by hand. Every contrast's methods and metric must be
in every pinned protocol.
"""

from __future__ import annotations

from dataclasses import dataclass

from ground.canonical import digest
from ground.errors import RefusedInput
from protocols.derivations import Inputs
from protocols.suite import SUITE_FORMAT, check_contrasts, validate_suite


@dataclass(frozen=True)
class SuitePin:
    title: str
    datasets: tuple[tuple[str, str], ...]  # (dataset name, protocol file name), in suite order
    primary_contrast: dict
    pooling: dict
    seed: int
    secondary_contrasts: tuple[dict, ...] = ()

    kind = "suite"

    def summary(self) -> str:
        return f"suite over {', '.join(file.removesuffix('.json') for _, file in self.datasets)}"

    def derive(self, parent: None, version: str, inputs: Inputs | None = None) -> dict:
        if inputs is None:
            raise RefusedInput("a suite reads its datasets' protocols: give where they are")
        protocols = {file: inputs.protocol(file) for _, file in self.datasets}
        suite = {"format": SUITE_FORMAT, "suite_version": version, "title": self.title,
                 "datasets": [{"name": name, "protocol": file, "protocol_digest": digest(protocols[file])}
                              for name, file in self.datasets],
                 "primary_contrast": dict(self.primary_contrast), "pooling": dict(self.pooling), "seed": self.seed}
        if self.secondary_contrasts:
            suite["secondary_contrasts"] = [dict(contrast) for contrast in self.secondary_contrasts]
        validate_suite(suite)
        for i, (name, file) in enumerate(self.datasets):
            check_contrasts(suite, file, protocols[file], f"suite {version}: datasets[{i}] ({name})")
        return suite
