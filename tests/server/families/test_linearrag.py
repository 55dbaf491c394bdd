"""LinearRAG's rules (docs/linearrag.md) against its own code and igraph.

`linearrag_scores` below transcribes LinearRAG's `calculate_entity_scores` and
`calculate_passage_scores` (src/LinearRAG.py at 4ecfa25) with their data structures (hash ids,
index maps, numpy weight arrays, dicts in insertion order), fed the lab's declared orders (sets
ascending, sentences by cosine then text) and float64 cosines: the lab's bridging and passage
weights must equal it on random graphs. igraph's personalized PageRank (prpack), which LinearRAG
runs, is the oracle of the integer walk over its passage-entity graph.
"""

from __future__ import annotations

import hashlib
import math
import random
from fractions import Fraction
from functools import partial

import igraph
import numpy as np
import pytest

from builders.linearrag_graph import build, question_entities
from protocols.families.graphs.linearrag import ENTITY, LINEARRAG_PROFILES, PASSAGE, draw_key
from server.families.linearrag.bridging import bridge, normalized, passage_weights, seed_units
from server.retrieval.whole_graph_pagerank import pagerank, reset_of, transitions

MUSIQUE = LINEARRAG_PROFILES["linearrag_musique_v1"]
TWO_WIKI = LINEARRAG_PROFILES["linearrag_2wiki_v1"]
MUSIQUE_V2 = LINEARRAG_PROFILES["linearrag_musique_v2"]


class Sentence:
    def __init__(self, text: str):
        self.text, self.id = text, "mem-" + text


def random_world(seed: int):
    rng = random.Random(seed)
    entities = [f"E{i}" for i in range(12)]
    sentences = [f"s{i}" for i in range(20)]
    named = {s: sorted(rng.sample(entities, rng.randint(1, 4))) for s in sentences}
    cosine = {s: round(rng.uniform(-0.2, 0.95), 6) for s in sentences}
    links = [(e, round(rng.uniform(0.3, 1.0), 6)) for e in sorted(rng.sample(entities, rng.randint(1, 3)))]
    return entities, sentences, named, cosine, links


def linearrag_scores(entities, sentences, named, cosine, links, rules, order=str):
    """LinearRAG's calculate_entity_scores, transcribed (its variable names kept), its sets iterated
    and its argsort's ties broken in `order` (the lab's v1 ascending text, or a v2 draw)."""
    named = {s: sorted(found, key=order) for s, found in named.items()}
    links = sorted(links, key=lambda link: order(link[0]))
    node_name_to_vertex_idx = {e: i for i, e in enumerate(entities)}
    entity_hash_id_to_sentence_hash_ids = {e: [s for s in sentences if e in named[s]] for e in entities}
    sentence_hash_id_to_entity_hash_ids = named
    actived_entities = {}
    entity_weights = np.zeros(len(entities))
    for seed_entity_hash_id, seed_entity_score in links:
        actived_entities[seed_entity_hash_id] = (node_name_to_vertex_idx[seed_entity_hash_id], seed_entity_score, 1)
        entity_weights[node_name_to_vertex_idx[seed_entity_hash_id]] = seed_entity_score
    used_sentence_hash_ids = set()
    current_entities = actived_entities.copy()
    iteration = 1
    while len(current_entities) > 0 and iteration < rules["max_iterations"]:
        new_entities = {}
        for entity_hash_id, (_, entity_score, _) in current_entities.items():
            if entity_score < rules["iteration_threshold"]:
                continue
            sentence_hash_ids = [sid for sid in list(entity_hash_id_to_sentence_hash_ids[entity_hash_id])
                                 if sid not in used_sentence_hash_ids]
            if not sentence_hash_ids:
                continue
            sentence_similarities = np.array([cosine[sid] for sid in sentence_hash_ids])
            # the lab's declared order for ties (LinearRAG's argsort leaves them to quicksort)
            top_sentence_indices = sorted(range(len(sentence_hash_ids)),
                                          key=lambda i: (-sentence_similarities[i], order(sentence_hash_ids[i])))
            for top_sentence_index in top_sentence_indices[: rules["top_k_sentence"]]:
                top_sentence_hash_id = sentence_hash_ids[top_sentence_index]
                top_sentence_score = sentence_similarities[top_sentence_index]
                used_sentence_hash_ids.add(top_sentence_hash_id)
                for next_entity_hash_id in sentence_hash_id_to_entity_hash_ids[top_sentence_hash_id]:
                    next_entity_score = entity_score * top_sentence_score
                    if next_entity_score < rules["iteration_threshold"]:
                        continue
                    entity_weights[node_name_to_vertex_idx[next_entity_hash_id]] += next_entity_score
                    new_entities[next_entity_hash_id] = (node_name_to_vertex_idx[next_entity_hash_id],
                                                         next_entity_score, iteration + 1)
        actived_entities.update(new_entities)
        current_entities = new_entities.copy()
        iteration += 1
    return entity_weights, actived_entities


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("profile", [MUSIQUE, TWO_WIKI], ids=["musique", "2wiki"])
def test_the_bridging_is_linearrags(seed, profile):
    entities, sentences, named, cosine, links = random_world(seed)
    weights, activated = linearrag_scores(entities, sentences, named, cosine, links, profile["bridging"])
    of = {e: [Sentence(s) for s in sentences if e in named[s]] for e in entities}
    mine = bridge(links, lambda e: of[e], lambda found: [cosine[s.text] for s in found],
                  lambda text: named[text], profile["bridging"])
    assert list(mine.activated) == list(activated)  # the same order: a later activation keeps its place
    assert {e: (score, tier) for e, (score, tier) in mine.activated.items()} == \
        {e: (float(score), tier) for e, (_, score, tier) in activated.items()}
    assert {e: weights[i] for i, e in enumerate(entities) if weights[i]} == {e: w for e, w in mine.weights.items() if w}


@pytest.mark.parametrize("seed", range(40))
def test_the_bridging_under_a_draw_is_linearrags_under_that_order(seed):
    """v2: the question's entities, a sentence's entities and ties among an entity's sentences taken in
    the profile's draw for the question; the transcription of LinearRAG, fed the same orders, agrees."""
    entities, sentences, named, cosine, links = random_world(seed)
    cosine = {s: round(value, 1) for s, value in cosine.items()}  # many ties, for the draw to break
    question = hashlib.sha256(f"question {seed}".encode()).hexdigest()
    order = partial(draw_key, MUSIQUE_V2["draw"], question)
    weights, activated = linearrag_scores(entities, sentences, named, cosine, links, MUSIQUE_V2["bridging"], order)
    of = {e: [Sentence(s) for s in sentences if e in named[s]] for e in entities}
    mine = bridge(sorted(links, key=lambda link: order(link[0])), lambda e: of[e],
                  lambda found: [cosine[s.text] for s in found], lambda text: named[text], MUSIQUE_V2["bridging"], order)
    assert list(mine.activated) == list(activated)
    assert {e: (score, tier) for e, (score, tier) in mine.activated.items()} == \
        {e: (float(score), tier) for e, (_, score, tier) in activated.items()}
    assert {e: weights[i] for i, e in enumerate(entities) if weights[i]} == {e: w for e, w in mine.weights.items() if w}


def test_the_draw_is_a_permutation_per_question_that_favours_no_text():
    """The same question always draws the same order; across questions each of two texts comes first
    about half the time (ascending text would always put 'Otto Preminger' before 'Otto Preminger\\n')."""
    draw = MUSIQUE_V2["draw"]
    questions = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(400)]
    texts = ["Otto Preminger", "Otto Preminger\n"]
    first = sum(min(texts, key=partial(draw_key, draw, q)) == texts[0] for q in questions)
    assert 160 <= first <= 240, first
    assert draw_key(draw, questions[0], texts[0]) == draw_key(draw, questions[0], texts[0])
    other = {**draw, "seed": "another seed"}
    assert draw_key(other, questions[0], texts[0]) != draw_key(draw, questions[0], texts[0])
    with pytest.raises(ValueError, match="unknown draw rule"):
        draw_key({**draw, "rule": "ascending"}, questions[0], texts[0])


def test_a_round_stops_at_the_threshold_and_never_takes_a_sentence_twice():
    named = {"a1": ["A", "B"], "a2": ["A", "C"], "b1": ["B", "C"]}
    cosine = {"a1": 0.9, "a2": 0.05, "b1": 0.8}
    of = {e: [Sentence(s) for s in sorted(named) if e in named[s]] for e in "ABC"}
    rules = {"max_iterations": 5, "iteration_threshold": 0.1, "top_k_sentence": 4}
    out = bridge([("A", 1.0)], lambda e: of[e], lambda found: [cosine[s.text] for s in found],
                 lambda text: named[text], rules)
    # round 1: A takes a1 (0.9), which names A again and B, and a2 (0.05: A and C would score 0.05,
    # under the threshold); round 2: A has no sentence left, B takes b1 (0.9 x 0.8), naming B again
    # and C; round 3: neither has one left, and the rounds stop
    assert list(out.activated) == ["A", "B", "C"]  # A re-activated keeps its first place
    assert out.activated == {"A": (0.9, 2), "B": (0.9 * 0.8, 3), "C": (0.9 * 0.8, 3)}
    assert out.weights == {"A": 1.0 + 0.9, "B": 0.9 + 0.9 * 0.8, "C": 0.9 * 0.8}
    assert [[(spread[0], [t.sentence for t in spread[2]]) for spread in one] for one in out.rounds] == [
        [("A", ["a1", "a2"])], [("B", ["b1"])], []]


def test_passage_weights_are_linearrags_calculate_passage_scores():
    dense = np.array([0.2, 0.7, 0.4, 0.7])
    activated = {"Paris": (0.8, 1), "Seine": (0.5, 2)}
    occurrences = {"Paris": (np.array([0, 1]), np.array([2, 1])), "Seine": (np.array([1]), np.array([3]))}
    passages = MUSIQUE["passages"]
    got = passage_weights(dense, activated, occurrences.__getitem__, passages)
    norm = (dense - dense.min()) / (dense.max() - dense.min())
    want = []
    for i in range(4):
        bonus = 0.0
        for entity, (score, tier) in activated.items():
            where, counts = occurrences[entity]
            count = dict(zip(where.tolist(), counts.tolist())).get(i, 0)
            if count > 0:
                bonus += score * math.log(1 + count) / tier
        want.append((passages["passage_ratio"] * norm[i] + math.log(1 + bonus)) * passages["passage_node_weight"])
    assert got.tolist() == want
    assert normalized(np.array([0.3, 0.3])).tolist() == [1.0, 1.0]  # min_max_normalize's equal case
    assert seed_units(-0.2, 32) == 0 and seed_units(0.5, 32) == 1 << 31


def test_the_graph_is_linearrags():
    passages = {"p1": "Paris is in France. Paris is big.", "p2": "The Seine flows through Paris."}
    found = {"p1": [("Paris", "GPE", "Paris is in France."), ("France", "GPE", "Paris is in France."),
                    ("Paris", "GPE", "Paris is big.")],
             "p2": [("Seine", "LOC", "The Seine flows through Paris."), ("Paris", "GPE", "The Seine flows through Paris.")]}
    graph = build(passages, found)
    assert graph.entities == ["France", "Paris", "Seine"]
    assert graph.counts == {"p1": {"Paris": 2, "France": 1}, "p2": {"Seine": 1, "Paris": 1}}
    assert graph.weights()[("p1", "Paris")] == Fraction(2, 3)
    assert graph.sentence_entities["Paris is in France."] == {"France": ["GPE"], "Paris": ["GPE"]}
    assert question_entities([("Paris", "GPE", ""), ("PARIS", "GPE", ""), ("1990", "DATE", "")]) == ["1990", "paris"]


@pytest.mark.parametrize("seed", range(25))
def test_the_integer_walk_ranks_as_igraph_does(seed):
    """LinearRAG's run_ppr: igraph's personalized_pagerank (prpack, damping 0.5, undirected, weighted)
    over entities and passages, reset = the node weights; the lab's walk on its grids gives the same
    passage order (every pair whose igraph masses differ by more than 1e-9 of the total)."""
    rng = random.Random(seed)
    passages = [f"p{i:02d}" for i in range(15)]
    entities = [f"E{i}" for i in range(10)]
    counts = {p: {e: rng.randint(1, 3) for e in rng.sample(entities, rng.randint(1, 4))} for p in passages[:-2]}
    weights = {(PASSAGE + p, ENTITY + e): Fraction(n, sum(held.values())) for p, held in counts.items()
               for e, n in held.items()}
    nodes = [PASSAGE + p for p in passages] + [ENTITY + e for e in entities]
    seeds = [rng.uniform(0, 0.15) for _ in passages] + [rng.choice([0.0, 0.0, rng.uniform(0.2, 2.0)]) for _ in entities]
    walk = transitions(nodes, weights, 26)
    units = [seed_units(w, 32) for w in seeds]
    mass = pagerank(walk, reset_of(units, 36), 40).mass[: len(passages)]
    graph = igraph.Graph(n=len(nodes), edges=[(walk.position[a], walk.position[b]) for a, b in weights], directed=False)
    graph.es["weight"] = [float(w) for w in weights.values()]
    theirs = np.array(graph.personalized_pagerank(damping=0.5, directed=False, weights="weight", reset=seeds,
                                                  implementation="prpack"))[: len(passages)]
    for i in range(len(passages)):
        for j in range(len(passages)):
            if theirs[i] > theirs[j] + 1e-9:
                assert mass[i] > mass[j], (passages[i], passages[j])
