"""A search route, the wire name of a method family, and everything a family declares about it.

A family declares its routes in its own module of protocols/families/ and the registry
(protocols/routes.py) lists the module once; the server binds a handler and the evaluator a
verifier to each route, and every other part reads this declaration instead of naming a family:

- `request`: the fields every request carries, in wire order: `profile`, the query parts (its
  text, its vector, its entities), `limit`, then the method's own fields, copied from the
  protocol's method as they are;
- `optional`: the request fields a request may leave out (a default applies: the route's first
  profile, min_score -1, a graph profile's expansion defaults);
- `limit`: how far `limit` may go, from the profile (`profile_limit`) or fixed (`SEARCH_LIMIT`);
- `check` and `check_profile`: what a protocol's method and a profile of the family must hold
  beyond their presence (protocols/schema.py calls both, naming no family);
- `profiles`: the family's frozen catalog entries, the one home of every parameter;
- `data`: what the family brings beyond documents (`FamilyData`, below): node memories,
  relation kinds with their evidence rules, the fixture section they come from;
- `thresholds`: every similarity threshold a profile declares, with the encoder it was set for and
  the encoders it carries over to (`Threshold`);
- `does` and `page`: what the method does in plain words and the docs page that states it (the
  report's "What each method is" and the docs' route tables, docs/api.md);
- `protocol_flag`: the route's flag of `lab protocol new`, when a protocol made from your own files
  may add it (`ProtocolFlag`, below).

A family also declares, in its module, the step that adds it to a protocol: the fields of an "add a
method family" step (protocols/derivations/method_family.py) as plain data, which the lineage of the
committed protocols (protocols/registry.py) and its `protocol_flag` use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ground.fields import Fields

# ---------------------------------------------------------------- what a family brings beyond documents
#
# A family whose method reads more than passages, their vectors and the graph builder's relations
# (HippoRAG 2's phrases and facts, say) declares it, and the parts that hold or move data read the
# declaration instead of naming the family: its node memories (memories that are no document, marked
# in their metadata under GRAPH_NODE: the store keeps them apart, no method ranks them), its relation
# kinds with the rule their evidence must read (server/validation.py), the fixture section they come
# from (builders/embedding/sections/: a `lab embed build` flag named after it, asked for by `lab run`,
# derived into what prepare writes by evaluator/inputs.py), and how many of the query's entity
# phrases from that section a request carries.
GRAPH_NODE = "graph_node"  # metadata key of a node memory; its value is a declared NodeKind's name


@dataclass(frozen=True)
class NodeKind:
    name: str
    names: tuple[str, ...] = ()  # metadata keys a node of this kind must hold, as non-empty strings


@dataclass(frozen=True)
class RelationKind:
    kind: str
    prefix: str  # what the evidence_ref starts with
    value: str  # a regular expression the rest must match in full
    reads: str  # what the rest is, in words (the 422 message)
    within: Callable[[str], bool] | None = None  # a bound the matched value must also keep

    def holds(self, evidence: str) -> bool:
        if not evidence.startswith(self.prefix):
            return False
        rest = evidence[len(self.prefix):]
        return re.fullmatch(self.value, rest) is not None and (self.within is None or self.within(rest))


@dataclass(frozen=True)
class FamilyData:
    section: str | None = None  # the fixture section the family's records and query phrases come from
    nodes: tuple[NodeKind, ...] = ()
    relations: tuple[RelationKind, ...] = ()
    entity_limit_of: Callable[[Mapping], int] | None = None  # profile -> entity phrases a request carries

    def entity_limit(self, profile: Mapping) -> int:
        if self.entity_limit_of is None:
            raise ValueError("this family's requests carry no entity phrases")
        return self.entity_limit_of(profile)


@dataclass(frozen=True)
class Threshold:
    """A similarity threshold a profile declares, bound to the encoder it was set for: cosines of
    another encoder spread otherwise (unrelated short phrases sit near 0.84 under
    multilingual-e5-small, far lower under all-MiniLM-L6-v2), so the same number means another
    rule. `lab run` refuses a protocol that pairs the profile with an encoder that is neither
    `set_for` nor one the value `carries_over` to (protocols/embedding_space.py)."""

    path: tuple[str, ...]  # where the value sits in the profile
    set_for: str  # the encoder the value was set for (its model's name, as a space names it)
    source: str  # who set it
    carries_over: Mapping[str, str] = field(default_factory=dict)  # encoder -> the rule it holds by there

    def runs_under(self, encoder: str) -> bool:
        return encoder == self.set_for or encoder in self.carries_over

    def value_in(self, profile: Mapping):
        """The threshold's value in a profile that declares it."""
        for key in self.path:
            profile = profile[key]
        return profile


def section_flag(section: str) -> str:
    """The `lab embed build` flag that builds a fixture section: its name with dashes."""
    return "--" + section.replace("_", "-")


# ---------------------------------------------------------------- the route

TEXT = "query"  # the query's text, sent as `query`
VECTOR = "vector"  # the query's vector in the fixture's space, sent as `query_vector` and `space_id`
VECTOR_IF_HYBRID_SEED = "vector_if_hybrid_seed"  # the vector, for a method whose seed is "hybrid" only
VECTOR_FIELDS = ("query_vector", "space_id")
ENTITIES = "query_entities"  # the query's NER entities from the fixture (docs/field-graphs.md), sent as they are
# the query's entities as phrases with their vectors, from the fixture section the family's data names
ENTITY_VECTORS = "entity_vectors"
QUERY_PARTS = (TEXT, VECTOR, VECTOR_IF_HYBRID_SEED, ENTITIES, ENTITY_VECTORS)
EVERY_METHOD = ("profile", "limit")  # fields every method and every request has

# The lab's page limit for a search: what a route with a fixed limit accepts, and the most any
# evaluation may ask (protocols/schema.py); the server reports it in health (server/validation.py).
SEARCH_LIMIT = (1, 100)

MethodCheck = Callable[[Fields, dict, str, dict], None]  # (fields, method, its path, the protocol's profiles)
ProfileCheck = Callable[[Fields, dict, str, dict], None]  # (fields, profile, its path, the protocol's profiles)
LimitRule = Callable[[Mapping], tuple[int, int]]  # profile -> (lowest, highest) limit


def profile_limit(profile: Mapping) -> tuple[int, int]:
    """The limit a profile declares (`limit_max`)."""
    return 1, profile["limit_max"]


def fixed_limit(profile: Mapping) -> tuple[int, int]:
    """The lab's search limit, whatever the profile (the first routes' profiles declare none)."""
    return SEARCH_LIMIT


@dataclass(frozen=True)
class ProtocolFlag:
    """`lab protocol new --<name>` (protocols/new.py): the route's family added to a protocol made
    from your own files, by the "add a method family" step whose fields `step(dataset)` gives for the
    dataset whose rows the layout holds (musique, hotpotqa, 2wikimultihopqa). The step's `requires`
    are held to the methods the layout's template has; a step that builds a graph (`graph_builder`)
    goes not with an imported one (`--graph`)."""

    name: str  # the flag without its dashes
    help: str
    step: Callable[[str], Mapping[str, Any]]


@dataclass(frozen=True)
class Route:
    family: str  # the route's name on the wire and its profiles' family
    request: tuple[str, ...]
    profiles: Mapping[str, dict]
    does: str  # what the method does, in plain words, for the report's "What each method is"
    page: str  # the docs page that states the method's rules
    check: MethodCheck | None = None
    check_profile: ProfileCheck | None = None
    optional: tuple[str, ...] = ()
    limit: LimitRule = profile_limit
    data: FamilyData = field(default_factory=FamilyData)
    thresholds: Mapping[str, tuple[Threshold, ...]] = field(default_factory=dict)  # profile -> its thresholds
    protocol_flag: ProtocolFlag | None = None

    @property
    def fields(self) -> tuple[str, ...]:
        """The method's own fields: in the protocol's method and in every request, as they are."""
        return tuple(name for name in self.request if name not in EVERY_METHOD + QUERY_PARTS)



    def sends_vector(self, method: Mapping) -> bool:
        """Whether a request of `method` carries the query vector (so its page carries the receipt)."""
        return VECTOR in self.request or (VECTOR_IF_HYBRID_SEED in self.request and method.get("seed") == "hybrid")

    def body(self, method: Mapping, text: str, vector: Callable[[], Mapping],
             entities: Callable[[], list] | None = None, entity_vectors: Callable[[], list] | None = None) -> dict:
        """The request of `method` for one query, in wire order; `vector()` gives the query vector's
        two fields, `entities()` the query's entities and `entity_vectors()` their phrases with
        vectors (each called only when the request carries them)."""
        body: dict = {}
        for name in self.request:
            if name == TEXT:
                body["query"] = text
            elif name in (ENTITIES, ENTITY_VECTORS):
                given = entities if name == ENTITIES else entity_vectors
                if given is None:
                    raise ValueError(f"route {self.family}: its requests carry {name}")
                body[name] = given()
            elif name == VECTOR or (name == VECTOR_IF_HYBRID_SEED and method["seed"] == "hybrid"):
                body.update(vector())
            elif name != VECTOR_IF_HYBRID_SEED:
                body[name] = method[name]
        return body

    def wire_fields(self) -> tuple[frozenset[str], frozenset[str]]:
        """(fields every request carries, fields only some requests carry), as named on the wire."""
        always: set[str] = set()
        for name in self.request:
            if name == TEXT:
                always.add("query")
            elif name == VECTOR:
                always.update(VECTOR_FIELDS)
            elif name != VECTOR_IF_HYBRID_SEED:
                always.add(name)
        sometimes = set(VECTOR_FIELDS) if VECTOR_IF_HYBRID_SEED in self.request else set()
        return frozenset(always), frozenset(sometimes)

    def entity_limit(self, profile: Mapping) -> int:
        """How many entity phrases a request of this route carries at most (ENTITY_VECTORS)."""
        return self.data.entity_limit(profile)
