"""Title normalization and query-title matching for the rescue seeds (docs/design.md §5.1 rules).

The server may not import `builders` (docs/design.md §2), so it keeps its own copy of the §5.1 rules; the
evaluator checks the server's seeds with `builders.normalize`, which makes the two copies each
other's test.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

WORD = re.compile(r"\w+")
MIN_SINGLE_TOKEN_CHARS = 4


def normalized_tokens(text: str) -> list[str]:
    """NFKC, casefold, then the maximal `\\w+` runs."""
    return WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def normalize_text(text: str) -> str:
    return " ".join(normalized_tokens(text))


def title_is_eligible(normalized_title: str) -> bool:
    """Non-empty, not all digits, and either several tokens or one token of at least 4 characters."""
    if not normalized_title or normalized_title.isdecimal():
        return False
    return " " in normalized_title or len(normalized_title) >= MIN_SINGLE_TOKEN_CHARS


def document_title(content: str) -> str:
    """A lab document's title: its content up to the first newline (document text = title + \\n + paragraph)."""
    return content.split("\n", 1)[0]


def title_table(contents: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Eligible normalized title -> record ids holding it (ascending), from (record_id, content) pairs."""
    table: dict[str, list[str]] = {}
    for record_id, content in contents:
        title = normalize_text(document_title(content))
        if title_is_eligible(title):
            table.setdefault(title, []).append(record_id)
    for ids in table.values():
        ids.sort()
    return table


def titles_in_query(query: str, table: Mapping[str, list[str]]) -> list[tuple[str, str]]:
    """(normalized title, record id) for every eligible title occurring space-delimited in the query.

    Checking every contiguous token run of the query against the table equals the substring test
    `" " + title + " " in " " + query + " "`, at a cost bounded by the query length, not the corpus.
    """
    tokens = normalized_tokens(query)
    found: set[str] = set()
    for start in range(len(tokens)):
        for end in range(start + 1, len(tokens) + 1):
            phrase = " ".join(tokens[start:end])
            if phrase in table:
                found.add(phrase)
    return [(title, record_id) for title in sorted(found) for record_id in table[title]]
