"""The protocol registry (protocols/registry.py) and `lab protocol`: every committed protocol and suite
is declared once and regenerates byte for byte from its parent; an edited derivation, root or file
fails the check; a suite pins the files of another folder; refused input writes nothing."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from ground.canonical import digest
from ground.errors import CheckFailed
from lab.cli import main as lab
from protocols import registry
from protocols.committed import FROZEN_DIR
from protocols.regenerate import COMMITTED_GLOBS, EQUAL, SKIPPED, regenerate
from protocols.schema import load_protocol
from protocols.suite import load_suite, pinned_protocols
from tests.conftest import REPO, SHARED_DATA

PROTOCOLS = FROZEN_DIR
SHARED_STEPS = ("hotpotqa-sample-v1.json", "2wikimultihopqa-sample-v1.json", "graph-multihop-full-dev-v1.json",
                "hipporag-musique-sample-v1.json")


def _edited(name: str, **changes) -> tuple[registry.Declared, ...]:
    """The registry with one entry's step parameters changed."""
    return tuple(dataclasses.replace(entry, step=dataclasses.replace(entry.step, **changes))
                 if entry.name == name else entry for entry in registry.DECLARED)


def _copy_protocols(tmp_path):
    copied = tmp_path / "protocols"
    for pattern in COMMITTED_GLOBS:
        for path in PROTOCOLS.glob(pattern):
            target = copied / path.relative_to(PROTOCOLS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return copied


# ---------------------------------------------------------------- the committed files


def test_regenerate_check_passes_on_the_committed_files(capsys):
    assert lab(["protocol", "regenerate", "--check", "--data-dir", str(SHARED_DATA)]) == 0
    out = capsys.readouterr().out
    assert "every declared file regenerates byte for byte" in out
    if SHARED_DATA.is_dir():  # with ../shared, nothing is skipped
        assert f"{len(registry.DECLARED)} equal" in out and SKIPPED not in out


def test_every_committed_protocol_and_suite_is_declared_exactly_once():
    committed = {p.relative_to(PROTOCOLS).as_posix() for pattern in COMMITTED_GLOBS for p in PROTOCOLS.glob(pattern)
                 if not p.name.endswith(".lock.json")}  # the declared digests (protocols/locks.py), not a protocol
    declared = Counter(entry.file for entry in registry.DECLARED)
    assert set(declared) == committed
    assert max(declared.values()) == 1
    assert len({entry.name for entry in registry.DECLARED}) == len(registry.DECLARED)
    for entry in registry.DECLARED:  # the name is the version the file states
        value = json.loads((PROTOCOLS / entry.file).read_text(encoding="utf-8"))
        assert value.get("protocol_version", value.get("suite_version")) == entry.name


def test_without_the_shared_data_its_steps_are_skipped_with_the_reason_not_failed(tmp_path, capsys):
    assert lab(["protocol", "regenerate", "--check", "--data-dir", str(tmp_path / "absent")]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith(SKIPPED)]
    assert sorted(line.split()[1].rstrip(":").split("/")[-1] for line in lines) == sorted(SHARED_STEPS)
    assert all("is absent" in line for line in lines)


def test_output_dir_writes_the_regenerated_set_and_never_protocols(tmp_path, capsys):
    before = {p: p.stat().st_mtime_ns for pattern in COMMITTED_GLOBS for p in PROTOCOLS.glob(pattern)}
    out = tmp_path / "regenerated"
    assert lab(["protocol", "regenerate", "--output-dir", str(out), "--data-dir", str(SHARED_DATA)]) == 0
    assert f"wrote {len(registry.DECLARED)} files to {out}" in capsys.readouterr().out or not SHARED_DATA.is_dir()
    for path in out.rglob("*.json"):
        assert path.read_bytes() == (PROTOCOLS / path.relative_to(out)).read_bytes(), path
    assert (out / "design" / "musique-design-v3.json").is_file()
    assert {p: p.stat().st_mtime_ns for p in before} == before


# ---------------------------------------------------------------- a changed derivation fails the check


def test_an_edited_derivation_parameter_fails_the_check_on_every_file_it_makes(monkeypatch, capsys):
    rescue = registry.RESCUE_FAMILY
    methods = {**rescue.methods, "graph_rescue": {**rescue.methods["graph_rescue"], "limit": 149}}
    edited = tuple(dataclasses.replace(e, step=dataclasses.replace(rescue, methods=methods))
                   if e.step is rescue else e for e in registry.DECLARED)
    monkeypatch.setattr(registry, "DECLARED", edited)
    assert lab(["protocol", "regenerate", "--check", "--data-dir", str(SHARED_DATA)]) == 1
    captured = capsys.readouterr()
    differing = {line.split()[1].rstrip(":").split("/")[-1] for line in captured.out.splitlines() if line.startswith("differs")}
    assert differing == {"graph-multihop-protocol-v2.json", "musique-sample-v2.json", "hotpotqa-sample-v2.json",
                         "2wikimultihopqa-sample-v2.json"}
    assert "declare a new version" in captured.out
    assert "failed: 4 file(s) are not what their declared derivation makes" in captured.err
    for name in differing:
        assert name in captured.err


@pytest.mark.parametrize("name, changes", [
    ("musique-sample-e5-v1", {"model_note": "8-bit quantized"}),
    ("design/musique-design-v3", {"title_suffix": " (design)"}),
    ("suite-samples-v1", {"seed": 1}),
    ("hipporag-hotpotqa-v1", {"test_counts": {"bridge": 800, "comparison": 200}}),
    ("synthetic-v1", {"splits": {"test": {"source": "dev", "counts": {"2": 41, "3": 30, "4": 30}},
                                 "development": {"source": "train", "counts": {"2": 10, "3": 10, "4": 10}}}}),
])
def test_each_step_kind_fails_the_check_when_its_parameters_change(name, changes):
    outcomes = {o.file.split("/")[-1]: o.status for o in regenerate(_edited(name.split("/")[-1], **changes),
                                                                   data_dir=SHARED_DATA)}
    assert outcomes[f"{name.split('/')[-1]}.json"] == "differs"
    assert sum(status != EQUAL and status != SKIPPED for status in outcomes.values()) == 1


def test_an_edited_root_an_edited_file_and_an_undeclared_file_fail_the_check(tmp_path):
    copied = _copy_protocols(tmp_path)
    root = copied / "datasets" / "graph-multihop-protocol-v1.json"
    root.write_bytes(root.read_bytes().replace(b'"title": "', b'"title": "Edited: ', 1))
    v3 = copied / "datasets" / "musique-sample-v3.json"
    v3.write_bytes(v3.read_bytes().replace(b'"limit": 10', b'"limit": 11', 1))
    (copied / "design" / "musique-design-v4.json").write_bytes(b"{}\n")
    outcomes = {o.file.split("/")[-1]: o for o in regenerate(registry.DECLARED, protocols_dir=copied,
                                                             data_dir=SHARED_DATA)}
    assert outcomes["graph-multihop-protocol-v1.json"].status == "differs"
    assert "a root never changes" in outcomes["graph-multihop-protocol-v1.json"].detail
    assert outcomes["musique-sample-v3.json"].status == "differs"
    assert "line " in outcomes["musique-sample-v3.json"].detail
    assert outcomes["musique-design-v4.json"].status == "undeclared"
    # what is derived from an edited file differs too (v2 keeps the root's title, the suite pins the
    # v3 file's digest, the HippoRAG MuSiQue protocols and v4 keep v3's methods; the full cohort sets
    # its own title); nothing else does
    # (the sample layout pin reads the shared data: without it, it is skipped, not compared)
    sample_pin = {"hipporag-musique-sample-v1.json"} if SHARED_DATA.is_dir() else set()
    assert {f for f, o in outcomes.items() if o.status == "differs"} == {
        "graph-multihop-protocol-v1.json", "graph-multihop-protocol-v2.json", "musique-sample-v3.json",
        "suite-graph-v3.json", "hipporag-musique-v1.json", "musique-sample-v4.json"} | sample_pin
    if not SHARED_DATA.is_dir():
        assert outcomes["hipporag-musique-sample-v1.json"].status == SKIPPED


def test_a_new_version_is_reported_new_until_committed():
    entry = registry.Declared("datasets/musique-sample-v9.json", "musique-sample-v1", registry.WALK_FAMILY)
    outcomes = {o.file.split("/")[-1]: o for o in regenerate(registry.DECLARED + (entry,), data_dir=SHARED_DATA)}
    assert outcomes["musique-sample-v9.json"].status == "new"
    assert json.loads(outcomes["musique-sample-v9.json"].data)["protocol_version"] == "musique-sample-v9"


@pytest.mark.parametrize("declared, message", [
    (registry.DECLARED + (registry.DECLARED[0],), "declared twice"),
    ((registry.DECLARED[2],) + registry.DECLARED[:2], "not declared before it"),
    ((registry.Declared("x.json", "musique-sample-v1", registry.DECLARED[0].step),), "a root has no parent"),
    ((registry.Declared("x.json", None, registry.WALK_FAMILY),), "needs a parent"),
])
def test_a_malformed_registry_is_refused_naming_the_entry(declared, message):
    with pytest.raises(CheckFailed, match=message):
        registry.check_declarations(declared)


# ---------------------------------------------------------------- suite over another folder


def test_suite_over_a_copied_folder_pins_the_changed_file_by_its_new_digest(tmp_path, capsys):
    folder = tmp_path / "twin"
    folder.mkdir()
    committed = load_suite(PROTOCOLS / "suites" / "suite-samples-v1.json")
    for dataset in committed["datasets"]:
        shutil.copyfile(PROTOCOLS / "datasets" / dataset["protocol"], folder / dataset["protocol"])
    changed = json.loads((folder / "hotpotqa-sample-v1.json").read_text(encoding="utf-8"))
    changed["title"] += " (twin cohort)"
    (folder / "hotpotqa-sample-v1.json").write_text(json.dumps(changed, indent=2), encoding="utf-8")
    out = folder / "suite-samples-v1.json"
    assert lab(["protocol", "suite", "suite-samples-v1", "--protocols-dir", str(folder), "--output", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    suite = load_suite(out)
    digests = {d["name"]: d["protocol_digest"] for d in suite["datasets"]}
    old = {d["name"]: d["protocol_digest"] for d in committed["datasets"]}
    assert digests["hotpotqa"] == digest(changed) != old["hotpotqa"]
    assert {k: v for k, v in digests.items() if k != "hotpotqa"} == {k: v for k, v in old.items() if k != "hotpotqa"}
    assert {k: v for k, v in suite.items() if k != "datasets"} == {k: v for k, v in committed.items() if k != "datasets"}
    assert list(pinned_protocols(suite, out)) == ["musique", "hotpotqa", "2wikimultihopqa"]


def test_suite_refuses_a_protocol_that_lacks_the_contrast(tmp_path, capsys):
    folder = tmp_path / "twin"
    folder.mkdir()
    for name in ("musique-sample-v3.json", "hotpotqa-sample-v1.json", "2wikimultihopqa-sample-v3.json"):
        shutil.copyfile(PROTOCOLS / "datasets" / name, folder / name)
    shutil.copyfile(PROTOCOLS / "datasets" / "hotpotqa-sample-v1.json", folder / "hotpotqa-sample-v3.json")  # no graph_walk
    out = folder / "suite.json"
    assert lab(["protocol", "suite", "suite-graph-v3", "--protocols-dir", str(folder), "--output", str(out)]) == 2
    assert "'graph_walk' is not a method of hotpotqa-sample-v3.json" in capsys.readouterr().err
    assert not out.exists()


# ---------------------------------------------------------------- derive, list, show


def test_derive_applies_a_declared_step_to_another_parent(tmp_path, capsys):
    out = tmp_path / "mine-v2.json"
    assert lab(["protocol", "derive", "graph-multihop-protocol-v2", "--protocol",
                str(PROTOCOLS / "datasets" / "graph-multihop-protocol-v1.json"), "--version", "mine-v2", "--output", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    derived, frozen = load_protocol(out), load_protocol(PROTOCOLS / "datasets" / "graph-multihop-protocol-v2.json")
    assert derived == {**frozen, "protocol_version": "mine-v2"}


def test_list_and_show_print_the_lineage(capsys):
    assert lab(["protocol", "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].split() == ["name", "parent", "step"] and len(listed) == 1 + len(registry.DECLARED)
    assert any(line.split()[:2] == ["graph-multihop-ann-v1", "graph-multihop-protocol-v2"] for line in listed)
    assert lab(["protocol", "show", "graph-multihop-ann-v1"]) == 0
    shown = capsys.readouterr().out
    chain = ["graph-multihop-protocol-v1", "graph-multihop-protocol-v2", "graph-multihop-ann-v1"]
    assert [shown.index(f"  {name} ") for name in chain] == sorted(shown.index(f"  {name} ") for name in chain)
    assert '"profile": "cosine_hnsw_v1"' in shown
    assert lab(["protocol", "show", "suite-graph-v3"]) == 0
    assert "hotpotqa-sample-v3: musique-sample-v1 -> hotpotqa-sample-v1 -> hotpotqa-sample-v3" in capsys.readouterr().out


# ---------------------------------------------------------------- refusals: exit 2, nothing written


def test_refusals_exit_2_and_write_nothing(tmp_path, capsys):
    existing = tmp_path / "existing.json"
    existing.write_text("keep")
    v1 = str(PROTOCOLS / "datasets" / "graph-multihop-protocol-v1.json")
    broken = json.loads((PROTOCOLS / "datasets" / "graph-multihop-protocol-v1.json").read_text(encoding="utf-8"))
    del broken["methods"]
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    fresh = str(tmp_path / "fresh.json")
    cases = [
        (["suite", "suite-samples-v1", "--protocols-dir", str(PROTOCOLS), "--output", str(existing)],
         "refusing to overwrite"),
        (["regenerate", "--output-dir", str(tmp_path)], "refusing to overwrite"),
        (["derive", "graph-multihop-protocol-v2", "--protocol", v1, "--version", "x-v2", "--output", str(existing)],
         "refusing to overwrite"),
        (["derive", "graph-multihop-protocol-v2", "--protocol", str(tmp_path / "broken.json"), "--version", "x-v2",
          "--output", fresh], "methods: missing field"),
        (["derive", "graph-multihop-protocol-v2", "--protocol", v1, "--version", "musique-sample-v2",
          "--output", fresh], "names a declared protocol"),
        (["derive", "graph-multihop-protocol-v1", "--protocol", v1, "--version", "x", "--output", fresh], "root"),
        (["derive", "graph-multihop-protocol-v3", "--protocol", str(PROTOCOLS / "datasets" / "graph-multihop-protocol-v3.json"),
          "--version", "x-v4", "--output", fresh], "already holds 'graph_walk'"),
        (["suite", "musique-sample-v1", "--protocols-dir", str(PROTOCOLS), "--output", fresh], "not a suite"),
        (["suite", "suite-samples-v1", "--protocols-dir", str(tmp_path / "absent"), "--output", fresh],
         "not a directory"),
        (["show", "no-such-protocol"], "no declared protocol or suite is named 'no-such-protocol'"),
    ]
    for args, message in cases:
        assert lab(["protocol", *args]) == 2, args
        assert message in capsys.readouterr().err, args
    assert existing.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json", "existing.json"]


def test_regenerate_needs_check_or_output_dir(capsys):
    with pytest.raises(SystemExit) as done:
        lab(["protocol", "regenerate"])
    assert done.value.code == 2
    assert "one of the arguments --check --output-dir is required" in capsys.readouterr().err


# ---------------------------------------------------------------- the bottom layer


def test_the_protocols_package_imports_nothing_above_it():
    code = ("import importlib, pkgutil, sys, protocols\n"
            "for module in pkgutil.walk_packages(protocols.__path__, 'protocols.'):\n"
            "    importlib.import_module(module.name)\n"
            "above = sorted({m.split('.')[0] for m in sys.modules} & {'importer', 'builders', 'server', 'evaluator', "
            "'lab', 'bench', 'scripts'})\n"
            "print(above)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
