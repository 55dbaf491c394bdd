"""LinearRAG's relation-free graph from spaCy's entities and sentences, as its code builds it
(docs/linearrag.md lists each rule's source line).

`mentions` runs the pinned recognizer with its parser (builders/ner.py) over the passages and keeps,
per passage, each entity span whose label LinearRAG does not skip (src/ner.py
`extract_entities_sentences`: CARDINAL and ORDINAL), as [text as written, label, sentence text]; the
questions' entities the same way, lower-cased (`question_ner`). Everything else is pure, from those
mentions and the passages' texts, so the fixture stage and the evaluator derive the same graph:

- an entity node per distinct entity text; a sentence per distinct sentence text, naming the union
  of the entities its mentions hold (`extract_nodes_and_edges`);
- a passage-entity edge weighted by the entity's case-sensitive substring count in the passage over
  the sum of those counts for the passage's entities (`add_entity_to_passage_edges`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from protocols.families.graphs.linearrag import LEFT_OUT_LABELS

Mention = tuple[str, str, str]  # (entity text as written, label, its sentence's text)


def mentions(texts: Iterable[str], nlp, progress: Callable[[int, int], None] | None = None, total: int = 0,
             batch_size: int = 64) -> list[list[Mention]]:
    """Per text, its kept entity spans in document order, each with its label and sentence."""
    out = []
    for doc in nlp.pipe(texts, batch_size=batch_size):
        out.append([(ent.text, ent.label_, ent.sent.text) for ent in doc.ents if ent.label_ not in LEFT_OUT_LABELS])
        if progress is not None and (len(out) % batch_size == 0 or len(out) == total):
            progress(len(out), total)
    return out


def question_entities(found: Sequence[Mention]) -> list[str]:
    """A question's entities as LinearRAG links them: lower-cased, distinct, ascending."""
    return sorted({text.lower() for text, _, _ in found})


@dataclass
class LinearGraph:
    entities: list[str]  # distinct entity texts, ascending
    sentences: list[str]  # distinct sentence texts, ascending
    sentence_entities: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # sentence -> entity -> labels
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # passage id -> entity -> count in its text

    def weights(self) -> dict[tuple[str, str], Fraction]:
        """(passage id, entity) -> the entity's share of the passage's entity occurrences."""
        out = {}
        for pid, held in self.counts.items():
            total = sum(held.values())
            for entity, count in held.items():
                out[(pid, entity)] = Fraction(count, total)
        return out


def build(passages: Mapping[str, str], found: Mapping[str, Sequence[Mention]]) -> LinearGraph:
    """The graph of passages (id -> text) and their kept mentions (id -> [(text, label, sentence)])."""
    entities: set[str] = set()
    named: dict[str, dict[str, set[str]]] = {}
    counts: dict[str, dict[str, int]] = {}
    for pid, text in passages.items():
        held = {}
        for entity, label, sentence in found.get(pid, ()):
            entities.add(entity)
            named.setdefault(sentence, {}).setdefault(entity, set()).add(label)
            held[entity] = text.count(entity)
        if held:
            counts[pid] = held
    return LinearGraph(sorted(entities), sorted(named),
                       {s: {e: sorted(labels) for e, labels in sorted(by.items())} for s, by in sorted(named.items())},
                       counts)
