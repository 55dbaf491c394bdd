"""The passage corpus of the HippoRAG layout: read, indexed, and matched against the questions' gold.

Every refusal here comes before anything is written (importer.pipeline writes last), names how many
questions or passages are at fault and the first one, and leaves nothing half-imported:

- a file that is not one JSON array (the layout's question and corpus files both are), or a corpus
  entry that is not exactly `{title, text}` strings: another layout;
- a gold passage absent from the corpus (MuSiQue: no passage with the paragraph's title and text;
  2Wiki, HotpotQA: no passage with the title);
- a gold title held by passages of different texts (2Wiki, HotpotQA): which one is judged would be a
  guess.

Passages equal in title and text are one document (their id is the same digest); how many entries
collapsed is recorded in source.json's corpus_policy, as is, for title matching, how many gold
passages have a corpus text other than the question's own context text (HippoRAG 2 matches the
text too, so those are where its recall could differ: docs/hipporag.md, "The field's recall").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ground.errors import RefusedInput
from importer.corpus import make_document
from importer.formats.base import Document, RowReader
from importer.reading import PinnedFile, SourceFileError, first_byte, stream_rows

PASSAGE_KEYS = ("title", "text")


class GoldError(RefusedInput):
    """A question's gold passage is absent from the corpus, or ambiguous in it."""


@dataclass
class Passages:
    """The corpus: its documents by id, and the indexes gold matching reads."""

    documents: list[Document]
    entries: int  # passages in the file
    collapsed: int  # entries equal in title and text to an earlier one
    by_pair: dict[tuple[str, str], str] = field(default_factory=dict)  # (title, text) -> id
    by_title: dict[str, list[str]] = field(default_factory=dict)  # title -> distinct ids, file order

    def document_id_for(self, reader: RowReader) -> Callable[[str, str], str]:
        """The id function the row format's query builder calls with (title, the row's text): by title
        and text, or by title alone. Only called after `check_gold` passed."""
        if reader.corpus.by_title:
            return lambda title, text: self.by_title[title][0]
        return lambda title, text: self.by_pair[(title, text)]


def require_array(pinned: PinnedFile, what: str) -> None:
    """The layout's files are JSON arrays; JSON lines (the official MuSiQue file) is another layout."""
    start = first_byte(pinned.path)
    if start != b"[":
        shape = ("JSON lines" if start == b"{" else "an empty file (no byte but whitespace)" if start == b""
                 else f"a file starting with {start.decode('latin-1')!r}")
        raise SourceFileError(f"{pinned.path}: not the HippoRAG layout: its {what} file is one JSON array, "
                              f"this is {shape}")


def read_corpus(pinned: PinnedFile, prefix: str) -> Passages:
    """Every passage of the corpus file, validated, as documents sorted by id."""
    require_array(pinned, "corpus")
    documents: dict[str, Document] = {}
    passages = Passages([], 0, 0)
    for where, entry in stream_rows(pinned):
        if not isinstance(entry, dict) or sorted(entry) != sorted(PASSAGE_KEYS) \
                or not all(isinstance(entry[k], str) for k in PASSAGE_KEYS):
            shown = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            raise SourceFileError(f"{where}: not a HippoRAG corpus passage: expected exactly the string fields "
                                  f"title and text, got {shown} (is this the question file?)")
        passages.entries += 1
        doc = make_document(entry["title"], entry["text"], prefix)
        if doc["id"] in documents:
            passages.collapsed += 1
            continue
        documents[doc["id"]] = doc
        passages.by_pair[(entry["title"], entry["text"])] = doc["id"]
        passages.by_title.setdefault(entry["title"], []).append(doc["id"])
    if not documents:
        raise SourceFileError(f"{pinned.path}: the corpus holds no passage")
    passages.documents = [documents[key] for key in sorted(documents)]
    return passages


def check_gold(passages: Passages, selected: Mapping[str, Sequence[Mapping[str, Any]]], reader: RowReader,
               question_file: str) -> dict:
    """Refuse missing or ambiguous gold over every selected question; return the record of what
    matched (for corpus_policy)."""
    match = reader.corpus
    missing: list[tuple[str, str]] = []  # (question id, title) per missing gold passage
    ambiguous: list[tuple[str, str, int]] = []
    questions_missing: set[str] = set()
    questions_ambiguous: set[str] = set()
    text_differs = 0
    for rows in selected.values():
        for row in rows:
            row_id = reader.selection_fields(row)["id"]
            for title, text in match.gold(row):
                if not match.by_title:
                    if (title, text) not in passages.by_pair:
                        missing.append((row_id, title))
                        questions_missing.add(row_id)
                    continue
                ids = passages.by_title.get(title, [])
                if not ids:
                    missing.append((row_id, title))
                    questions_missing.add(row_id)
                elif len(ids) > 1:
                    ambiguous.append((row_id, title, len(ids)))
                    questions_ambiguous.add(row_id)
                elif (title, text) not in passages.by_pair:
                    text_differs += 1
    if missing:
        row_id, title = missing[0]
        rule = "title" if match.by_title else "title and text"
        raise GoldError(f"{question_file}: {len(missing)} gold passage(s) of {len(questions_missing)} question(s) "
                        f"are not in the corpus (matched by {rule}); first: question {row_id!r}, title {title!r}")
    if ambiguous:
        row_id, title, n = ambiguous[0]
        raise GoldError(f"{question_file}: {len(ambiguous)} gold title(s) of {len(questions_ambiguous)} question(s) "
                        f"are held by corpus passages of different texts, so the judged passage is ambiguous; "
                        f"first: question {row_id!r}, title {title!r} ({n} passages)")
    record = {"passages_in_file": passages.entries, "duplicate_passages_collapsed": passages.collapsed}
    if match.by_title:
        record["gold_passages_whose_corpus_text_differs_from_the_question_context"] = text_differs
    return record
