"""The inputs the validation workers of one host share (evaluator/verification/worker_inputs.py,
docs/scale.md): two workers of a local cluster map the same read-only files, a worker refuses a
shared file changed after the caller wrote it, and the packed arrays score exactly as the
per-document structures they replace."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from evaluator.inputs import InputMismatch, load_frozen
from evaluator.verification import recompute as rc
from evaluator.verification.dask_checks import WORKER_ATTRIBUTE, CheckerPlugin, ClusterChecks
from evaluator.verification.packed import PackedBm25, pack
from evaluator.verification.verify import Checker
from evaluator.verification.worker_inputs import open_shared, write_shared
from ground.files import load_json
from tests.evaluation_fixtures import built_inputs, prepared_lab

pytestmark = pytest.mark.heavy  # a prepared lab and local Dask clusters


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    prepared = prepared_lab(built_inputs(tmp_path_factory), tmp_path_factory.mktemp("shared-lab"))
    prepared.lab.stop()  # only its state is read here
    i = prepared.inputs
    frozen = load_frozen(i.protocol, i.fixture, i.relations, i.generation)
    return frozen, load_json(prepared.state, "state")


def _mapping(dask_worker) -> dict:
    """What backs this worker's cosine matrix: a read-only mapping of which file."""
    checker = next(iter(getattr(dask_worker, WORKER_ATTRIBUTE).values()))
    matrix = checker.cosine_index.matrix
    name = os.path.realpath(matrix.filename)
    stat = os.stat(name)
    mapped = any(line.rstrip().endswith(name) for line in open("/proc/self/maps"))
    return {"file": name, "inode": (stat.st_dev, stat.st_ino), "writeable": bool(matrix.flags.writeable),
            "mapped": mapped, "pid": os.getpid()}


def test_two_workers_map_the_same_read_only_file(inputs, tmp_path):
    frozen, state = inputs
    with ClusterChecks(frozen, state, workers=2, directory=tmp_path) as checks:
        seen = checks.client.run(_mapping)
        assert len(seen) == 2 and len({s["pid"] for s in seen.values()}) == 2
        assert len({s["inode"] for s in seen.values()}) == 1, seen  # one file, one inode, both workers
        assert all(s["mapped"] and not s["writeable"] for s in seen.values()), seen
        assert Path(next(iter(seen.values()))["file"]).is_relative_to(tmp_path)
        # the checks give what this process's own checker gives
        own = Checker(frozen, state)
        query = sorted(frozen.queries)[0]
        method = next(iter(frozen.protocol["methods"]))
        page = {"method": "nothing"}
        assert checks.check_all([(query, method, page, None)]) == \
            [[f.as_dict() for f in own.check_page(frozen.queries[query], method, page, None)]]
    assert list(tmp_path.iterdir()) == []  # the shared files go with the checks


def test_a_worker_refuses_a_shared_file_changed_after_it_was_written(inputs, tmp_path):
    frozen, state = inputs
    shared = write_shared(frozen, tmp_path / "inputs")
    open_shared(shared, frozen.digests)  # as written: accepted
    target = tmp_path / "inputs" / "matrix.npy"
    os.chmod(target, 0o644)
    data = bytearray(target.read_bytes())
    data[-1] ^= 1  # one bit of the last vector
    target.write_bytes(bytes(data))
    with pytest.raises(InputMismatch, match="matrix.npy: SHA-256 .* changed after it was written"):
        open_shared(shared, frozen.digests)
    # the same refusal on a real worker: its plugin's setup fails, so no checker is installed
    from ground.dask_scheduler import start_local

    cluster, client = start_local(1)
    try:
        with pytest.raises(Exception, match="changed after it was written"):
            client.register_plugin(CheckerPlugin("tampered", frozen, state, shared), name="lab-checker-tampered")
        held = client.run(lambda dask_worker: sorted(getattr(dask_worker, WORKER_ATTRIBUTE, {})))
        assert list(held.values()) == [[]]
    finally:
        client.close()
        cluster.close()
    # inputs other than the checked ones are refused before any file is read
    with pytest.raises(InputMismatch, match="other inputs than the checked ones .*fixture"):
        open_shared(shared, {**frozen.digests, "fixture": "0" * 64})


def test_packed_arrays_score_exactly_as_the_per_document_structures(inputs):
    frozen, _ = inputs
    documents = frozen.documents
    texts = {d: documents[d]["text"] for d in documents}
    packed = pack(frozen.doc_vectors, texts)
    old, new = rc.Bm25.build(texts), PackedBm25(list(texts), packed, texts.__getitem__)
    assert new.average_length == old.average_length
    for query in frozen.queries.values():
        a, b = old.scores(query["question"]), new.scores(query["question"])
        assert a.ids == b.ids and np.array_equal(a.present, b.present)
        assert a.array.tobytes() == b.array.tobytes()  # bit for bit
        for term in rc.bm25_tokens(query["question"]):
            assert new.idf(term) == old.idf(term) and new.term_frequencies[a.ids[0]] == old.term_frequencies[a.ids[0]]
    index = rc.CosineIndex({d: v.astype(np.float64) for d, v in frozen.doc_vectors.items()})
    mapped = rc.CosineIndex.of_rows(packed.vector_ids, packed.matrix, packed.norms)
    assert index.norms.tobytes() == mapped.norms.tobytes()
    for vector in list(frozen.query_vectors.values())[:5]:
        assert index.scores(vector).array.tobytes() == mapped.scores(vector).array.tobytes()


def test_a_local_cluster_serves_its_http_routes_on_a_free_loopback_port_without_a_warning():
    """Dask's scheduler serves a few HTTP routes even without its dashboard, by default on port 8787
    of every interface, warning inside the lab's output when that port is taken: the lab's local
    cluster asks for a free port on 127.0.0.1 instead."""
    import socket
    import warnings

    from ground.dask_scheduler import start_local

    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 8787))
        taken.listen()
    except OSError:
        pass  # taken by something else already: the same case
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cluster, client = start_local(1)
        try:
            host, port = cluster.scheduler.http_server.address, cluster.scheduler.http_server.port
        finally:
            client.close()
            cluster.close()
    taken.close()
    assert not [w for w in caught if "already in use" in str(w.message)]
    assert host == "127.0.0.1" and port != 8787
