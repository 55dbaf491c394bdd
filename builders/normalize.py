"""Title and text normalization of `document_title_graph_v1` (docs/design.md §5.1): one home for both sides."""

from __future__ import annotations

import re
import unicodedata

WORD = re.compile(r"\w+")
MIN_SINGLE_TOKEN_CHARS = 4


def normalized_tokens(text: str) -> list[str]:
    """Unicode NFKC, then casefold, then the `\\w+` runs."""
    return WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def normalize_text(text: str) -> str:
    """The tokens of `normalized_tokens` joined by one space (so matches are space-delimited)."""
    return " ".join(normalized_tokens(text))


def title_is_eligible(normalized_title: str) -> bool:
    """Whether a normalized title may be matched as a mention.

    Non-empty, not all digits (a year such as "1999" names nothing), and either several tokens or
    one token of at least 4 characters (short single words like "war" match everywhere).
    """
    if not normalized_title or normalized_title.isdecimal():
        return False
    return " " in normalized_title or len(normalized_title) >= MIN_SINGLE_TOKEN_CHARS
