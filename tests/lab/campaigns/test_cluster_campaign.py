"""Page checks on Dask distributed, and campaigns that survive a crash (docs/scale.md, docs/campaign.md).

One prepared lab of the small synthetic protocol. The same plan evaluated with the checks in
process, on a local cluster of one and of two workers and on a scheduler and a worker started by
hand (`python -m dask scheduler` / `dask worker` processes on 127.0.0.1) gives the same report
bytes, timings aside. A worker killed mid-campaign loses nothing; a campaign whose evaluator, or
whose lab, is SIGKILLed resumes (`lab evaluate --resume`) to the same report, and every report
audits clean.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.connection.lab_process import start_lab
from ground.files import encode
from tests.conftest import lab_cli
from tests.evaluation_fixtures import built_inputs, prepared_lab

# heavy: several whole campaigns, Dask clusters started and killed
pytestmark = pytest.mark.heavy

TIMING_KEYS = ("retrieval_micros", "http_ms", "embed_plus_http_ms")
# measured, or a record of how the campaign ran (`resumed`: when, after how many jobs)
MEASURED = ("started_at", "finished_at", "resources", "latency", "seal", "resumed")


def timings_aside(report: dict) -> bytes:
    """The report's bytes without what is measured (times, resources, latency and the seal over them)."""
    bare = {k: v for k, v in report.items() if k not in MEASURED}
    bare["jobs"] = [{k: v for k, v in job.items() if k not in TIMING_KEYS} for job in report["jobs"]]
    bare["warmup"] = [{k: v for k, v in entry.items() if k not in TIMING_KEYS} for entry in report["warmup"]]
    return encode(bare, compact=True)


def load(path: Path) -> dict:
    return json.loads(path.read_text())


class HandCluster:
    """`python -m dask scheduler` and `dask worker` processes on 127.0.0.1, started as a user would."""

    def __init__(self, root: Path, workers: int):
        root.mkdir(parents=True, exist_ok=True)
        self.file = root / "scheduler.json"
        self.scheduler = self._spawn(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                      "--scheduler-file", self.file], root / "scheduler.log")
        deadline = time.monotonic() + 60
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert self.file.exists(), "the dask scheduler never wrote its scheduler file"
        self.address = json.loads(self.file.read_text())["address"]
        assert self.address.startswith("tcp://127.0.0.1:")
        self.workers = [self._spawn(["worker", "--scheduler-file", self.file, "--nthreads", "1", "--no-nanny",
                                     "--host", "127.0.0.1", "--no-dashboard"], root / f"worker{i}.log")
                        for i in range(workers)]
        self.wait_for_workers(workers)

    @staticmethod
    def _spawn(args: list, log: Path) -> subprocess.Popen:
        with open(log, "wb") as out:
            return subprocess.Popen([sys.executable, "-m", "dask", *map(str, args)], stdout=out, stderr=subprocess.STDOUT)

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(n, timeout=120)

    def stop(self) -> None:
        # the workers before their scheduler: a worker terminated beside it says goodbye to a scheduler
        # that is going too, and waits out the 30 s below
        for group in (self.workers, [self.scheduler]):
            for process in group:
                if process.poll() is None:
                    process.terminate()
            for process in group:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    prepared = prepared_lab(built_inputs(tmp_path_factory), tmp_path_factory.mktemp("cluster-lab"))
    yield prepared
    prepared.lab.stop()


@pytest.fixture(scope="module")
def baseline(lab):
    """The campaign with its checks in this process (what every other campaign must reproduce)."""
    out = lab.workdir / "baseline"
    out.mkdir()
    lab.evaluate(out / "plan.json", out / "report.json", **{"workers": 0})
    return out / "report.json"


def audit_holds(lab, report: Path, *extra) -> None:
    inputs = lab.inputs
    done = lab_cli("audit", "--report", report, "--fixture", inputs.fixture, "--relations", inputs.relations,
                   "--protocol", inputs.protocol, "--generation", inputs.generation, *extra)
    assert "all checks hold" in done.stdout, done.stdout


def evaluate_process(lab, out: Path, *extra) -> subprocess.Popen:
    args = [sys.executable, "-m", "lab", *map(str, lab.evaluate_args(out / "plan.json", out / "report.json")), *extra]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_until(process: subprocess.Popen, wanted) -> list[str]:
    """stderr lines up to and including the first for which `wanted(line)` holds."""
    lines = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = process.stderr.readline()  # type: ignore[union-attr]  # started with stderr=PIPE
        if not line:
            break
        lines.append(line)
        if wanted(line):
            return lines
    raise AssertionError("evaluate never printed the line waited for:\n" + "".join(lines))


def first_job(line: str) -> bool:
    return line.startswith("evaluate: ") and " jobs (" in line


def test_the_report_is_the_same_for_one_and_two_workers_and_a_hand_started_cluster(lab, baseline, tmp_path):
    want = timings_aside(load(baseline))
    for name, flags in (("one", ["--workers", "1"]), ("two", ["--workers", "2"])):
        out = tmp_path / name
        out.mkdir()
        done = lab_cli(*lab.evaluate_args(out / "plan.json", out / "report.json"), *flags)
        assert "page checks on" in done.stderr and "local cluster" in done.stderr
        assert timings_aside(load(out / "report.json")) == want, name
        assert (out / "plan.json").read_bytes() == (baseline.parent / "plan.json").read_bytes()
        assert sorted(p.name for p in out.iterdir()) == ["plan.json", "report.json"]  # no journal, no lock left
    cluster = HandCluster(tmp_path / "dask", workers=1)
    try:
        out = tmp_path / "hand"
        out.mkdir()
        done = lab_cli(*lab.evaluate_args(out / "plan.json", out / "report.json"), "--scheduler", cluster.address)
        assert f"the cluster at {cluster.address}" in done.stderr
        assert timings_aside(load(out / "report.json")) == want
        audit_holds(lab, out / "report.json", "--scheduler", cluster.address)
        from distributed import Client

        with Client(cluster.address, timeout=60) as client:  # the cluster outlives them: nothing left behind
            held = client.run(lambda dask_worker: len(getattr(dask_worker, "lab_checkers", {})))
        assert list(held.values()) == [0]
    finally:
        cluster.stop()


def test_a_worker_killed_mid_campaign_loses_no_result(lab, baseline, tmp_path):
    cluster = HandCluster(tmp_path / "dask", workers=2)
    try:
        out = tmp_path / "run"
        out.mkdir()
        process = evaluate_process(lab, out, "--scheduler", cluster.address)
        read_until(process, lambda line: "page checks on 2 worker(s)" in line)
        victim = cluster.workers[0]
        victim.send_signal(signal.SIGSTOP)  # its tasks now wait: the campaign cannot finish without them
        time.sleep(8)
        assert process.poll() is None, "the campaign finished although a worker held some of its checks"
        victim.kill()
        victim.wait()
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert timings_aside(load(out / "report.json")) == timings_aside(load(baseline))
        audit_holds(lab, out / "report.json", "--scheduler", cluster.address)
    finally:
        cluster.stop()


def test_a_killed_evaluator_resumes_to_the_same_report(lab, baseline, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    process = evaluate_process(lab, out, "--workers", "0")
    read_until(process, first_job)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    assert load(out / "report.json")["status"] == "running"
    journal = (out / "report.json.journal").read_text().splitlines()
    assert len(journal) >= 2  # the header and at least the first job
    args = lab.evaluate_args(out / "plan.json", out / "report.json")
    refused = lab_cli(*args, check=False)  # without --resume the report is not overwritten
    assert refused.returncode == 2 and "refusing to overwrite" in refused.stderr
    done = lab_cli(*args, "--resume", "--workers", "0")
    assert f"after {len(journal) - 1} of" in done.stderr or "after" in done.stderr
    assert timings_aside(load(out / "report.json")) == timings_aside(load(baseline))
    assert len(load(out / "report.json")["resumed"]) == 1 and "resumed" not in load(baseline)
    assert sorted(p.name for p in out.iterdir()) == ["plan.json", "report.json"]
    audit_holds(lab, out / "report.json")
    before = (out / "report.json").read_bytes()
    again = lab_cli(*args, "--resume", check=False)  # a finished campaign: said so, nothing rewritten
    assert again.returncode == 0 and "is already complete; nothing to resume" in again.stderr
    assert (out / "report.json").read_bytes() == before


def test_a_killed_lab_resumes_to_the_same_report_after_a_reopen(lab, baseline, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    process = evaluate_process(lab, out, "--workers", "0")
    read_until(process, first_job)
    process.send_signal(signal.SIGSTOP)
    lab.lab.kill()
    process.send_signal(signal.SIGCONT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    failed = load(out / "report.json")
    assert failed["status"] == "failed" and failed["rows"]
    assert "--resume" in err
    # `lab serve --reopen` on the same store, with a new access file (new pid and token)
    lab.lab = start_lab(lab.workdir / "db", lab.workdir / "access-reopened.json", reopen=True)
    done = lab_cli(*lab.evaluate_args(out / "plan.json", out / "report.json"), "--resume", "--workers", "1")
    assert f"after {len(failed['jobs'])} of" in done.stderr or "resuming" in done.stderr
    assert timings_aside(load(out / "report.json")) == timings_aside(load(baseline))
    # the report covers both lab processes: the killed one (its campaign failed and recorded it) and the reopened
    assert load(out / "report.json")["resources"]["processes"] == 2
    audit_holds(lab, out / "report.json")


def test_resume_refuses_an_edited_journal(lab, baseline, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    process = evaluate_process(lab, out, "--workers", "0")
    read_until(process, first_job)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    journal = out / "report.json.journal"
    lines = journal.read_text().splitlines()
    entry = json.loads(lines[1])
    assert entry["row"] is not None
    entry["row"]["page"]["hits"][0]["score"] += 1.0  # a recorded page the lab never served
    journal.write_text("\n".join([lines[0], json.dumps(entry), *lines[2:]]) + "\n")
    done = lab_cli(*lab.evaluate_args(out / "plan.json", out / "report.json"), "--resume", "--workers", "0",
                   check=False)
    assert done.returncode == 1 and "page check failed" in done.stderr
    assert load(out / "report.json")["status"] == "failed"


def test_an_unreachable_scheduler_is_refused_before_anything_is_written(lab, tmp_path):
    import socket

    with socket.socket() as free:  # a loopback port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    out = tmp_path / "run"
    out.mkdir()
    done = lab_cli(*lab.evaluate_args(out / "plan.json", out / "report.json"), "--scheduler",
                   f"tcp://127.0.0.1:{port}", check=False)
    assert done.returncode == 2 and "no Dask scheduler answered" in done.stderr, done.stderr
    refused = lab_cli(*lab.evaluate_args(out / "plan.json", out / "report.json"), "--scheduler",
                      "tcp://10.1.2.3:8786", check=False)
    assert refused.returncode == 2 and "plain TCP only to a loopback address" in refused.stderr
    assert list(out.iterdir()) == []
