"""The search routes, declared once: what a request of each route carries.

A route is the wire name of a method family (`POST /api/v1/scopes/{scope}/search/{route}`). Its
entry says which profile family its methods rank with and which fields every request of it
carries, in wire order: the method's `profile` and `limit`, the query (its text, its vector, or
both) and the method's own fields, copied from the protocol's method as they are.

Everything else derives from this table. The protocol validator checks a method's fields against
it (protocols/schema.py); the evaluator builds each request from it (evaluator/evaluate/evaluate.py)
and reads from it whether a page must carry the query vector's receipt; the server accepts exactly
these fields on the route (less the ones its handler may default). Each side binds its own part in
one table, checked at import against this one: the server its handler (server/routes.py), the
evaluator its independent verifier (evaluator/verification/routes.py). Adding a method family:
docs/extend-a-method.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ground.fields import Fields, join
from protocols.profiles.ann import ANN_PROFILES
from protocols.profiles.hipporag2 import HIPPORAG2_PROFILES, HIPPORAG_NER_PROFILES
from protocols.profiles.imported import IMPORTED_GRAPH_PROFILES, IMPORTED_WALK_PROFILES
from protocols.profiles.ppr import PPR_PROFILES
from protocols.profiles.prf import PRF_PROFILES
from protocols.profiles.rescue import RESCUE_PROFILES
from protocols.profiles.v1 import v1_route
from protocols.profiles.walk import WALK_PROFILES

TEXT = "query"  # the query's text, sent as `query`
VECTOR = "vector"  # the query's vector in the fixture's space, sent as `query_vector` and `space_id`
VECTOR_IF_HYBRID_SEED = "vector_if_hybrid_seed"  # the vector, for a method whose seed is "hybrid" only
VECTOR_FIELDS = ("query_vector", "space_id")
ENTITIES = "query_entities"  # the query's NER entities from the fixture (docs/field-graphs.md), sent as they are
# the query's entities as phrases with their vectors from the fixture's hipporag2_graph section (docs/hipporag2.md)
ENTITY_VECTORS = "entity_vectors"
_QUERY_PARTS = (TEXT, VECTOR, VECTOR_IF_HYBRID_SEED, ENTITIES, ENTITY_VECTORS)
_EVERY_METHOD = ("profile", "limit")  # fields every method and every request has

MethodCheck = Callable[[Fields, dict, str, dict], None]  # (fields, method, its path, the protocol's profiles)


@dataclass(frozen=True)
class Route:
    """One route: its profile family, its request's fields in wire order, the protocol checks of
    the method's own fields beyond their presence, and the family's frozen catalog entries.

    `profiles` is the one home of a family's catalog entries (every parameter, plain JSON values):
    the server serves them (server/routes.py), a protocol derivation copies them into a protocol
    (protocols/derivations/method_family.py) or a root protocol holds their snapshot (the v1
    routes', protocols/profiles/v1.py), and the evaluator compares the two."""

    family: str
    request: tuple[str, ...]
    check: MethodCheck | None = None
    profiles: Mapping[str, dict] = field(default_factory=dict)
    does: str = ""  # what the method does, in plain words, for the report's "What each method is"

    @property
    def fields(self) -> tuple[str, ...]:
        """The method's own fields: in the protocol's method and in every request, as they are."""
        return tuple(name for name in self.request if name not in _EVERY_METHOD + _QUERY_PARTS)

    @property
    def sends_text(self) -> bool:
        return TEXT in self.request

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


EXPANSION_KEYS = ("max_depth", "max_nodes", "max_edges", "max_scan")


def check_expansion(f: Fields, expansion: object, path: str) -> None:
    """A graph expansion budget (a graph method's `expansion`, a graph profile's defaults)."""
    f.obj(expansion, path, EXPANSION_KEYS)
    f.integer(expansion["max_depth"], join(path, "max_depth"), minimum=0)
    for key in EXPANSION_KEYS[1:]:
        f.integer(expansion[key], join(path, key), minimum=1)


def _check_semantic_method(f: Fields, method: dict, path: str, profiles: dict) -> None:
    f.number(method["min_score"], join(path, "min_score"), low=-1.0, high=1.0)


def _check_graph_method(f: Fields, method: dict, path: str, profiles: dict) -> None:
    seeds = profiles[method["profile"]].get("seed_profiles", {})
    f.string(method["seed"], join(path, "seed"), allowed=sorted(seeds))
    check_expansion(f, method["expansion"], join(path, "expansion"))


def _check_rescue_method(f: Fields, method: dict, path: str, profiles: dict) -> None:
    f.string(method["graph_mode"], join(path, "graph_mode"), allowed=("auto", "force", "off"))


# In the order the server lists its routes. A new route is a new entry, never an edit of one.
ROUTES: dict[str, Route] = {
    "lexical": Route("lexical", ("profile", TEXT, "limit"), profiles=v1_route("lexical"),
                     does="ranks passages by BM25 over the words they share with the question"),
    "semantic": Route("semantic", ("profile", VECTOR, "limit", "min_score"), _check_semantic_method,
                      profiles=v1_route("semantic"),
                      does="ranks every passage by the cosine of its embedding to the question's (exact search)"),
    "hybrid": Route("hybrid", ("profile", TEXT, VECTOR, "limit"), profiles=v1_route("hybrid"),
                    does="fuses the BM25 ranking and the cosine ranking into one, with the profile's weights"),
    "graph": Route("graph", ("profile", "seed", TEXT, "limit", "expansion", VECTOR_IF_HYBRID_SEED),
                   _check_graph_method, profiles={**v1_route("graph"), **IMPORTED_GRAPH_PROFILES},
                   does="finds seed passages, follows typed links between passages up to the declared depth, "
                        "and fuses what the paths reach with the seeds' ranking"),
    # protocol v2 (docs/rescue.md)
    "rescue": Route("rescue", ("profile", TEXT, VECTOR, "limit", "graph_mode"), _check_rescue_method,
                    profiles=RESCUE_PROFILES,
                    does="keeps a fused BM25 and cosine ranking and appends passages linked to its top "
                         "passages below it, never above"),
    # the ANN protocols: the ANN lane cosine_hnsw_v1 (docs/scale.md)
    "ann": Route("ann", ("profile", VECTOR, "limit"), profiles=ANN_PROFILES,
                 does="ranks passages by cosine through an approximate nearest-neighbour index (faiss HNSW)"),
    # protocol v3 (docs/graph-v3.md); the walks over an imported graph (docs/graph-import.md)
    "walk": Route("walk", ("profile", TEXT, VECTOR, "limit"), profiles={**WALK_PROFILES, **IMPORTED_WALK_PROFILES},
                  does="starts from the fused ranking's top passages, walks the graph a few steps, and fuses "
                       "the passages it reaches back into that ranking"),
    # protocol v5 (docs/prf.md): RM3, Rocchio and their fusion
    "prf": Route("prf", ("profile", TEXT, VECTOR, "limit"), profiles=PRF_PROFILES,
                 does="retrieves once, expands the question from its own top passages (RM3 terms or a "
                      "Rocchio vector), and retrieves again"),
    # HippoRAG-style PPR over the NER (or name) entity graph (docs/field-graphs.md)
    "ppr": Route("ppr", ("profile", TEXT, VECTOR, ENTITIES, "limit"), profiles=PPR_PROFILES,
                 does="runs personalized PageRank over the entity graph from the question's entities and "
                      "ranks passages by the mass they receive"),
    # HippoRAG 2 without its recognition filter, over an imported graph's phrases and facts (docs/hipporag2.md)
    "hipporag2": Route("hipporag2", ("profile", VECTOR, "limit"), profiles=HIPPORAG2_PROFILES,
                       does="links the question to the graph's facts by cosine, seeds their phrases and every "
                            "passage, and ranks passages by a personalized PageRank over the whole graph"),
    # the same PageRank over the spaCy entities of document_ner_graph_v1, entities linked by cosine (docs/hipporag2.md)
    "hipporag_ner": Route("hipporag_ner", ("profile", VECTOR, ENTITY_VECTORS, "limit"), profiles=HIPPORAG_NER_PROFILES,
                          does="links each of the question's named entities to the graph's nearest entity by "
                               "cosine, seeds those and every passage, and ranks passages by a personalized "
                               "PageRank over the whole entity graph"),
}
# the routes whose fixture needs the hipporag2_graph section (lab embed build --hipporag2-graph)
GRAPH_SECTION_ROUTES = ("hipporag2", "hipporag_ner")
FAMILIES = tuple(sorted({route.family for route in ROUTES.values()}))


def route_of(method: Mapping) -> Route:
    """The route of a protocol method (validated protocols name only routes of this table)."""
    return ROUTES[method["route"]]


def check_bindings(side: str, what: str, bound: Mapping[str, object]) -> None:
    """Refuse a side's binding table (the server's handlers, the evaluator's verifiers) that does
    not bind every route of ROUTES, or binds one ROUTES does not declare: raised at import, so a
    route can be neither served unverified nor verified unserved."""
    missing = [name for name in ROUTES if name not in bound]
    unknown = [name for name in bound if name not in ROUTES]
    faults = ([f"binds no {what} to the routes {missing}"] if missing else []) + \
        ([f"binds a {what} to {unknown}, which protocols/routes.py does not declare"] if unknown else [])
    if faults:
        raise RuntimeError(f"{side} {' and '.join(faults)}: every declared route needs exactly one {what}")
