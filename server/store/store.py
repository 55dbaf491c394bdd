"""The lab's truth: RocksDB (rocksdict, raw bytes) with one column family per kind of value.

Column families (keys are `\\0`-joined; integers are 8-byte big-endian so keys sort numerically):

| family            | key                                  | value (canonical JSON)                           |
|-------------------|--------------------------------------|--------------------------------------------------|
| `meta`            | `marker`, `hwm\\0SCOPE`, `digest\\0SCOPE` | lab marker; journal high watermark and running digest of a scope |
| `memories`        | `SCOPE\\0ID`                          | current `{id, revision, payload}`                |
| `memory_revisions`| `SCOPE\\0ID\\0REV`                     | every revision ever written, same shape          |
| `bindings`        | `SCOPE\\0RECORD\\0SPACE\\0REV`           | `{binding_id, record_id, revision, space_id, space, dimensions, vector_sha256, vector_base64}` |
| `relations`       | `SCOPE\\0ID`                          | `{id, revision, kind, source, target, provenance}` |
| `journal`         | `SCOPE\\0SEQ`                         | `{sequence, op, id, revision, body_digest}`      |
| `idempotency`     | `SCOPE\\0KIND\\0KEY`                   | `{body_digest, receipt}`                         |
| `credentials`     | sha256(token) hex                    | `{scope, issued_at, expires_at}`                 |

Durability: every accepted batch is ONE WriteBatch (records + journal entries + idempotency
entries + the new high watermark + the scope's new running digest) written with the WAL on and
`sync=True`. A process kill can therefore never tear a batch, and a batch the client saw
acknowledged is on disk even if the machine loses power; the cost is one fsync per batch (a few
ms), negligible next to a batch of up to 1,000 items. Callers serialize writes (the app holds a writer lock), so the in-memory caches
below (current revisions, high watermarks, running digests) always equal what is on disk.

The running digest (ground/running_digest.py) is a set hash of a scope's content values,
updated by every put of a content family in the same batch (`_Plan.put` is the only way to write
one). Opening a store recomputes it from a scan of the content and refuses the store when it
differs from the persisted one: content changed outside this code (another program, damage)
is caught before anything is served. A store written before the digest existed gets it computed
and persisted at its first open.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from rocksdict import Options, Rdict, WriteBatch, WriteOptions

from ground.canonical import canonical, digest
from ground.running_digest import FAMILIES as CONTENT_FAMILIES
from ground.running_digest import RunningDigest
from protocols.route import GRAPH_NODE
from server.errors import ApiError
from server.validation import EmbeddingAttach, MemoryCreate, MemoryUpdate, RelationAssert

FAMILIES = ("meta", "memories", "memory_revisions", "bindings", "relations", "journal",
            "idempotency", "credentials")
MARKER_KIND = "graph-retrieval-lab-store"
MARKER_FORMAT = 1


class StoreOpenError(Exception):
    """The directory cannot be opened as this lab's store (in use, not ours, damaged)."""


def _key(*parts: str | int) -> bytes:
    return b"\x00".join(p.to_bytes(8, "big") if isinstance(p, int) else p.encode("utf-8") for p in parts)


def _scan(family: Rdict, start: bytes | None = None, prefix: bytes = b"") -> Iterator[tuple[bytes, bytes]]:
    """A column family's entries in key order from `start` while their keys begin with `prefix` (the
    store is opened in raw mode, so keys and values are bytes, which rocksdict's types cannot say)."""
    entries = family.items() if start is None else family.items(from_key=start)
    for key, raw in cast(Iterator[tuple[bytes, bytes]], entries):
        if not key.startswith(prefix):
            return
        yield key, raw


def _load(raw: bytes) -> Any:
    return json.loads(raw)


def encode_vector(vector: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4")


# Ids never derive from idempotency keys, which may bind a fixture or a protocol: exact ties order
# by record id and graph expansion examines relations in id order, so a key-derived id would let the
# same corpus rank differently under two protocol versions (docs/design.md §6).


def memory_id(scope: str, external_id: str) -> str:
    """`mem-` + 32 hex of the scope and the document's external id alone."""
    return "mem-" + digest([scope, "memory", external_id])[:32]


def relation_id(scope: str, external_id: str) -> str:
    """`rel-` + 32 hex of the scope and the edge's external id alone."""
    return "rel-" + digest([scope, "relation", external_id])[:32]


def binding_id(scope: str, record: str, revision: int, space_id: str) -> str:
    """`emb-` + 32 hex of the slot a vector fills: one binding per (memory, revision, space)."""
    return "emb-" + digest([scope, "embedding", record, revision, space_id])[:32]


def journal_id(lab_id: str, scope: str) -> str:
    return "journal-" + digest([lab_id, scope])[:32]


@dataclass
class Change:
    """One committed effect, handed to the in-memory indexes after the commit."""

    kind: str  # memory | binding | relation
    value: dict


@dataclass
class WriteResult:
    receipts: list[dict]
    replayed: list[bool]
    fence: dict
    changes: list[Change] = field(default_factory=list)


@dataclass
class _Plan:
    """What a batch will write; built completely before the single commit."""

    scope: str
    batch: WriteBatch
    digest: RunningDigest  # the scope's running digest with this batch applied
    read: Any  # (family, key) -> the stored bytes or None
    handles: dict
    journal: list[dict] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    pending: dict[tuple[str, bytes], bytes] = field(default_factory=dict)

    def put(self, family: str, key: bytes, raw: bytes) -> None:
        """Write a content value and fold it into the running digest, replacing whatever value
        the key held (on disk, or earlier in this batch)."""
        old = self.pending.get((family, key))
        if old is None:
            old = self.read(family, key)
        if old is not None:
            self.digest.remove(family, [old])
        self.digest.add(family, [raw])
        self.pending[(family, key)] = raw
        self.batch.put(key, raw, self.handles[family])


class Store:
    def __init__(self, db: Rdict, marker: dict):
        self._db = db
        self._cf = {name: db.get_column_family(name) for name in FAMILIES}
        self._handles = {name: db.get_column_family_handle(name) for name in FAMILIES}
        self._sync = WriteOptions()
        self._sync.sync = True
        self.marker = marker
        self._revisions: dict[str, dict[str, int]] = {}
        self._hwm: dict[str, int] = {}
        for key, raw in _scan(self._cf["memories"]):
            scope, rid = key.decode("utf-8").split("\x00")
            self._revisions.setdefault(scope, {})[rid] = _load(raw)["revision"]
        for key, raw in self._meta_items(b"hwm\x00"):
            self._hwm[key[4:].decode("utf-8")] = _load(raw)
        self._digests = self._checked_digests()

    def _meta_items(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        yield from _scan(self._cf["meta"], prefix, prefix)

    def _checked_digests(self) -> dict[str, RunningDigest]:
        """Every scope's running digest recomputed from its content, compared with the persisted one."""
        scanned: dict[str, RunningDigest] = {}
        for family in CONTENT_FAMILIES:
            chunks: dict[str, list[bytes]] = {}
            for key, raw in _scan(self._cf[family]):
                scope = key.split(b"\x00", 1)[0].decode("utf-8")
                chunk = chunks.setdefault(scope, [])
                chunk.append(raw)
                if len(chunk) == 4096:  # bounded memory: ~8 MB of expanded lanes at a time
                    scanned.setdefault(scope, RunningDigest()).add(family, chunk)
                    chunk.clear()
            for scope, chunk in chunks.items():
                scanned.setdefault(scope, RunningDigest()).add(family, chunk)
        stored = {key[len(b"digest\x00"):].decode("utf-8"): RunningDigest.from_json(_load(raw))
                  for key, raw in self._meta_items(b"digest\x00")}
        for scope in sorted(set(scanned) | set(stored)):
            if scope in stored and stored[scope] != scanned.get(scope, RunningDigest()):
                raise StoreOpenError(
                    f"scope {scope}: the stored content does not match its running digest (content "
                    f"{scanned.get(scope, RunningDigest()).counts}, digest kept by the writes {stored[scope].counts}): "
                    f"the store was changed outside the lab or is damaged")
        missing = sorted(set(scanned) - set(stored))
        if missing:  # a store written before the running digest existed: adopt what its content says
            batch = WriteBatch(raw_mode=True)
            for scope in missing:
                batch.put(_key("digest", scope), canonical(scanned[scope].to_json()), self._handles["meta"])
            self._db.write(batch, self._sync)
        return scanned

    # ------------------------------------------------------------ open / close

    @classmethod
    def create(cls, path: str, lab_id: str, created_at: str) -> Store:
        """A fresh store; the marker is the first synced write, so a half-made one is refused later."""
        if os.path.lexists(path):
            raise StoreOpenError(f"refusing to overwrite existing DBDIR: {path}")
        db = _open(path, create=True)
        marker = {"kind": MARKER_KIND, "format": MARKER_FORMAT, "lab_id": lab_id, "created_at": created_at}
        options = WriteOptions()
        options.sync = True
        batch = WriteBatch(raw_mode=True)
        batch.put(b"marker", canonical(marker), db.get_column_family_handle("meta"))
        db.write(batch, options)
        return cls(db, marker)

    @classmethod
    def reopen(cls, path: str) -> Store:
        if not os.path.isdir(path):
            raise StoreOpenError(f"--reopen needs an existing DBDIR this lab created: {path} is not a directory")
        db = _open(path, create=False)
        raw = db.get_column_family("meta").get(b"marker")
        marker = _load(raw) if raw is not None else None
        if not isinstance(marker, dict) or marker.get("kind") != MARKER_KIND:
            db.close()
            raise StoreOpenError(f"{path} holds no retrieval-lab marker: not a store this lab created")
        if marker.get("format") != MARKER_FORMAT:
            db.close()
            raise StoreOpenError(f"{path} has store format {marker.get('format')}, this lab reads {MARKER_FORMAT}")
        return cls(db, marker)

    def close(self) -> None:
        """Flush the WAL and release the LOCK (the column-family views hold the DB open too)."""
        self._db.flush_wal(True)
        for view in self._cf.values():
            view.close()
        self._cf.clear()
        self._handles.clear()
        self._db.close()

    # ------------------------------------------------------------ fences

    def fence(self, scope: str) -> dict:
        return {"journal_id": journal_id(self.marker["lab_id"], scope), "high_watermark": self._hwm.get(scope, 0)}

    def current_revision(self, scope: str, rid: str) -> int | None:
        return self._revisions.get(scope, {}).get(rid)

    def running_digest(self, scope: str) -> dict:
        """The scope's running digest (scheme, digest, counts per content family)."""
        return self._digests.get(scope, RunningDigest()).summary()

    # ------------------------------------------------------------ writes

    def create_memories(self, scope: str, items: list[MemoryCreate]) -> WriteResult:
        def plan(plan: _Plan, item: MemoryCreate) -> tuple[dict, str, int]:
            rid = memory_id(scope, item.external_id)
            # Replays are answered before planning, so an existing id here means another command
            # (another idempotency key) already created this document.
            if self.current_revision(scope, rid) is not None:
                raise ApiError(409, "external_id_exists",
                               f"external id {item.external_id[:80]!r} is already memory {rid} of scope {scope} "
                               f"(created under another idempotency key)")
            return self._put_memory(plan, rid, 1, item.payload), rid, 1

        return self._commit(scope, "memory", "memory.create", items, plan)

    def update_memories(self, scope: str, items: list[MemoryUpdate]) -> WriteResult:
        def plan(plan: _Plan, item: MemoryUpdate) -> tuple[dict, str, int]:
            current = self._require_current(scope, item.id, item.revision, "items[].revision")
            held = _load(cast(bytes, self._cf["memories"][_key(scope, item.id)]))["payload"]  # held: just checked
            if _node_kind(held) != _node_kind(item.payload):
                raise ApiError(409, "graph_node_fixed",
                               f"memory {item.id}: an update cannot change metadata.{GRAPH_NODE} "
                               f"({_node_kind(held)!r} -> {_node_kind(item.payload)!r}); a document stays a "
                               f"document and a graph node stays that node")
            return self._put_memory(plan, item.id, current + 1, item.payload), item.id, current + 1

        return self._commit(scope, "memory.update", "memory.update", items, plan)

    def attach_embeddings(self, scope: str, items: list[EmbeddingAttach]) -> WriteResult:
        claimed: set[bytes] = set()

        def plan(plan: _Plan, item: EmbeddingAttach) -> tuple[dict, str, int]:
            self._require_current(scope, item.record_id, item.revision, "items[].revision")
            slot = _key(scope, item.record_id, item.space_id, item.revision)
            if slot in claimed or self._cf["bindings"].get(slot) is not None:
                raise ApiError(409, "binding_exists",
                               f"{item.record_id} revision {item.revision} already has a vector in {item.space_id}")
            claimed.add(slot)
            bid = binding_id(scope, item.record_id, item.revision, item.space_id)
            receipt = {"binding_id": bid, "record_id": item.record_id, "revision": item.revision,
                       "space_id": item.space_id, "dimensions": item.space["dimensions"],
                       "vector_sha256": item.vector_sha256}
            # base64 of the little-endian float32 bytes: exact, and ~20x cheaper to store than a
            # JSON float list (reads turn it back into the exact float64 values).
            value = {**receipt, "space": item.space, "vector_base64": encode_vector(item.vector)}
            plan.put("bindings", slot, canonical(value))
            plan.changes.append(Change("binding", value))
            return receipt, bid, item.revision

        return self._commit(scope, "embedding", "embedding.attach", items, plan)

    def assert_relations(self, scope: str, items: list[RelationAssert]) -> WriteResult:
        claimed: set[str] = set()

        def plan(plan: _Plan, item: RelationAssert) -> tuple[dict, str, int]:
            self._require_current(scope, item.source["id"], item.source["revision"], "items[].source.revision")
            self._require_current(scope, item.target["id"], item.target["revision"], "items[].target.revision")
            rid = relation_id(scope, item.external_id)
            if rid in claimed or self._cf["relations"].get(_key(scope, rid)) is not None:
                raise ApiError(409, "external_id_exists",
                               f"external id {item.external_id[:80]!r} is already relation {rid} of scope {scope} "
                               f"(asserted under another idempotency key)")
            claimed.add(rid)
            receipt = {"id": rid, "revision": 1, "kind": item.kind, "source": item.source, "target": item.target}
            value = {**receipt, "provenance": item.provenance}
            plan.put("relations", _key(scope, rid), canonical(value))
            plan.changes.append(Change("relation", value))
            return receipt, rid, 1

        return self._commit(scope, "relation", "relation.assert", items, plan)

    def _put_memory(self, plan: _Plan, rid: str, revision: int, payload: dict) -> dict:
        value = {"id": rid, "revision": revision, "payload": payload}
        raw = canonical(value)
        plan.put("memories", _key(plan.scope, rid), raw)
        plan.put("memory_revisions", _key(plan.scope, rid, revision), raw)
        plan.changes.append(Change("memory", value))
        return {"id": rid, "revision": revision, "payload_digest": digest(payload)}

    def _require_current(self, scope: str, rid: str, revision: int, where: str) -> int:
        current = self.current_revision(scope, rid)
        if current is None:
            raise ApiError(404, "record_not_found", f"memory {rid} does not exist in scope {scope}")
        if current != revision:
            raise ApiError(409, "stale_revision",
                           f"{where}: memory {rid} is at revision {current}, the request names {revision}")
        return current

    def _commit(self, scope: str, kind: str, op: str, items: list, plan_item) -> WriteResult:
        """Replays answered from the idempotency family; new items planned, then ONE synced batch."""
        plan = _Plan(scope, WriteBatch(raw_mode=True), self._digests.get(scope, RunningDigest()).copy(),
                     lambda family, key: self._cf[family].get(key), self._handles)
        receipts: list[dict] = []
        replayed: list[bool] = []
        fresh: list[tuple[bytes, Any]] = []
        for item in items:
            ikey = _key(scope, kind, item.key)
            stored = self._cf["idempotency"].get(ikey)
            if stored is not None:
                stored = _load(stored)
                if stored["body_digest"] != item.body_digest:
                    raise ApiError(409, "idempotency_conflict",
                                   f"idempotency key {item.key[:80]!r} was used with a different body")
                receipts.append(stored["receipt"])
                replayed.append(True)
                continue
            receipts.append({})
            replayed.append(False)
            fresh.append((ikey, item))
        hwm = self._hwm.get(scope, 0)
        revisions: dict[str, int] = {}
        slot = 0
        for i, was_replayed in enumerate(replayed):
            if was_replayed:
                continue
            ikey, item = fresh[slot]
            slot += 1
            receipt, rid, revision = plan_item(plan, item)
            hwm += 1
            entry = {"sequence": hwm, "op": op, "id": rid, "revision": revision, "body_digest": item.body_digest}
            plan.batch.put(_key(scope, hwm), canonical(entry), self._handles["journal"])
            plan.batch.put(ikey, canonical({"body_digest": item.body_digest, "receipt": receipt}),
                           self._handles["idempotency"])
            receipts[i] = receipt
            if op.startswith("memory."):
                revisions[rid] = revision
        if fresh:
            plan.batch.put(_key("hwm", scope), canonical(hwm), self._handles["meta"])
            plan.batch.put(_key("digest", scope), canonical(plan.digest.to_json()), self._handles["meta"])
            self._db.write(plan.batch, self._sync)
            self._hwm[scope] = hwm
            self._digests[scope] = plan.digest
            self._revisions.setdefault(scope, {}).update(revisions)
        return WriteResult(receipts, replayed, self.fence(scope), plan.changes)

    # ------------------------------------------------------------ reads

    def read_memories(self, scope: str, ids: list[str]) -> list[dict]:
        out = []
        for rid in ids:
            raw = self._cf["memories"].get(_key(scope, rid))
            if raw is None:
                raise ApiError(404, "record_not_found", f"memory {rid} does not exist in scope {scope}")
            out.append(_load(raw))
        return out

    def list_memories(self, scope: str, after: str | None, limit: int) -> tuple[list[dict], str | None]:
        return self._id_page("memories", scope, after, limit)

    def list_relations(self, scope: str, after: str | None, limit: int) -> tuple[list[dict], str | None]:
        rows, nxt = self._id_page("relations", scope, after, limit)
        return [self._with_eligibility(scope, r) for r in rows], nxt

    def _id_page(self, family: str, scope: str, after: str | None, limit: int) -> tuple[list[dict], str | None]:
        prefix = _key(scope) + b"\x00"
        start = _key(scope, after) + b"\x01" if after else prefix
        rows: list[dict] = []
        for _, raw in _scan(self._cf[family], start, prefix):
            if len(rows) == limit:
                return rows, rows[-1]["id"]
            rows.append(_load(raw))
        return rows, None

    def read_relations(self, scope: str, ids: list[str]) -> list[dict]:
        out = []
        for rid in ids:
            raw = self._cf["relations"].get(_key(scope, rid))
            if raw is None:
                raise ApiError(404, "relation_not_found", f"relation {rid} does not exist in scope {scope}")
            out.append(self._with_eligibility(scope, _load(raw)))
        return out

    def _with_eligibility(self, scope: str, relation: dict) -> dict:
        eligible = all(self.current_revision(scope, relation[end]["id"]) == relation[end]["revision"]
                       for end in ("source", "target"))
        return {**relation, "eligible": eligible}

    def read_bindings(self, scope: str, record_ids: list[str], space_id: str) -> list[dict]:
        out = []
        for rid in record_ids:
            current = self.current_revision(scope, rid)
            if current is None:
                raise ApiError(404, "record_not_found", f"memory {rid} does not exist in scope {scope}")
            prefix = _key(scope, rid, space_id) + b"\x00"
            for _, raw in _scan(self._cf["bindings"], prefix, prefix):
                value = _load(raw)
                value.pop("space")
                value["vector"] = decode_vector(value.pop("vector_base64")).astype(np.float64).tolist()
                value["current"] = value["revision"] == current
                out.append(value)
        return out

    def journal(self, scope: str, after: int, limit: int) -> list[dict]:
        prefix = _key(scope) + b"\x00"
        entries: list[dict] = []
        for _, raw in _scan(self._cf["journal"], _key(scope, after + 1), prefix):
            if len(entries) == limit:
                break
            entries.append(_load(raw))
        return entries

    def digests(self, scope: str) -> dict:
        """Digests of the stored state of a scope, streamed: canonical(list) = `[` + `,`.join + `]`."""
        parts = {name: self._family_digest(family, scope) for name, family in
                 (("records", "memory_revisions"), ("bindings", "bindings"),
                  ("relations", "relations"), ("journal", "journal"))}
        return {**parts, "all": digest(parts)}

    def _family_digest(self, family: str, scope: str) -> str:
        h = hashlib.sha256(b"[")
        prefix = _key(scope) + b"\x00"
        first = True
        for _, raw in _scan(self._cf[family], prefix, prefix):
            h.update(raw if first else b"," + raw)
            first = False
        h.update(b"]")
        return h.hexdigest()

    # ------------------------------------------------------------ start-up feed of the indexes

    def scopes_and_values(self, family: str) -> Iterator[tuple[str, dict]]:
        """Every value of a family with its scope, in key order (memories: current revision only)."""
        for key, raw in _scan(self._cf[family]):
            yield key.split(b"\x00", 1)[0].decode("utf-8"), _load(raw)

    # ------------------------------------------------------------ credentials

    def credentials(self) -> Iterator[tuple[str, dict]]:
        for key, raw in _scan(self._cf["credentials"]):
            yield key.decode("ascii"), _load(raw)

    def put_credential(self, token_hash: str, value: dict) -> None:
        batch = WriteBatch(raw_mode=True)
        batch.put(token_hash.encode("ascii"), canonical(value), self._handles["credentials"])
        self._db.write(batch, self._sync)

    def revoke_credentials(self) -> None:
        batch = WriteBatch(raw_mode=True)
        for key, _ in _scan(self._cf["credentials"]):
            batch.delete(key, self._handles["credentials"])
        self._db.write(batch, self._sync)


def _node_kind(payload: dict) -> str | None:
    return (payload.get("metadata") or {}).get(GRAPH_NODE)


def _open(path: str, create: bool) -> Rdict:
    options = Options(raw_mode=True)
    options.create_if_missing(create)
    options.create_missing_column_families(create)
    families = {name: Options(raw_mode=True) for name in FAMILIES}
    try:
        return Rdict(path, options=options, column_families=families)
    except Exception as exc:  # rocksdict raises plain Exception with RocksDB's message
        text = str(exc)
        if "lock" in text.lower():
            raise StoreOpenError(f"DBDIR {path} is in use by another lab process (RocksDB LOCK held): {text}") from None
        raise StoreOpenError(f"cannot open DBDIR {path} as a lab store: {text}") from None
