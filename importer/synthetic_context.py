"""HotpotQA- and 2WikiMultihopQA-shaped rows over the synthetic world (docs/synthetic.md).

The world, its facts and its paragraphs are importer.synthetic's; only the question shapes and
the row format differ. A row carries 10 context paragraphs as [title, sentences] pairs with one
paragraph per title, `supporting_facts` naming the sentence that states each fact, and the
dataset's official keys, so the readers of `hotpotqa_distractor_v1` and `2wikimultihopqa_v1` can
be tested without the shared samples. Question shapes:

- HotpotQA `bridge`, 2Wiki `compositional`: a two-fact chain ("Where was the director of X born?");
- 2Wiki `inference`: a two-fact chain through a spouse ("Which company did the spouse of X work for?");
- `comparison`: one fact of two entities ("Is the director of X the same as the director of Y?");
- 2Wiki `bridge_comparison`: a two-fact chain from each of two entities, compared at the end.

The files are JSON arrays with one row a line, like the shared samples; same seed and size, same
bytes.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from importer.synthetic import RELATIONS, Plan, Step, World, build_world, linear_plan, pick_distractors

CONTEXT_PARAGRAPHS = 10
HOTPOTQA_NAME = "synthetic_hotpotqa_dev.json"
TWOWIKI_NAME = "synthetic_2wikimultihopqa_dev.json"
SHAPES: dict[str, dict[str, Any]] = {
    "hotpotqa": {"name": HOTPOTQA_NAME, "id_hex": 24, "joiner": "",
                 "types": {"bridge": 0.65, "comparison": 0.35}},
    "2wikimultihopqa": {"name": TWOWIKI_NAME, "id_hex": 32, "joiner": " ",
                        "types": {"compositional": 0.35, "comparison": 0.3, "bridge_comparison": 0.2,
                                  "inference": 0.15}},
}
DEFAULT_SEED = "synthetic-context-v1"
_SENTENCE_END = re.compile(r"(?<=[.?!]) ")


def type_counts(shape: str, questions: int) -> dict[str, int]:
    """Rows per type: the shape's shares of `questions`, the remainder to the first type."""
    shares = SHAPES[shape]["types"]
    counts = {name: int(share * questions) for name, share in shares.items()}
    first = next(iter(shares))
    counts[first] += questions - sum(counts.values())
    return counts


def generate_context_rows(shape: str, seed: str, questions: int) -> list[dict]:
    """`questions` rows of `shape` ("hotpotqa" or "2wikimultihopqa") in a seeded order."""
    if questions < 1:
        raise ValueError("questions must be positive")
    world = build_world(f"{seed}/{shape}", questions, id_parity=1)
    rng = random.Random(f"{seed}/{shape}/questions")
    rows: list[dict] = []
    seen: dict[str, None] = {}
    for row_type, count in type_counts(shape, questions).items():
        made, attempts = 0, 0
        while made < count:
            attempts += 1
            if attempts > 1000 * count + 1000:
                raise RuntimeError(f"world too small for {count} {row_type} questions")
            made_plan = _PLANS[row_type](rng, world)
            if made_plan is None:
                continue
            plan, answer = made_plan
            key = plan.question.strip().casefold()
            if key in seen:
                continue
            seen[key] = None
            rows.append(_row(rng, world, shape, row_type, plan, answer, seed, len(rows)))
            made += 1
    rng.shuffle(rows)
    return rows


def render_array(rows: list[dict]) -> bytes:
    """A JSON array with one row a line (the layout of the shared samples)."""
    return ("[\n" + ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n]\n").encode("utf-8")


def generate_context_file(shape: str, seed: str = DEFAULT_SEED, questions: int = 60) -> dict[str, bytes]:
    """File name -> bytes of the shape's one dev file."""
    return {SHAPES[shape]["name"]: render_array(generate_context_rows(shape, seed, questions))}


# ---------------------------------------------------------------- question shapes


def _chain(rng: random.Random, world: World) -> tuple[Plan, str] | None:
    plan = linear_plan(rng, world, "2hop", 2)
    return None if plan is None else (plan, world.entities[plan.steps[-1].answer].name)


def _spouse_chain(rng: random.Random, world: World) -> tuple[Plan, str] | None:
    married = [e for e in world.by_kind["person"] if "spouse" in world.entities[e].facts]
    if not married:
        return None
    person = rng.choice(married)
    spouse = world.entities[person].facts["spouse"]
    options = [r for r in ("born_in", "employer", "educated_at") if r in world.entities[spouse].facts]
    if not options:
        return None
    relation = rng.choice(options)
    name = world.entities[person].name
    question = RELATIONS[relation].question.format(x=RELATIONS["spouse"].phrase.format(x=name))
    steps = (_step(world, person, "spouse"), _step(world, spouse, relation))
    return Plan("inference", question, steps), world.entities[steps[-1].answer].name


def _comparison(rng: random.Random, world: World) -> tuple[Plan, str] | None:
    relation = rng.choice(sorted(RELATIONS))
    holders = [e for e in world.by_relation.get(relation, ())]
    if len(holders) < 2:
        return None
    a, b = rng.sample(holders, 2)
    label = RELATIONS[relation].label
    names = world.entities[a].name, world.entities[b].name
    question = f"Is the {label} of {names[0]} the same as the {label} of {names[1]}?"
    same = world.entities[a].facts[relation] == world.entities[b].facts[relation]
    return Plan("comparison", question, (_step(world, a, relation), _step(world, b, relation))), "yes" if same else "no"


def _bridge_comparison(rng: random.Random, world: World) -> tuple[Plan, str] | None:
    first = rng.choice(("directed_by", "performer", "founded_by"))
    second = rng.choice(("born_in", "employer", "educated_at"))
    holders = [e for e in world.by_relation.get(first, ())
               if second in world.entities[world.entities[e].facts[first]].facts]
    if len(holders) < 2:
        return None
    a, b = rng.sample(holders, 2)
    pa, pb = world.entities[a].facts[first], world.entities[b].facts[first]
    if pa == pb:
        return None
    label = RELATIONS[second].label
    inner = RELATIONS[first].phrase
    question = (f"Is the {label} of {inner.format(x=world.entities[a].name)} the same as the {label} of "
                f"{inner.format(x=world.entities[b].name)}?")
    same = world.entities[pa].facts[second] == world.entities[pb].facts[second]
    steps = (_step(world, a, first), _step(world, b, first), _step(world, pa, second), _step(world, pb, second))
    return Plan("bridge_comparison", question, steps), "yes" if same else "no"


def _step(world: World, subject: int, relation: str) -> Step:
    entity = world.entities[subject]
    return Step(RELATIONS[relation].question.format(x=entity.name), entity.facts[relation],
                world.stating(subject, relation), entity.fact_ids[relation])


_PLANS = {"bridge": _chain, "compositional": _chain, "inference": _spouse_chain,
          "comparison": _comparison, "bridge_comparison": _bridge_comparison}


# ---------------------------------------------------------------- rows


def _sentences(text: str, joiner: str) -> list[str]:
    """The paragraph's sentences such that joiner.join(sentences) == text (HotpotQA keeps each
    later sentence's leading space; 2Wiki drops it)."""
    parts = _SENTENCE_END.split(text)
    if joiner == " ":
        return parts
    return parts[:1] + [" " + part for part in parts[1:]]


def _row(rng: random.Random, world: World, shape: str, row_type: str, plan: Plan, answer: str,
         seed: str, number: int) -> dict:
    spec = SHAPES[shape]
    supporting = list(dict.fromkeys(step.paragraph for step in plan.steps))
    titles = {world.paragraph(key).title for key in supporting}
    context_keys = list(supporting)
    for key in pick_distractors(rng, world, plan, 3 * CONTEXT_PARAGRAPHS):
        if len(context_keys) == CONTEXT_PARAGRAPHS:
            break
        if world.paragraph(key).title not in titles:  # one paragraph per title, as in the datasets
            titles.add(world.paragraph(key).title)
            context_keys.append(key)
    rng.shuffle(context_keys)
    context = [[world.paragraph(key).title, _sentences(world.paragraph(key).text, spec["joiner"])]
               for key in context_keys]
    facts = []
    for step in plan.steps:
        paragraph = world.paragraph(step.paragraph)
        sentences = _sentences(paragraph.text, spec["joiner"])
        answer_name = world.entities[step.answer].name
        index = next((i for i, s in enumerate(sentences) if answer_name in s), 0)
        facts.append([paragraph.title, index])
    row_id = hashlib.sha256(f"{seed}/{shape}/{number}".encode()).hexdigest()[: spec["id_hex"]]
    if shape == "hotpotqa":
        return {"_id": row_id, "answer": answer, "question": plan.question, "supporting_facts": facts,
                "context": context, "type": row_type, "level": "medium"}
    evidences = [[world.paragraph(step.paragraph).title, _relation_label(world, step),
                  world.entities[step.answer].name] for step in plan.steps]
    return {"_id": row_id, "type": row_type, "question": plan.question, "context": context,
            "supporting_facts": facts, "evidences": evidences, "answer": answer, "entity_ids": "",
            "evidences_id": [], "answer_id": ""}


def _relation_label(world: World, step: Step) -> str:
    subject = world.entities[step.paragraph[0]]
    return next(RELATIONS[r].label for r, target in subject.facts.items()
                if target == step.answer and subject.fact_ids.get(r) == step.fact_id)
