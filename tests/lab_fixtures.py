"""Real lab processes for the server tests: started on port 0 in temp dirs, stopped cleanly."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evaluator.connection.client import LabClient
from evaluator.connection.lab_process import LabProcess, start_lab

_scopes = itertools.count(1)


class LabPool:
    """Starts labs under one base dir and guarantees they are stopped (exit code checked)."""

    def __init__(self, base: Path):
        self.base = base
        self.running: list[tuple[LabProcess, LabClient]] = []
        self._names = itertools.count(1)

    def start(self, dbdir: Path | None = None, reopen: bool = False, extra_args: tuple = ()) -> tuple[LabProcess, LabClient]:
        n = next(self._names)
        dbdir = dbdir or self.base / f"db{n}"
        process = start_lab(dbdir, self.base / f"access{n}.json", reopen=reopen, extra_args=extra_args)
        client = LabClient(process.access)
        self.running.append((process, client))
        return process, client

    def stop_all(self) -> list[int]:
        codes = []
        for process, client in self.running:
            client.close()
            if process.process.poll() is None:
                codes.append(process.stop())
        self.running.clear()
        return codes


@pytest.fixture
def lab_pool(tmp_path: Path) -> Iterator[LabPool]:
    pool = LabPool(tmp_path)
    yield pool
    assert all(code == 0 for code in pool.stop_all()), "a lab did not shut down cleanly"


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[tuple[LabProcess, LabClient]]:
    """One real lab per test module; tests isolate themselves with `fresh_scope`."""
    pool = LabPool(tmp_path_factory.mktemp("lab"))
    yield pool.start()
    assert pool.stop_all() == [0]


@pytest.fixture
def fresh_scope(lab) -> Iterator[Callable[[], LabClient]]:
    """A client bound to a never-used scope of the module's lab (own journal, own records)."""
    process, root = lab
    made: list[LabClient] = []

    def make() -> LabClient:
        scope = f"t{next(_scopes)}"
        client = LabClient({**process.access, "token": root.mint_credential(scope, 3600)["token"]}, scope=scope)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


# ---------------------------------------------------------------- valid bodies, built one way

SPACE = {"provider": "test", "model": "unit-vectors", "revision": "r1", "dimensions": 4}
PROVENANCE = {"origin": "tool_observation", "method": "test", "method_revision": "v1",
              "evidence_ref": "test:1", "model": None}


def memory_item(key: str, content: str | None = None, external_id: str | None = None, **metadata: str) -> dict:
    return {"idempotency_key": key, "external_id": external_id or key,
            "payload": {"content": content or f"memory {key}", "metadata": metadata}}


def embedding_item(key: str, record_id: str, revision: int = 1, vector: list | None = None,
                   space: dict | None = None) -> dict:
    return {"idempotency_key": key, "record_id": record_id, "revision": revision,
            "space": space or SPACE, "vector": vector if vector is not None else [1.0, 0.5, 0.25, 0.125]}


def relation_item(key: str, source: str, target: str, kind: str = "same_entity",
                  source_revision: int = 1, target_revision: int = 1, external_id: str | None = None,
                  **provenance) -> dict:
    return {"idempotency_key": key, "external_id": external_id or key, "kind": kind,
            "source": {"id": source, "revision": source_revision},
            "target": {"id": target, "revision": target_revision},
            "provenance": {**PROVENANCE, **provenance}}


def seed(client: LabClient, n: int = 3) -> list[str]:
    """n memories with one embedding each and a relation chain; returns the memory ids."""
    ids = [r["id"] for r in client.create_memories([memory_item(f"m{i}") for i in range(n)])["receipts"]]
    client.attach_embeddings([embedding_item(f"e{i}", rid, vector=[1.0, float(i), 0.0, 1.0])
                              for i, rid in enumerate(ids)])
    client.assert_relations([relation_item(f"r{i}", ids[i], ids[i + 1]) for i in range(n - 1)])
    return ids
