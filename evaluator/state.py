"""The prepare state file: what was written to the lab, saved atomically under an exclusive lock.

The state binds a lab scope to one fixture and one graph: document -> record map, embedding binding
receipts, relation ids, the digests of the inputs and the batches done. It is what evaluate trusts
to translate record ids back to document ids, so it is verified against the lab before use.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict, cast

from ground.errors import RefusedInput
from ground.files import load_json, save

STATE_FORMAT = "lab_prepare_state_v1"


class StateError(RefusedInput):
    """A state file that is missing, locked, a symlink, or bound to other inputs."""


class State(TypedDict):
    format: str
    status: str  # "in_progress" until every write is read back, then "complete"
    lab: dict  # {lab_id, scope, journal_id}
    inputs: dict  # {protocol, fixture, relations} digests
    space: dict
    space_id: str
    memories: dict  # document id -> {"id", "revision"}
    bindings: dict  # document id -> embedding receipt
    relations: dict  # edge id (relations.json) -> {"id", "revision"}
    batches: dict  # stage -> batches done
    fence: dict | None  # the fence after the last write (complete states only)


def new_state(lab: dict, inputs: dict, space: dict, space_id: str) -> State:
    return State(format=STATE_FORMAT, status="in_progress", lab=lab, inputs=inputs, space=space,
                 space_id=space_id, memories={}, bindings={}, relations={},
                 batches={"memories": 0, "embeddings": 0, "relations": 0}, fence=None)


def refuse_symlink(path: Path, what: str) -> None:
    if path.is_symlink():
        raise StateError(f"{what} {path} is a symbolic link; refusing to follow it")


class StateLock:
    """An exclusive, non-blocking fcntl lock on `<state>.lock`, held while the state may change."""

    def __init__(self, state_path: str | Path):
        self.path = Path(str(state_path) + ".lock")
        self.fd: int | None = None

    def __enter__(self) -> "StateLock":
        refuse_symlink(self.path, "state lock file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            self.fd = None
            raise StateError(f"state file {self.path} is locked by another prepare") from None
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def load_state(path: str | Path) -> State:
    path = Path(path)
    refuse_symlink(path, "state file")
    value = load_json(path, "state file")
    if not isinstance(value, dict) or value.get("format") != STATE_FORMAT:
        raise StateError(f"state file {path}: format is not {STATE_FORMAT}")
    return cast(State, value)  # its fields are read where they are used


def save_state(path: str | Path, state: State) -> None:
    refuse_symlink(Path(path), "state file")
    save(path, state)


def record_map(state: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """(document id -> record id, record id -> document id); a record mapped twice is refused."""
    forward = {doc: entry["id"] for doc, entry in state["memories"].items()}
    backward = {rid: doc for doc, rid in forward.items()}
    if len(backward) != len(forward):
        raise StateError("state maps two documents to one record")
    return forward, backward
