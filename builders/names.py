"""Names in a text, read from capitalization alone (the entity graph's vocabulary, docs/graph-v4.md).

A *name run* is a maximal run of capitalized words (a word whose first character is an uppercase
letter), which may hold lowercase joiners ("of", "de", "von", ...) between two capitalized words
and digits after one ("Apollo 11"); words are separated by whitespace or one hyphen only, so a
comma, a parenthesis or a full stop ends a run. Leading function words ("The", "In", "He", ...,
capitalized because they begin a sentence) are dropped, and trailing joiners. A run's *keys* are
its sub-runs of at most `max_tokens` words that start with a capitalized word and end with a
capitalized word or a number (never with a joiner), casefolded and joined by one space; a key is
eligible when it is not a dropped function word and has several words or one word of at least 4
characters.

No model, no dictionary of entities: only the text's own capitals. One home for the builder and
the design harness; the evaluator reads the same rules with its own code (evaluator/entity_relations.py).
"""

from __future__ import annotations

import re
import unicodedata

SPLIT = re.compile(r"(\W+)")  # words and the gaps between them
JOINERS = frozenset({"of", "the", "de", "del", "della", "der", "den", "di", "da", "do", "dos", "du", "la", "le",
                     "les", "van", "von", "zu", "al", "el", "bin", "ibn"})
# capitalized because they open a sentence or a clause, not because they name something
LEADING = frozenset("""a an the this that these those there then thus he she it its his her hers they them their
we our you your i in on at by for from with within without after before during while when where whereas however
although though but and or nor as of to since until unless upon into onto over under between among according
also both each every either neither no not some such many most other another one two three four five six seven
eight nine ten first second third last later early born his is was are were be been being has have had do does
did following despite""".split())
MIN_SINGLE_CHARS = 4


def name_runs(text: str) -> list[list[str]]:
    """The name runs of `text`, each a list of casefolded words (see the module doc).

    One `re.split` gives the words and the gaps between them alternately (words at even indices,
    "" at an end that is a gap); most words are lowercase outside any run and cost one test."""
    parts = SPLIT.split(unicodedata.normalize("NFKC", text))
    runs: list[list[str]] = []
    current: list[str] = []  # original-case words
    for i in range(0, len(parts), 2):
        word = parts[i]
        if not word:
            continue
        first = word[0]
        if not current:
            if first.isupper():
                current.append(word)
            continue
        gap = parts[i - 1]
        if not (gap.isspace() or gap.strip() == "-"):
            _close(current, runs)
            if first.isupper():
                current.append(word)
        elif first.isupper() or first.isdigit() or word.casefold() in JOINERS:
            current.append(word)
        else:
            _close(current, runs)
    _close(current, runs)
    return runs


def _close(current: list[str], runs: list[list[str]]) -> None:
    while current and not current[-1][0].isupper() and not current[-1][0].isdigit():  # trailing joiners
        current.pop()
    start = 0
    while start < len(current) and current[start].casefold() in LEADING:
        start += 1
    if start < len(current):
        runs.append([word.casefold() for word in current[start:]])
    current.clear()


def run_keys(run: list[str], max_tokens: int) -> set[str]:
    """The eligible keys of one name run: sub-runs of at most `max_tokens` words that start with a
    capitalized word and do not end with a joiner."""
    keys = set()
    for a, first in enumerate(run):
        if first in JOINERS or first[0].isdigit():
            continue
        for b in range(a, min(len(run), a + max_tokens)):
            if run[b] not in JOINERS:
                key = " ".join(run[a:b + 1])
                if key_is_eligible(key):
                    keys.add(key)
    return keys


def key_is_eligible(key: str) -> bool:
    if key in LEADING or key.isdecimal():
        return False
    return " " in key or len(key) >= MIN_SINGLE_CHARS


def text_keys(text: str, max_tokens: int) -> set[str]:
    """Every eligible key of every name run of `text`."""
    keys: set[str] = set()
    for run in name_runs(text):
        keys |= run_keys(run, max_tokens)
    return keys
