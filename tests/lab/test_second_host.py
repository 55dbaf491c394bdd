"""A second host that is a host (docs/scale.md, "A cluster of several machines"): two network
namespaces joined by a veth pair, each with its own address, the Dask scheduler (and the client)
in one, a worker in the other, TLS with certificates made here. Over them: an embedding build,
whose fixture must be the in-process bytes, and an audit of a small campaign's report, whose every
page check runs on the other host's worker. Skipped, with the reason, where namespaces cannot be
made (no `ip`, no privilege). The namespaces are removed whatever happens.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ground.files import save
from tests.builders.test_embedding import make_source
from tests.conftest import lab_cli
from tests.evaluation_fixtures import built_inputs, prepared_lab

pytestmark = pytest.mark.heavy

REPO = Path(__file__).resolve().parents[2]
SUBNET = "10.231.{}.{}"  # a private /24 no real interface here uses; traffic stays on the veth pair


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True)


def _openssl(*args, cwd: Path) -> None:
    subprocess.run(["openssl", *map(str, args)], cwd=cwd, check=True, capture_output=True)


class TwoHosts:
    """Namespaces S (scheduler, client) and W (worker) on a veth pair; TLS certificates for each."""

    def __init__(self, root: Path):
        self.root = root
        tag = f"{os.getpid() % 10000}"
        self.s, self.w = f"labS{tag}", f"labW{tag}"
        octet = 1 + os.getpid() % 250
        self.s_addr, self.w_addr = SUBNET.format(octet, 1), SUBNET.format(octet, 2)
        self.processes: list[subprocess.Popen] = []
        made = _ip("netns", "add", self.s)
        if made.returncode != 0:
            pytest.skip(f"cannot create a network namespace here: {made.stderr.strip()}")
        try:
            self._link(tag)
            self._certificates()
        except BaseException:
            self.close()
            raise

    def _link(self, tag: str) -> None:
        for args in (("netns", "add", self.w),
                     ("link", "add", f"vs{tag}", "type", "veth", "peer", "name", f"vw{tag}"),
                     ("link", "set", f"vs{tag}", "netns", self.s), ("link", "set", f"vw{tag}", "netns", self.w),
                     ("-n", self.s, "addr", "add", f"{self.s_addr}/24", "dev", f"vs{tag}"),
                     ("-n", self.w, "addr", "add", f"{self.w_addr}/24", "dev", f"vw{tag}"),
                     ("-n", self.s, "link", "set", f"vs{tag}", "up"), ("-n", self.w, "link", "set", f"vw{tag}", "up"),
                     ("-n", self.s, "link", "set", "lo", "up"), ("-n", self.w, "link", "set", "lo", "up")):
            done = _ip(*args)
            assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr}"

    def _certificates(self) -> None:
        """The recipe's openssl steps: one CA, one certificate per host (its address in the SAN)."""
        tls = self.root / "tls"
        tls.mkdir()
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=lab-ca",
                 "-keyout", "ca.key", "-out", "ca.pem", cwd=tls)
        for host, address in (("s", self.s_addr), ("w", self.w_addr)):
            (tls / f"{host}.ext").write_text(f"subjectAltName=IP:{address}\n")
            _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={address}", "-keyout", f"{host}.key",
                     "-out", f"{host}.csr", cwd=tls)
            _openssl("x509", "-req", "-in", f"{host}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-days", "1", "-extfile", f"{host}.ext", "-out", f"{host}.pem", cwd=tls)
            pair = f"{{cert: {tls / (host + '.pem')}, key: {tls / (host + '.key')}}}"
            (tls / f"{host}.yaml").write_text(
                "distributed:\n  comm:\n    require-encryption: true\n    tls:\n"
                f"      ca-file: {tls / 'ca.pem'}\n      scheduler: {pair}\n      worker: {pair}\n      client: {pair}\n")

    def env(self, host: str) -> dict:
        return dict(os.environ, PYTHONPATH=str(REPO), DASK_CONFIG=str(self.root / "tls" / f"{host}.yaml"),
                    HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")

    def spawn(self, namespace: str, host: str, args: list, log: str) -> subprocess.Popen:
        with open(self.root / log, "wb") as out:
            process = subprocess.Popen(["ip", "netns", "exec", namespace, sys.executable, *map(str, args)],
                                       env=self.env(host), stdout=out, stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    def run_in_s(self, *args) -> subprocess.CompletedProcess:
        """A `lab` command on host S (where the scheduler is; it reaches the worker only over the veth)."""
        return subprocess.run(["ip", "netns", "exec", self.s, sys.executable, "-m", "lab", *map(str, args)],
                              env=self.env("s"), capture_output=True, text=True, timeout=900)

    def worker_transitions(self, address: str) -> int:
        """How many task transitions the worker on W has made (it counts every task it ran)."""
        code = ("import sys; from distributed import Client; c = Client(sys.argv[1], timeout=30); "
                "print(sum(c.run(lambda dask_worker: dask_worker.state.transition_counter).values())); c.close()")
        done = subprocess.run(["ip", "netns", "exec", self.s, sys.executable, "-c", code, address],
                              env=self.env("s"), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[-1])

    def start_cluster(self) -> str:
        address = f"tls://{self.s_addr}:8786"
        self.spawn(self.s, "s", ["-m", "dask", "scheduler", "--protocol", "tls", "--host", self.s_addr,
                                 "--port", "8786", "--no-dashboard"], "scheduler.log")
        time.sleep(3)
        self.spawn(self.w, "w", ["-m", "dask", "worker", address, "--nthreads", "1", "--no-nanny",
                                 "--host", self.w_addr, "--no-dashboard"], "worker.log")
        deadline = time.monotonic() + 120
        while "Registered to" not in (self.root / "worker.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "Registered to" in (self.root / "worker.log").read_text(), (self.root / "worker.log").read_text()
        return address

    def close(self) -> None:
        # the worker first, while its scheduler still answers its goodbye: stopped together, the worker
        # retries the gone scheduler until the 30 s below run out
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for namespace in (self.s, self.w):  # deleting a namespace removes its end of the veth pair too
            _ip("netns", "del", namespace)


@pytest.fixture
def hosts(tmp_path):
    if shutil.which("ip") is None:
        pytest.skip("no `ip` command (iproute2) to create network namespaces")
    if shutil.which("openssl") is None:
        pytest.skip("no `openssl` command to make the test's TLS certificates")
    two = TwoHosts(tmp_path)
    try:
        yield two
    finally:
        two.close()


def test_an_embedding_build_and_a_campaigns_page_checks_run_on_a_worker_in_another_network_namespace(
        hosts, tmp_path, tmp_path_factory):
    save(tmp_path / "source.json", make_source())
    batching = ("--batching", "fixed", "--batch-size", "2")
    local = lab_cli("embed", "build", "--source", tmp_path / "source.json", "--output", tmp_path / "local.json",
                    "--generation", tmp_path / "local-gen.json", "--workers", "1", *batching)
    assert local.returncode == 0
    address = hosts.start_cluster()
    remote = hosts.run_in_s("embed", "build", "--source", tmp_path / "source.json", "--output",
                            tmp_path / "remote.json", "--generation", tmp_path / "remote-gen.json",
                            "--scheduler", address, *batching)
    assert remote.returncode == 0, remote.stderr
    assert f"1 Dask worker(s) of the cluster at {address}" in remote.stderr, remote.stderr
    assert (tmp_path / "remote.json").read_bytes() == (tmp_path / "local.json").read_bytes()
    assert hosts.w_addr in (tmp_path / "scheduler.log").read_text()  # the worker joined from its own address

    # a small campaign evaluated here with its checks in process, then audited with every check on W
    lab = prepared_lab(built_inputs(tmp_path_factory), tmp_path / "campaign")
    try:
        lab.evaluate(tmp_path / "plan.json", tmp_path / "report.json", workers=0)
    finally:
        lab.lab.stop()
    inputs = lab.inputs
    before = hosts.worker_transitions(address)
    audit = hosts.run_in_s("audit", "--report", tmp_path / "report.json", "--fixture", inputs.fixture,
                           "--relations", inputs.relations, "--protocol", inputs.protocol,
                           "--generation", inputs.generation, "--scheduler", address)
    assert audit.returncode == 0, audit.stderr
    assert "all checks hold" in audit.stdout, audit.stdout
    assert hosts.worker_transitions(address) > before, "the audit's page checks never ran on the worker in W"
