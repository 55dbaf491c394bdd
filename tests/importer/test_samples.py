"""The shared samples' pins (importer/samples.py): docs/data.md is `lab data list`'s output, the
sample protocols pin the same bytes, and `lab data verify` names every file missing or different."""

from __future__ import annotations

import json
import shutil

from importer.samples import SAMPLES, PinnedFile, Sample, tables, verify
from protocols.committed import committed_protocols
from tests.conftest import REPO, SHARED_DATA, lab_cli, require_shared

BEGIN = "<!-- sample pins: made by `lab data list` from importer/samples.py -->"
END = "<!-- end of sample pins -->"


def test_the_data_page_holds_the_lab_data_list_output():
    page = (REPO / "docs" / "data.md").read_text(encoding="utf-8")
    held = page[page.index(BEGIN) + len(BEGIN):page.index(END)].strip()
    assert held == tables().strip() == lab_cli("data", "list").stdout.strip()


def test_every_protocol_that_names_a_sample_file_pins_its_bytes():
    pins = {f.name: f for s in SAMPLES for f in s.files}
    seen = 0
    for path in committed_protocols():
        protocol = json.loads(path.read_text())
        entries = list((protocol.get("source_files") or {}).values())
        entries += list(((protocol.get("graph_builder") or {}).get("graph_file") or {}).get("files", {}).values())
        for entry in entries:
            if entry["name"] in pins:
                seen += 1
                assert entry["sha256"] == pins[entry["name"]].sha256, (path.name, entry["name"])
                assert entry.get("bytes", pins[entry["name"]].size) == pins[entry["name"]].size, path.name
    assert seen >= 20  # the sample, HippoRAG and LinearRAG protocols


def test_verify_names_each_missing_or_different_file(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "same.txt").write_bytes(b"abc")
    (tmp_path / "s" / "other.txt").write_bytes(b"abd")
    (tmp_path / "s" / "short.txt").write_bytes(b"ab")
    sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # SHA-256 of b"abc"
    sample = Sample("s", tuple(PinnedFile(name, 3, sha) for name in ("same.txt", "other.txt", "short.txt", "gone.txt")),
                    "d", "l", "o", "r", "u")
    found = {f.name: (f.status, f.detail) for f in verify(tmp_path, (sample,))}
    assert found["same.txt"] == ("ok", "")
    assert found["other.txt"][0] == "sha256" and sha in found["other.txt"][1]
    assert found["short.txt"] == ("size", "2 bytes, pinned 3")
    assert found["gone.txt"] == ("missing", f"no file {tmp_path / 's' / 'gone.txt'}")


def test_lab_data_verify_on_the_shared_samples_and_on_a_damaged_copy(tmp_path):
    data = require_shared(SHARED_DATA)
    ran = lab_cli("data", "verify", "--data-dir", data)
    files = sum(len(s.files) for s in SAMPLES)
    assert ran.stdout.splitlines()[-1] == f"{files} of {files} files as pinned under {data}"
    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    (copy / "hotpotqa-sample" / "hotpot_sample_dev.json").write_bytes(
        (data / "hotpotqa-sample" / "hotpot_sample_dev.json").read_bytes().replace(b"a", b"b", 1))
    (copy / "musique-sample" / "musique_sample_dev.jsonl").unlink()
    damaged = lab_cli("data", "verify", "--data-dir", copy, check=False)
    assert damaged.returncode == 1
    lines = damaged.stdout.splitlines()
    assert any(line.startswith("sha256   hotpotqa-sample/hotpot_sample_dev.json: sha256 ") for line in lines)
    assert f"missing  musique-sample/musique_sample_dev.jsonl: no file {copy}/musique-sample/musique_sample_dev.jsonl" in lines
    assert lines[-1] == f"{files - 2} of {files} files as pinned under {copy}; 2 missing or different"


def test_lab_data_verify_refuses_a_folder_that_is_not_there(tmp_path):
    ran = lab_cli("data", "verify", "--data-dir", tmp_path / "nowhere", check=False)
    assert ran.returncode == 2 and "is not a folder" in ran.stderr and ran.stdout == ""
