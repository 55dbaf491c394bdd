"""A deterministic generator of MuSiQue-format rows over an invented world (the embedded default).

The world holds people, cities, countries, companies, films, albums, universities, rivers and
seas with invented names. Each entity has one to three paragraphs that share its title (so
`same_entity` edges exist) and state its facts by naming other entities by their exact title (so
`semantic_related` edges exist). Questions follow real chains of facts: the paragraph supporting
step i is the one stating that step's fact, its title is the entity the previous step answered,
and the answer of step i is named in the question of step i+1 as `#i`, as in MuSiQue.

Each row carries 20 paragraphs: the supporting ones plus distractors chosen to share words with
the question (the same relation phrasing, other paragraphs of the same entities, entities pointing
at the same bridge entity, entities with a name token in common), so lexical retrieval alone does
not find every supporting paragraph.

Only `random.Random(seed)` instances are used, never sets iterated for order, so the same seed and
size give byte-identical files.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PARAGRAPHS_PER_ROW = 20
TRAIN_NAME = "synthetic_train.jsonl"
DEV_NAME = "synthetic_dev.jsonl"
DEFAULT_SEED = "synthetic-musique-v1"
DEFAULT_QUESTIONS = 120  # dev rows; train gets 35% of that (see split_sizes)


# ---------------------------------------------------------------- relations and their phrasing


@dataclass(frozen=True)
class Relation:
    name: str
    subject: str  # entity kind
    object: str  # entity kind
    label: str  # MuSiQue's terse "X >> label" form
    question: str  # single-hop question about {x}
    phrase: str  # noun phrase naming the answer, for composed questions
    sentences: tuple[str, ...]  # how a paragraph of {s} states that its fact is {o}


RELATIONS: dict[str, Relation] = {
    r.name: r
    for r in (
        Relation("directed_by", "film", "person", "director", "Who directed {x}?", "the director of {x}",
                 ("{s} is a {year} {genre} film directed by {o}.", "Directed by {o}, {s} premiered in {year}.")),
        Relation("produced_by", "film", "company", "production company", "Which company produced {x}?",
                 "the company that produced {x}",
                 ("The film was produced by {o}.", "It was produced by {o} on a modest budget.")),
        Relation("set_in", "film", "city", "narrative location", "In which city is {x} set?",
                 "the city where {x} is set",
                 ("The story is set in {o}.", "Most of the film takes place in {o}.")),
        Relation("performer", "album", "person", "performer", "Who performed {x}?", "the performer of {x}",
                 ("{s} is a {year} {genre} album by {o}.", "{s} is the {ordinal} studio album by {o}.")),
        Relation("label", "album", "company", "record label", "Which label released {x}?",
                 "the label that released {x}",
                 ("It was released by {o}.", "The album was issued by {o} in {year}.")),
        Relation("recorded_in", "album", "city", "recording location", "Where was {x} recorded?",
                 "the city where {x} was recorded",
                 ("The album was recorded in {o}.", "Sessions for the album took place in {o}.")),
        Relation("born_in", "person", "city", "place of birth", "Where was {x} born?", "the birthplace of {x}",
                 ("{s} (born {year}) is a {occupation} who was born in {o}.", "{s} is a {occupation}, born in {o} in {year}.")),
        Relation("employer", "person", "company", "employer", "Which company did {x} work for?",
                 "the employer of {x}",
                 ("{s} later worked for {o}.", "For several years {s} was employed by {o}.")),
        Relation("spouse", "person", "person", "spouse", "Who is the spouse of {x}?", "the spouse of {x}",
                 ("{s} is married to {o}.", "In {year}, {s} married {o}.")),
        Relation("educated_at", "person", "university", "educated at", "Where did {x} study?",
                 "the university that {x} attended",
                 ("{s} studied at {o}.", "{s} graduated from {o} in {year}.")),
        Relation("country", "city", "country", "country", "In which country is {x}?",
                 "the country where {x} is located",
                 ("{s} is a {size} in {o}.", "{s} is a {size} located in the north of {o}.")),
        Relation("river", "city", "river", "located next to body of water", "Which river flows through {x}?",
                 "the river that flows through {x}",
                 ("The city lies on the banks of the {o}.", "{s} grew up around a crossing of the {o}.")),
        Relation("founded_by", "company", "person", "founded by", "Who founded {x}?", "the founder of {x}",
                 ("{s} is a {industry} company founded by {o} in {year}.", "{o} founded {s} in {year}.")),
        Relation("headquarters", "company", "city", "headquarters location", "Where is {x} headquartered?",
                 "the city where {x} is headquartered",
                 ("The company is headquartered in {o}.", "Its head office is in {o}.")),
        Relation("located_in", "university", "city", "located in", "In which city is {x} located?",
                 "the city that is home to {x}",
                 ("{s} is a public university in {o}.", "{s} is a research university based in {o}.")),
        Relation("university_founder", "university", "person", "founded by", "Who founded {x}?",
                 "the founder of {x}",
                 ("The university was founded by {o} in {year}.", "It was established by {o} in {year}.")),
        Relation("capital", "country", "city", "capital", "What is the capital of {x}?", "the capital of {x}",
                 ("The capital of {s} is {o}.", "{s} is governed from its capital, {o}.")),
        Relation("flows_into", "river", "sea", "mouth of the watercourse", "Into which body of water does {x} flow?",
                 "the body of water that {x} flows into",
                 ("The {s} flows into the {o}.", "The {s} empties into the {o} after a long course.")),
    )
}


@dataclass(frozen=True)
class Binary:
    """A fact with two known arguments, answering "which film was directed by A and produced by B"."""

    kind: str
    first: str  # relation name giving argument A
    second: str  # relation name giving argument B
    question: str
    phrase: str


BINARIES = (
    Binary("film", "directed_by", "produced_by", "Which film was directed by {a} and produced by {b}?",
           "the film directed by {a} and produced by {b}"),
    Binary("album", "performer", "label", "Which album by {a} was released by {b}?",
           "the album by {a} released by {b}"),
)

BINARY_KINDS = tuple(b.kind for b in BINARIES)
BINARY_FACT = "binary"  # key of the two-argument question's id in Entity.fact_ids

# Facts of each kind in paragraph order: the binary pairs come first so one paragraph states both.
FACT_ORDER = {
    "film": ("directed_by", "produced_by", "set_in"),
    "album": ("performer", "label", "recorded_in"),
    "person": ("born_in", "employer", "spouse", "educated_at"),
    "city": ("country", "river"),
    "company": ("founded_by", "headquarters"),
    "university": ("located_in", "university_founder"),
    "country": ("capital",),
    "river": ("flows_into",),
    "sea": (),
}


# ---------------------------------------------------------------- names

_ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "r", "s",
           "st", "t", "tr", "v", "w", "z", "th", "sh", "ch", "")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ou")
_CODAS = ("n", "r", "l", "s", "th", "m", "nd", "rk", "st", "", "", "")
_ADJECTIVES = ("Silent", "Crimson", "Golden", "Broken", "Hidden", "Distant", "Last", "Iron", "Hollow",
               "Burning", "Frozen", "Wild", "Quiet", "Bitter", "Velvet", "Scarlet", "Pale", "Endless",
               "Northern", "Lonely", "Secret", "Fallen", "Bright", "Winter", "Midnight", "Copper",
               "Shallow", "Restless", "Sleeping", "Painted", "Glass", "Stone", "Amber", "Salt")
_NOUNS = ("River", "Garden", "Harbor", "Mirror", "Season", "Road", "Crown", "Lantern", "Orchard",
          "Tide", "Voyage", "Kingdom", "Letter", "Bridge", "Summer", "Shadow", "Meadow", "Island",
          "Promise", "Signal", "Hour", "Tower", "Valley", "Witness", "Horizon", "Harvest", "Circle",
          "Frontier", "Echo", "Compass", "Ember", "Storm", "Forest", "Canyon")
_CITY_SUFFIXES = ("ford", "ton", "bury", "haven", "port", "field", "mouth", "dale", "wick", "stead",
                  "burg", "ville", "", "")
_COUNTRY_SUFFIXES = ("ia", "land", "stan", "ora", "avia", "esh", "onia")
_SURNAME_SUFFIXES = ("son", "ova", "ez", "ini", "berg", "ley", "", "", "")
_COMPANY_SUFFIXES = ("Pictures", "Studios", "Records", "Industries", "Holdings", "Motors", "Group",
                     "Media", "Works", "Entertainment")


def _word(rng: random.Random, syllables: int) -> str:
    parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)]
    return ("".join(parts) + rng.choice(_CODAS)).capitalize()


class _Names:
    """Unique invented names; a small pool of first names and roots makes names share tokens."""

    def __init__(self, rng: random.Random, scale: int):
        self.rng = rng
        self.taken: dict[str, None] = {}
        self.first_names = [_word(rng, rng.choice((1, 2, 2))) for _ in range(max(60, scale // 20))]
        self.roots = [_word(rng, 2) for _ in range(max(80, scale // 8))]

    def make(self, kind: str) -> str:
        for attempt in range(1000):
            name = self._candidate(kind, fresh=attempt >= 20)
            if name.casefold() not in self.taken:
                self.taken[name.casefold()] = None
                return name
        raise RuntimeError(f"could not invent a unique {kind} name")  # unreachable in practice

    def _candidate(self, kind: str, fresh: bool) -> str:
        rng = self.rng
        root = _word(rng, 2 + fresh) if fresh or rng.random() < 0.5 else rng.choice(self.roots)
        if kind == "person":
            last = _word(rng, 2) + rng.choice(_SURNAME_SUFFIXES)
            return f"{rng.choice(self.first_names)} {last}"
        if kind == "city":
            prefix = rng.choice(("", "", "", "", "Port ", "New ", "San "))
            return prefix + root + rng.choice(_CITY_SUFFIXES)
        if kind == "country":
            return root.rstrip("aeiou") + rng.choice(_COUNTRY_SUFFIXES)
        if kind == "company":
            return f"{root} {rng.choice(_COMPANY_SUFFIXES)}"
        if kind == "film":
            pattern = rng.randrange(4)
            adj, noun = rng.choice(_ADJECTIVES), rng.choice(_NOUNS)
            if pattern == 0:
                return f"The {adj} {noun}"
            if pattern == 1:
                return f"{noun} of {root}"
            if pattern == 2:
                return f"{adj} {noun} in {root}"
            return f"The {noun} of {root}"
        if kind == "album":
            adj, noun = rng.choice(_ADJECTIVES), rng.choice(_NOUNS)
            return rng.choice((f"{adj} {noun}s", f"Songs from {root}", f"{root} {noun}", f"{adj} {root}"))
        if kind == "university":
            return rng.choice((f"University of {root}", f"{root} Institute of Technology", f"{root} College"))
        if kind == "river":
            return f"{root} River"
        if kind == "sea":
            return rng.choice((f"{root} Sea", f"Gulf of {root}", f"{root} Bay"))
        raise ValueError(kind)


# ---------------------------------------------------------------- the world


@dataclass
class Entity:
    index: int
    kind: str
    name: str
    facts: dict[str, int] = field(default_factory=dict)  # relation name -> object entity index
    fact_ids: dict[str, int] = field(default_factory=dict)  # relation name -> single-hop question id


@dataclass(frozen=True)
class Paragraph:
    entity: int
    title: str
    text: str
    relations: tuple[str, ...]


ParagraphKey = tuple[int, int]  # (entity index, paragraph number within the entity)


@dataclass
class World:
    """Entities and facts; paragraphs are written on first use from a generator seeded per entity.

    Writing lazily keeps a 100,000-paragraph corpus fast (most invented entities are never shown),
    and a per-entity seed keeps every paragraph's text independent of the order of use.
    """

    seed: str
    entities: list[Entity]
    by_kind: dict[str, list[int]]
    pointing_at: dict[int, list[tuple[int, str]]]  # object -> [(subject, relation)]
    by_relation: dict[str, list[int]]  # relation -> subjects holding such a fact
    by_token: dict[str, list[int]]  # lowercased name token -> entities whose name holds it
    written: dict[int, list[Paragraph]] = field(default_factory=dict)

    def paragraphs(self, entity: int) -> list[Paragraph]:
        if entity not in self.written:
            rng = random.Random(f"{self.seed}/entity/{entity}")
            self.written[entity] = [
                Paragraph(entity, self.entities[entity].name, text, relations)
                for relations, text in _write_paragraphs(rng, self.entities[entity], self.entities)
            ]
        return self.written[entity]

    def keys(self, entity: int) -> list[ParagraphKey]:
        return [(entity, number) for number in range(len(self.paragraphs(entity)))]

    def paragraph(self, key: ParagraphKey) -> Paragraph:
        return self.paragraphs(key[0])[key[1]]

    def stating(self, entity: int, relation: str) -> ParagraphKey:
        """The paragraph of `entity` that states its `relation` fact."""
        for number, paragraph in enumerate(self.paragraphs(entity)):
            if relation in paragraph.relations:
                return entity, number
        raise KeyError((entity, relation))


_KIND_SHARES = {  # entities per question of the requested size
    "person": 10.0, "city": 4.5, "company": 4.0, "film": 6.0, "album": 3.0,
    "university": 1.2, "river": 1.6, "country": 0.25, "sea": 0.1,
}
_KIND_MINIMUM = {"country": 6, "sea": 4}


def build_world(seed: str, questions: int, id_parity: int) -> World:
    """Invent entities sized for `questions` rows and give them facts (paragraphs come lazily)."""
    rng = random.Random(f"{seed}/world")
    scale = max(questions, 20)
    names = _Names(rng, scale * 16)
    entities: list[Entity] = []
    by_kind: dict[str, list[int]] = {}
    for kind, share in _KIND_SHARES.items():
        count = max(_KIND_MINIMUM.get(kind, 4), math.ceil(share * scale))
        by_kind[kind] = []
        for _ in range(count):
            entity = Entity(len(entities), kind, names.make(kind))
            entities.append(entity)
            by_kind[kind].append(entity.index)
    _assign_facts(rng, entities, by_kind)
    counter = iter(range(1, 10**9))
    for entity in entities:
        # Odd ids in one file, even in the other: row ids never collide across train and dev.
        for relation in FACT_ORDER[entity.kind] + ((BINARY_FACT,) if entity.kind in BINARY_KINDS else ()):
            if relation in entity.facts or relation == BINARY_FACT:
                entity.fact_ids[relation] = 2 * (1000 + next(counter)) + id_parity
    pointing_at: dict[int, list[tuple[int, str]]] = {}
    by_relation: dict[str, list[int]] = {}
    by_token: dict[str, list[int]] = {}
    for entity in entities:
        for relation, target in entity.facts.items():
            pointing_at.setdefault(target, []).append((entity.index, relation))
            by_relation.setdefault(relation, []).append(entity.index)
        for token in entity.name.lower().split():
            if len(token) > 3:
                by_token.setdefault(token, []).append(entity.index)
    return World(seed, entities, by_kind, pointing_at, by_relation, by_token)


def _assign_facts(rng: random.Random, entities: list[Entity], by_kind: dict[str, list[int]]) -> None:
    def pick(kind: str) -> int:
        return rng.choice(by_kind[kind])

    countries, cities = by_kind["country"], by_kind["city"]
    cities_of: dict[int, list[int]] = {}
    for position, city in enumerate(cities):
        # Every country gets a city first, so every country has a capital of its own.
        country = countries[position] if position < len(countries) else pick("country")
        entities[city].facts["country"] = country
        cities_of.setdefault(country, []).append(city)
        if rng.random() < 0.45:
            entities[city].facts["river"] = pick("river")
    for country in countries:
        entities[country].facts["capital"] = rng.choice(cities_of[country])
    for river in by_kind["river"]:
        entities[river].facts["flows_into"] = pick("sea")
    people = by_kind["person"]
    for person in people:
        facts = entities[person].facts
        facts["born_in"] = pick("city")
        if rng.random() < 0.7:
            facts["employer"] = pick("company")
        if rng.random() < 0.6:
            facts["educated_at"] = pick("university")
    unmarried = list(people)
    rng.shuffle(unmarried)
    for a, b in zip(unmarried[0::2][: len(people) // 6], unmarried[1::2][: len(people) // 6]):
        entities[a].facts["spouse"] = b
        entities[b].facts["spouse"] = a
    for company in by_kind["company"]:
        entities[company].facts["founded_by"] = pick("person")
        entities[company].facts["headquarters"] = pick("city")
    for university in by_kind["university"]:
        entities[university].facts["located_in"] = pick("city")
        if rng.random() < 0.5:
            entities[university].facts["university_founder"] = pick("person")
    for film in by_kind["film"]:
        entities[film].facts["directed_by"] = pick("person")
        entities[film].facts["produced_by"] = pick("company")
        if rng.random() < 0.7:
            entities[film].facts["set_in"] = pick("city")
    for album in by_kind["album"]:
        entities[album].facts["performer"] = pick("person")
        entities[album].facts["label"] = pick("company")
        if rng.random() < 0.6:
            entities[album].facts["recorded_in"] = pick("city")


# ---------------------------------------------------------------- paragraphs

_GENRES = ("drama", "comedy", "thriller", "documentary", "romance", "science fiction", "crime", "folk",
           "jazz", "rock", "pop", "ambient")
_OCCUPATIONS = ("film director", "novelist", "mechanical engineer", "singer", "businessperson", "painter",
                "landscape architect", "politician", "stage actor", "composer", "labour economist", "journalist")
_INDUSTRIES = ("media", "film production", "music", "shipping", "software", "textile", "publishing",
               "civil engineering", "power generation")
_ORDINALS = ("debut", "second", "third", "fourth", "fifth")
_FILLERS = {
    "person": ("{s} received several awards during a career spanning {n} years.",
               "Critics have described the work of {s} as restrained and precise.",
               "{s} retired in {year} and wrote a memoir about those years."),
    "city": ("As of the {year} census, the population was {big}.",
             "The town was chartered in {year} and is known for its old market square.",
             "It sits at an elevation of {n}0 metres."),
    "country": ("The country has a population of about {big} people.",
                "Its official language is {s}n, and its currency was introduced in {year}."),
    "company": ("It employed about {n},000 people in {year}.", "The company was listed on the stock exchange in {year}."),
    "film": ("The film runs for 1{n} minutes.", "It grossed {n} million at the box office.",
             "The film received mixed reviews on release in {year}."),
    "album": ("The album peaked at number {n} on the national chart.", "It was reissued in {year} with bonus tracks."),
    "university": ("The university enrolls about {n},000 students.", "Its library was opened in {year}."),
    "river": ("The river is about {n}0 kilometres long.", "Its basin covers parts of several provinces."),
    "sea": ("The {s} is about {n}00 kilometres across at its widest point.",
            "Fishing fleets have worked the {s} since {year}."),
}
_OPENERS = ("In later years, {s} attracted wider attention.", "Much has been written about {s}.",
            "The history of {s} is well documented.", "{s} is also remembered for other reasons.")
_INTROS = {
    "person": "{s} is a {occupation} active since {year}.",
    "city": "{s} is a {size} with a long history of trade.",
    "country": "{s} is a sovereign state with a parliamentary system.",
    "company": "{s} is a {industry} company.",
    "film": "{s} is a {year} {genre} film.",
    "album": "{s} is a {year} {genre} album.",
    "university": "{s} is a university founded in {year}.",
    "river": "The {s} is a river with several tributaries.",
    "sea": "The {s} is a body of water known for its strong currents.",
}


def _fill(rng: random.Random, template: str, subject: str, obj: str = "") -> str:
    # Only the slots a template names are drawn, in a fixed order, so output depends on seed alone.
    values = {"s": subject, "o": obj}
    for slot, draw in (
        ("year", lambda: str(rng.randrange(1900, 2020))),  # "a 1950 film", never "a 1890 film"
        ("genre", lambda: rng.choice(_GENRES)),
        ("occupation", lambda: rng.choice(_OCCUPATIONS)),
        ("industry", lambda: rng.choice(_INDUSTRIES)),
        ("ordinal", lambda: rng.choice(_ORDINALS)),
        ("size", lambda: rng.choice(("city", "town", "port city", "market town"))),
        ("n", lambda: str(rng.randrange(2, 40))),
        ("big", lambda: f"{rng.randrange(2000, 900000):,}"),
    ):
        if "{" + slot + "}" in template:
            values[slot] = draw()
    return template.format(**values)


def _write_paragraphs(rng: random.Random, entity: Entity, entities: list[Entity]) -> list[tuple[tuple[str, ...], str]]:
    """Split an entity's facts over one to three paragraphs; the first states the leading pair."""
    relations = [r for r in FACT_ORDER[entity.kind] if r in entity.facts]
    wanted = rng.choice((1, 2, 2, 3))
    groups: list[list[str]] = [relations[:2]] + [[] for _ in range(wanted - 1)]
    for offset, relation in enumerate(relations[2:]):
        groups[1 + offset % (wanted - 1) if wanted > 1 else 0].append(relation)
    out = []
    for number, group in enumerate(groups):
        sentences = []
        if number == 0 and not (group and "{s}" in RELATIONS[group[0]].sentences[0]):
            sentences.append(_fill(rng, _INTROS[entity.kind], entity.name))
        for relation in group:
            template = rng.choice(RELATIONS[relation].sentences)
            sentences.append(_fill(rng, template, entity.name, entities[entity.facts[relation]].name))
        fillers = list(_FILLERS[entity.kind])
        rng.shuffle(fillers)
        for template in fillers[: 1 + (number > 0) + rng.randrange(2)]:
            sentences.append(_fill(rng, template, entity.name))
        if number > 0 and not any(entity.name in s for s in sentences):
            sentences.insert(0, rng.choice(_OPENERS).format(s=entity.name))
        out.append((tuple(group), " ".join(sentences)))
    return out


# ---------------------------------------------------------------- questions


@dataclass(frozen=True)
class Step:
    question: str
    answer: int  # entity index
    paragraph: ParagraphKey
    fact_id: int


@dataclass(frozen=True)
class Plan:
    category: str
    question: str
    steps: tuple[Step, ...]


def _single(world: World, subject: int, relation: str, shown: str) -> Step:
    entity = world.entities[subject]
    return Step(
        question=RELATIONS[relation].question.format(x=shown),
        answer=entity.facts[relation],
        paragraph=world.stating(subject, relation),
        fact_id=entity.fact_ids[relation],
    )


def _first(rng: random.Random, world: World, fact: tuple[int, str]) -> Step:
    """A step about a named entity; MuSiQue often writes those tersely as `Entity >> label`."""
    subject, relation = fact
    step = _single(world, subject, relation, world.entities[subject].name)
    if rng.random() < 0.3:
        terse = f"{world.entities[subject].name} >> {RELATIONS[relation].label}"
        return Step(terse, step.answer, step.paragraph, step.fact_id)
    return step


def _walk(rng: random.Random, world: World, length: int, avoid: tuple[int, ...] = (),
          start: int | None = None) -> list[tuple[int, str]] | None:
    """A chain of `length` facts without revisiting an entity: [(subject, relation), ...]."""
    current = rng.randrange(len(world.entities)) if start is None else start
    seen = [*avoid, current]
    chain = []
    for _ in range(length):
        options = [r for r in FACT_ORDER[world.entities[current].kind]
                   if r in world.entities[current].facts and world.entities[current].facts[r] not in seen]
        if not options:
            return None
        relation = rng.choice(options)
        chain.append((current, relation))
        current = world.entities[current].facts[relation]
        seen.append(current)
    return chain


def _walk_to(rng: random.Random, world: World, target: int, length: int, avoid: tuple[int, ...]) -> list[tuple[int, str]] | None:
    """A chain of `length` facts ending at `target`, found backwards through the facts pointing at it."""
    chain: list[tuple[int, str]] = []
    current, seen = target, [*avoid, target]
    for _ in range(length):
        options = [(s, r) for s, r in world.pointing_at.get(current, ()) if s not in seen]
        if not options:
            return None
        subject, relation = rng.choice(options)
        chain.insert(0, (subject, relation))
        seen.append(subject)
        current = subject
    return chain


def linear_plan(rng: random.Random, world: World, category: str, length: int) -> Plan | None:
    chain = _walk(rng, world, length)
    if chain is None:
        return None
    start_name = world.entities[chain[0][0]].name
    steps = [_first(rng, world, chain[0])]
    shown = start_name
    for number, (subject, relation) in enumerate(chain[1:], start=1):
        steps.append(_single(world, subject, relation, f"#{number}"))
    for _, relation in chain[:-1]:
        shown = RELATIONS[relation].phrase.format(x=shown)
    question = RELATIONS[chain[-1][1]].question.format(x=shown)
    return Plan(category, _capitalize(question), tuple(steps))


def _binary_target(rng: random.Random, world: World) -> tuple[Binary, int] | None:
    binary = rng.choice(BINARIES)
    subject = rng.choice(world.by_kind[binary.kind])
    facts = world.entities[subject].facts
    pair = (facts[binary.first], facts[binary.second])
    # The pair must name one work only, or the question would have two answers.
    rivals = [s for s, r in world.pointing_at[pair[0]] if r == binary.first and world.entities[s].facts[binary.second] == pair[1]]
    return (binary, subject) if rivals == [subject] else None


def _composed(rng: random.Random, world: World, category: str) -> Plan | None:
    """3hop2, 4hop2 and 4hop3: two independent branches meet in a fact with two arguments."""
    target = _binary_target(rng, world)
    if target is None:
        return None
    binary, work = target
    facts = world.entities[work].facts
    first_len = 2 if category == "4hop3" else 1
    first = _walk_to(rng, world, facts[binary.first], first_len, avoid=(work,))
    if first is None:
        return None
    used = tuple(s for s, _ in first) + (work, facts[binary.first])
    second = _walk_to(rng, world, facts[binary.second], 1, avoid=used)
    if second is None:
        return None
    tail = None
    if category == "4hop2":
        tail = _walk(rng, world, 1, avoid=used + (second[0][0], facts[binary.second]), start=work)
        # Like MuSiQue, every step gets a paragraph of its own.
        if tail is None or world.stating(work, tail[0][1]) == world.stating(work, binary.first):
            return None
    steps = [_first(rng, world, first[0])]
    shown_first = world.entities[first[0][0]].name
    phrase_first = RELATIONS[first[0][1]].phrase.format(x=shown_first)
    if first_len == 2:
        steps.append(_single(world, first[1][0], first[1][1], "#1"))
        phrase_first = RELATIONS[first[1][1]].phrase.format(x=phrase_first)
    shown_second = world.entities[second[0][0]].name
    steps.append(_first(rng, world, second[0]))
    phrase_second = RELATIONS[second[0][1]].phrase.format(x=shown_second)
    a, b = f"#{len(steps) - 1}", f"#{len(steps)}"
    steps.append(Step(binary.question.format(a=a, b=b), work, world.stating(work, binary.first),
                      world.entities[work].fact_ids[BINARY_FACT]))
    if tail is not None:
        steps.append(_single(world, work, tail[0][1], f"#{len(steps)}"))
        work_phrase = binary.phrase.format(a=phrase_first, b=phrase_second)
        question = RELATIONS[tail[0][1]].question.format(x=work_phrase)
    else:
        question = binary.question.format(a=phrase_first, b=phrase_second)
    return Plan(category, _capitalize(question), tuple(steps))


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def _plan(rng: random.Random, world: World, category: str) -> Plan | None:
    if category == "2hop":
        return linear_plan(rng, world, category, 2)
    if category == "3hop1":
        return linear_plan(rng, world, category, 3)
    if category == "4hop1":
        return linear_plan(rng, world, category, 4)
    return _composed(rng, world, category)


# ---------------------------------------------------------------- rows


def pick_distractors(rng: random.Random, world: World, plan: Plan, wanted: int) -> list[ParagraphKey]:
    """Paragraphs that look like evidence: same entities, same relations, same neighbours, same names."""
    supporting = [s.paragraph for s in plan.steps]
    chain_entities = [key[0] for key in supporting] + [s.answer for s in plan.steps]
    pools: list[list[ParagraphKey]] = [[key for e in chain_entities for key in world.keys(e)]]
    for step in plan.steps:
        for relation in world.paragraph(step.paragraph).relations:
            holders = world.by_relation[relation]
            pools.append([world.stating(rng.choice(holders), relation) for _ in range(3)])
    neighbours = []
    for step in plan.steps:
        pointing = world.pointing_at.get(step.answer, [])
        for subject, relation in rng.sample(pointing, min(12, len(pointing))):
            neighbours.append(world.stating(subject, relation))
    pools.append(neighbours)
    namesakes: list[ParagraphKey] = []
    for token in world.entities[supporting[0][0]].name.lower().split():
        holders = world.by_token.get(token, [])
        namesakes.extend((other, 0) for other in rng.sample(holders, min(20, len(holders))))
    pools.append(namesakes)
    for pool in pools:
        rng.shuffle(pool)
    chosen: dict[ParagraphKey, None] = dict.fromkeys(supporting)
    out: list[ParagraphKey] = []
    while len(out) < wanted and any(pools):
        for pool in pools:
            while pool:
                candidate = pool.pop()
                if candidate not in chosen:
                    chosen[candidate] = None
                    out.append(candidate)
                    break
            if len(out) == wanted:
                break
    while len(out) < wanted:  # tiny worlds only: any first paragraph will do
        candidate = (rng.randrange(len(world.entities)), 0)
        if candidate not in chosen:
            chosen[candidate] = None
            out.append(candidate)
    return out


def _row(rng: random.Random, world: World, plan: Plan) -> dict:
    supporting = [s.paragraph for s in plan.steps]
    distinct_support = list(dict.fromkeys(supporting))
    picked = distinct_support + pick_distractors(rng, world, plan, PARAGRAPHS_PER_ROW - len(distinct_support))
    rng.shuffle(picked)
    position = {key: idx for idx, key in enumerate(picked)}
    paragraphs = [
        {"idx": idx, "title": world.paragraph(key).title, "paragraph_text": world.paragraph(key).text,
         "is_supporting": key in supporting}
        for idx, key in enumerate(picked)
    ]
    decomposition = [
        {"id": step.fact_id, "question": step.question, "answer": world.entities[step.answer].name,
         "paragraph_support_idx": position[step.paragraph]}
        for step in plan.steps
    ]
    answer = world.entities[plan.steps[-1].answer]
    return {
        "id": f"{plan.category}__" + "_".join(str(s.fact_id) for s in plan.steps),
        "paragraphs": paragraphs,
        "question": plan.question,
        "question_decomposition": decomposition,
        "answer": answer.name,
        "answer_aliases": _aliases(answer),
        "answerable": True,
    }


def _aliases(entity: Entity) -> list[str]:
    if entity.kind == "river":
        return [entity.name.removesuffix(" River")]
    if entity.kind == "person":
        return [entity.name.split(" ", 1)[1]]
    return []


def category_counts(questions: int) -> dict[str, int]:
    """Rows per category: 40% two-hop, 30% three-hop, 30% four-hop, spread over the sub-types."""
    two = round(0.4 * questions)
    three = round(0.3 * questions)
    four = questions - two - three
    return {"2hop": two, "3hop1": three - three // 3, "3hop2": three // 3,
            "4hop1": four - 2 * (four // 3), "4hop2": four // 3, "4hop3": four // 3}


def generate_rows(seed: str, questions: int, id_parity: int = 0) -> list[dict]:
    """`questions` answerable rows over a world of their own, in a seeded order."""
    if questions < 1:
        raise ValueError("questions must be positive")
    world = build_world(seed, questions, id_parity)
    rng = random.Random(f"{seed}/questions")
    rows: list[dict] = []
    seen_ids: dict[str, None] = {}
    seen_questions: dict[str, None] = {}
    for category, count in category_counts(questions).items():
        made, attempts = 0, 0
        while made < count:
            attempts += 1
            if attempts > 1000 * count + 1000:
                raise RuntimeError(f"world too small for {count} {category} questions")
            plan = _plan(rng, world, category)
            if plan is None:
                continue
            key = plan.question.strip().casefold()
            row = _row(rng, world, plan)
            if row["id"] in seen_ids or key in seen_questions:
                continue
            seen_ids[row["id"]] = None
            seen_questions[key] = None
            rows.append(row)
            made += 1
    rng.shuffle(rows)
    return rows


# ---------------------------------------------------------------- files


def split_sizes(questions: int) -> dict[str, int]:
    """Dev rows (where the reserved test split comes from) and train rows (development split)."""
    return {"train": math.ceil(0.35 * questions), "dev": questions}


def render_rows(rows: list[dict]) -> bytes:
    # Python's json.dumps defaults, one object a line: the shape of the shared MuSiQue sample.
    return "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")


def generate_files(seed: str = DEFAULT_SEED, questions: int = DEFAULT_QUESTIONS) -> dict[str, bytes]:
    """File name -> bytes of the train and dev JSONL files (separate worlds, disjoint row ids)."""
    sizes = split_sizes(questions)
    return {
        TRAIN_NAME: render_rows(generate_rows(f"{seed}/train", sizes["train"], id_parity=0)),
        DEV_NAME: render_rows(generate_rows(f"{seed}/dev", sizes["dev"], id_parity=1)),
    }


def write_files(out_dir: Path, files: dict[str, bytes]) -> list[Path]:
    """Write into a new directory (the caller refused an existing one)."""
    out_dir.mkdir(parents=True)
    written = []
    for name, data in files.items():
        path = out_dir / name
        with open(path, "xb") as handle:
            handle.write(data)
        written.append(path)
    return written


def distinct_paragraphs(rows: list[dict]) -> list[tuple[str, str]]:
    """(title, paragraph_text) pairs in first-seen order: the corpus the importer would dedupe to."""
    seen: dict[tuple[str, str], None] = {}
    for row in rows:
        for paragraph in row["paragraphs"]:
            seen.setdefault((paragraph["title"], paragraph["paragraph_text"]), None)
    return list(seen)


def corpus_of_size(seed: str, documents: int) -> list[tuple[str, str]]:
    """Exactly `documents` distinct paragraphs, for benchmarks: rows are generated until enough."""
    questions = max(10, documents // 13)  # rows yield about 15 new paragraphs each; one pass usually
    while True:
        pairs = distinct_paragraphs(generate_rows(seed, questions))
        if len(pairs) >= documents:
            return pairs[:documents]
        questions = math.ceil(questions * documents / max(len(pairs), 1) * 1.1)


def iter_hop_prefixes(rows: list[dict]) -> Iterator[str]:
    return (row["id"].partition("__")[0] for row in rows)
