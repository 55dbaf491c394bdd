"""The record `lab run` keeps in its run directory (run.json): how the run was started, and each
stage as it finishes, so `lab run --resume RUN_DIR` continues with the same inputs from the first
stage not finished. Saved whole after every stage (`save` in ground/files.py: written, then renamed)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from ground.errors import RefusedInput
from ground.files import load_json, save

FORMAT = "lab-run-record-v1"


@dataclass
class RunRecord:
    protocol: str  # the file `lab run` was given (its content is RUN_DIR/protocol.json)
    data_dir: str | None  # absolute; None: lab synth's default files, generated into RUN_DIR/data
    graph_dir: str | None
    native: bool
    external: dict[str, str]
    done: list[str] = field(default_factory=list)

    @classmethod
    def started(cls, protocol: Path, data_dir: Path | None, graph_dir: Path | None, native: bool,
                external: dict[str, str]) -> "RunRecord":
        absolute = lambda path: None if path is None else str(Path(path).resolve())  # noqa: E731
        return cls(str(Path(protocol).resolve()), absolute(data_dir), absolute(graph_dir), native, dict(external))

    @classmethod
    def load(cls, path: Path) -> "RunRecord":
        value = load_json(path, "run record")
        if not isinstance(value, dict) or value.get("format") != FORMAT:
            raise RefusedInput(f"{path} is not a {FORMAT} record")
        try:
            return cls(**{k: v for k, v in value.items() if k != "format"})
        except TypeError as exc:
            raise RefusedInput(f"{path} is not a {FORMAT} record: {exc}") from None

    def save(self, path: Path) -> None:
        save(path, {"format": FORMAT, **asdict(self)})
