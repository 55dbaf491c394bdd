"""In-memory indexes of one lab, derived from RocksDB and kept current after every commit.

RocksDB is the truth: the store feeds `put_memory`, `put_binding` and `put_relation` at start-up
(in journal order) and after each committed batch, and an index fed the same values in the same
order is the same index. Everything here is keyed by record id, never by arrival position, so that
a rebuilt index ranks exactly like a live one (rankings only ever read positions through the
record-id order `ScopeIndex.id_rank()`).

One `ScopeIndex` per scope holds:
- the current record (revision, content, payload) of every memory: BM25's visible documents;
- an inverted index: per term, the slots and term frequencies of the documents holding it;
- per embedding space, one matrix of L2-normalized float32 rows with a row map, grown by doubling,
  where a row is live only while its binding's revision equals its record's revision;
- per relation kind and direction, adjacency lists sorted by relation id; eligibility (both
  endpoints at their asserted revisions) is checked when a list is read, so stale relations are
  kept, as in the store, and ignored by retrieval;
- the graph nodes apart: a memory whose metadata names a `graph_node` (a node memory a method
  family brings, protocols/route.py) is no document, so no method ranks it and no count
  includes it; its vectors sit in a space matrix of their own.
Searches and writes take the scope's lock, so a search always sees one consistent state.
"""

from __future__ import annotations

import bisect
import math
import threading
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from protocols.route import GRAPH_NODE
from server.receipts import vector_sha256
from server.retrieval.derived import DerivedTables, T
from server.retrieval.tokenize import bm25_tokens

DIRECTIONS = ("forward", "backward")


@dataclass
class Record:
    revision: int
    content: str
    payload: dict
    slot: int


@dataclass(frozen=True)
class Binding:
    binding_id: str | None
    record_id: str
    revision: int
    space_id: str
    vector_sha256: str
    row: int

    def receipt(self) -> dict:
        return {
            "binding_id": self.binding_id,
            "record_id": self.record_id,
            "revision": self.revision,
            "space_id": self.space_id,
            "vector_sha256": self.vector_sha256,
        }


class InvertedIndex:
    """BM25 statistics over the current content of every record, updated in place."""

    def __init__(self) -> None:
        self.slots: dict[str, array] = {}  # term -> document slots holding it
        self.tfs: dict[str, array] = {}  # term -> term frequency, parallel to slots
        self.lengths = array("d")  # token count per slot
        self.total_length = 0
        self.documents = 0
        self.version = 0  # bumped on every change; derived arrays are cached per version
        self._compiled: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._derived = DerivedTables()
        self._term_derived = DerivedTables(bound=_TERM_CACHE_ENTRIES)

    def add(self, slot: int, text: str) -> None:
        tokens = bm25_tokens(text)
        while len(self.lengths) <= slot:
            self.lengths.append(0.0)
        self.lengths[slot] = float(len(tokens))
        self.total_length += len(tokens)
        self.documents += 1
        for term, tf in Counter(tokens).items():
            self.slots.setdefault(term, array("q")).append(slot)
            self.tfs.setdefault(term, array("d")).append(float(tf))
            self._compiled.pop(term, None)
        self.version += 1

    def remove(self, slot: int, text: str) -> None:
        tokens = bm25_tokens(text)
        self.total_length -= len(tokens)
        self.lengths[slot] = 0.0
        self.documents -= 1
        for term in set(tokens):
            slots = self.slots[term]
            i = slots.index(slot)
            del slots[i]
            del self.tfs[term][i]
            if not slots:
                del self.slots[term], self.tfs[term]
            self._compiled.pop(term, None)
        self.version += 1

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(slots int64, term frequencies float64) of a term, or None when no document has it."""
        compiled = self._compiled.get(term)
        if compiled is None:
            slots = self.slots.get(term)
            if slots is None:
                return None
            compiled = (np.array(slots, dtype=np.int64), np.array(self.tfs[term], dtype=np.float64))
            self._compiled[term] = compiled
        return compiled

    def derived(self, name: str, build: Callable[[], T]) -> T:
        """A value computed from the whole index (e.g. BM25 length norms), rebuilt after changes."""
        return self._derived.get(name, self.version, build)

    def term_derived(self, term: str, name: str, build: Callable[[], T]) -> T:
        """A per-term value that depends on the whole index (e.g. BM25 posting scores: idf and
        length norms move with every write), rebuilt lazily after any change."""
        return self._term_derived.get((name, term), self.version, build)


_TERM_CACHE_ENTRIES = 200_000


class SpaceMatrix:
    """Normalized float32 rows of one embedding space; one row per record, rewritten in place.

    Beside each float32 row it keeps the row's int8 code for the exact cosine prefilter
    (`server/retrieval/cosine.py`): `codes[r] * scales[r]` approximates the row, and
    `residuals[r]` (the L2 norm of what the code misses) and `code_norms[r]` are the two numbers
    that bound the prefilter's error for that row.
    """

    def __init__(self, space_id: str, dimensions: int) -> None:
        self.space_id = space_id
        self.dimensions = dimensions
        self.rows = np.zeros((16, dimensions), dtype=np.float32)
        self.codes = np.zeros((16, dimensions), dtype=np.int8)
        self.scales = np.zeros(16, dtype=np.float64)
        self.scales32 = np.zeros(16, dtype=np.float32)  # the first, float32 pass of the prefilter
        self.max_residual = 0.0  # over every row ever stored: a bound for every current row
        self.max_code_norm = 0.0
        self.residuals = np.zeros(16, dtype=np.float64)
        self.code_norms = np.zeros(16, dtype=np.float64)
        self.row_slots = np.zeros(16, dtype=np.int64)  # record slot of each row
        self.live = np.zeros(16, dtype=bool)
        self.count = 0
        self.version = 0  # bumped on every change (the ANN lane rebuilds from it)
        self.bindings: dict[str, Binding] = {}  # record id -> its latest binding in this space

    def put(self, binding: Binding, unit: np.ndarray, slot: int, live: bool) -> None:
        if binding.row == self.count:
            if self.count == len(self.rows):  # amortized doubling
                self._grow(len(self.rows))
            self.count += 1
        self.rows[binding.row] = unit
        code, scale, residual, code_norm = quantize_row(unit)
        self.codes[binding.row] = code
        self.scales[binding.row] = scale
        self.scales32[binding.row] = scale
        self.max_residual = max(self.max_residual, residual)
        self.max_code_norm = max(self.max_code_norm, code_norm)
        self.residuals[binding.row] = residual
        self.code_norms[binding.row] = code_norm
        self.row_slots[binding.row] = slot
        self.live[binding.row] = live
        self.bindings[binding.record_id] = binding
        self.version += 1

    def set_live(self, row: int, live: bool) -> None:
        if self.live[row] != live:
            self.live[row] = live
            self.version += 1

    def _grow(self, extra: int) -> None:
        def grown(array: np.ndarray) -> np.ndarray:
            bigger = np.zeros((len(array) + extra, *array.shape[1:]), dtype=array.dtype)
            bigger[: len(array)] = array
            return bigger
        self.rows, self.codes = grown(self.rows), grown(self.codes)
        self.scales, self.residuals, self.code_norms = grown(self.scales), grown(self.residuals), grown(self.code_norms)
        self.scales32 = grown(self.scales32)
        self.row_slots, self.live = grown(self.row_slots), grown(self.live)

    def live_count(self) -> int:
        return int(np.count_nonzero(self.live[: self.count]))


def quantize_row(unit: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """(int8 code, scale, residual norm, code norm) of a row: row ~ scale * code, symmetric int8.

    The residual and code norms are computed in float64 from the float32 row itself, so the
    prefilter's bound holds for the value the exact cosine reads.
    """
    x = unit.astype(np.float64)
    peak = float(np.max(np.abs(x)))
    scale = peak / 127.0 if peak > 0 else 1.0
    code = np.clip(np.rint(x / scale), -127, 127).astype(np.int8)
    approx = code.astype(np.float64) * scale
    return code, scale, float(np.linalg.norm(x - approx)), float(np.linalg.norm(approx))


def unit_row(vector: np.ndarray) -> np.ndarray:
    """L2-normalized in float64, then stored as float32 (the matrix the cosine scan reads)."""
    v64 = vector.astype(np.float64)
    return (v64 / math.sqrt(float(np.dot(v64, v64)))).astype(np.float32)


class ScopeIndex:
    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.lock = threading.RLock()
        self.records: dict[str, Record] = {}
        self.slot_ids: list[str] = []  # record id of each slot
        self.lexical = InvertedIndex()
        self.spaces: dict[str, SpaceMatrix] = {}
        self.nodes: dict[str, Record] = {}  # graph node memories, never documents (slot -1)
        self.node_spaces: dict[str, SpaceMatrix] = {}
        self.relations: dict[str, dict] = {}
        # (kind, direction) -> node id -> [(relation id, other endpoint id)] sorted by relation id
        self.adjacency: dict[tuple[str, str], dict[str, list[tuple[str, str]]]] = {}
        self._id_rank: tuple[int, np.ndarray] = (-1, np.zeros(0, np.int64))
        # indexes other method families derive from this one (e.g. server/families/ann), keyed by their owner
        self.derived_tables = DerivedTables()
        self.writes = 0  # records and relations written: a derived table is stale when it moved

    def derived(self, key: tuple, build: Callable[[], T]) -> T:
        """The table a method family derives from this index under `key` (its owner first), built by
        `build()` once and again only after a record or relation was written (`writes` moved)."""
        return self.derived_tables.get(key, self.writes, build)

    # ------------------------------------------------------------------ feeding (store side)

    def put_memory(self, record_id: str, revision: int, content: str, payload: dict | None = None) -> None:
        """The record's current revision; `payload` is what hits return (default {"content"})."""
        with self.lock:
            payload = {"content": content} if payload is None else payload
            if is_graph_node(payload) or record_id in self.nodes:
                self._put_node(record_id, revision, content, payload)
                return
            old = self.records.get(record_id)
            if old is None:
                slot = len(self.slot_ids)
                self.slot_ids.append(record_id)
            else:
                slot = old.slot
                self.lexical.remove(slot, old.content)
            self.records[record_id] = Record(revision, content, payload, slot)
            self.writes += 1
            self.lexical.add(slot, content)
            for space in self.spaces.values():
                binding = space.bindings.get(record_id)
                if binding is not None:
                    space.set_live(binding.row, binding.revision == revision)

    def _put_node(self, record_id: str, revision: int, content: str, payload: dict) -> None:
        if record_id in self.records:
            raise ValueError(f"memory {record_id} is a document: it cannot become a graph node")
        self.nodes[record_id] = Record(revision, content, payload, -1)
        self.writes += 1
        for space in self.node_spaces.values():
            binding = space.bindings.get(record_id)
            if binding is not None:
                space.set_live(binding.row, binding.revision == revision)

    def put_binding(self, record_id: str, revision: int, space_id: str, vector: np.ndarray,
                    binding_id: str | None = None) -> None:
        """Attach (or replace) the record's vector in a space; live while revisions agree."""
        with self.lock:
            vector = np.asarray(vector, dtype=np.float32)
            if vector.ndim != 1 or not np.all(np.isfinite(vector)) or not np.any(vector):
                raise ValueError(f"binding of {record_id}: vector must be 1-D, finite and non-zero")
            spaces = self.node_spaces if record_id in self.nodes else self.spaces
            space = spaces.get(space_id)
            if space is None:
                space = spaces[space_id] = SpaceMatrix(space_id, len(vector))
            if len(vector) != space.dimensions:
                raise ValueError(f"binding of {record_id}: {len(vector)} dimensions, space has {space.dimensions}")
            record = self.records.get(record_id) or self.nodes.get(record_id)
            if record is None:
                raise ValueError(f"binding of {record_id}: unknown record (feed put_memory first)")
            old = space.bindings.get(record_id)
            row = space.count if old is None else old.row
            binding = Binding(binding_id, record_id, revision, space_id, vector_sha256(vector), row)
            space.put(binding, unit_row(vector), record.slot, record.revision == revision)
            if record.slot < 0:
                self.writes += 1  # a graph node's vector: the tables derived from nodes are stale

    def put_relation(self, relation: dict) -> None:
        """A stored relation value {id, revision, kind, source{id, revision}, target{...}, provenance}."""
        with self.lock:
            relation_id = relation["id"]
            old = self.relations.get(relation_id)
            if old is not None:
                self._unlink(old)
            self.relations[relation_id] = relation
            self.writes += 1
            kind = relation["kind"]
            source, target = relation["source"]["id"], relation["target"]["id"]
            self._link((kind, "forward"), source, (relation_id, target))
            self._link((kind, "backward"), target, (relation_id, source))

    def _link(self, key: tuple[str, str], node: str, entry: tuple[str, str]) -> None:
        bisect.insort(self.adjacency.setdefault(key, {}).setdefault(node, []), entry)

    def _unlink(self, relation: dict) -> None:
        kind, relation_id = relation["kind"], relation["id"]
        source, target = relation["source"]["id"], relation["target"]["id"]
        self.adjacency[(kind, "forward")][source].remove((relation_id, target))
        self.adjacency[(kind, "backward")][target].remove((relation_id, source))

    # ------------------------------------------------------------------ reading (retrieval side)

    def id_rank(self) -> np.ndarray:
        """Position of each slot's record id in ascending id order: the tie-break key everywhere."""
        n = len(self.slot_ids)
        if self._id_rank[0] != n:  # slots only ever grow, so the count is the version
            order = sorted(range(n), key=self.slot_ids.__getitem__)
            rank = np.empty(n, dtype=np.int64)
            rank[np.array(order, dtype=np.int64)] = np.arange(n, dtype=np.int64)
            self._id_rank = (n, rank)
        return self._id_rank[1]

    def eligible(self, relation: dict) -> bool:
        for end in (relation["source"], relation["target"]):
            record = self.records.get(end["id"]) or self.nodes.get(end["id"])
            if record is None or record.revision != end["revision"]:
                return False
        return True

    def neighbours(self, kind: str, direction: str, node: str) -> list[tuple[str, str]]:
        return self.adjacency.get((kind, direction), {}).get(node, [])

    def live_binding(self, space_id: str, record_id: str) -> Binding | None:
        space = self.spaces.get(space_id)
        binding = None if space is None else space.bindings.get(record_id)
        if space is None or binding is None or not space.live[binding.row]:
            return None
        return binding


def is_graph_node(payload: dict) -> bool:
    return GRAPH_NODE in (payload.get("metadata") or {})


class Indexes:
    """One `ScopeIndex` per scope, created on first use."""

    def __init__(self) -> None:
        self._scopes: dict[str, ScopeIndex] = {}
        self._lock = threading.Lock()

    def scope(self, name: str) -> ScopeIndex:
        with self._lock:
            index = self._scopes.get(name)
            if index is None:
                index = self._scopes[name] = ScopeIndex(name)
            return index
