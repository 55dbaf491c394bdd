"""Every request body and query string of the store routes is checked here, and only here.

Each function takes parsed JSON (or query parameters) and returns plain, normalized values or
raises `ApiError`; nothing downstream re-checks shapes. 400 means the bytes are not a JSON
document; 422 means a JSON document that breaks a rule (type, missing or unknown field, a size
cap, a non-finite or zero vector, an unknown relation kind, a self-relation).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ground.canonical import digest
from protocols.route import GRAPH_NODE, SEARCH_LIMIT
from protocols.routes import NODE_KINDS
from protocols.routes import RELATION_KINDS as DECLARED_RELATIONS
from server.errors import ApiError
from server.receipts import vector_sha256

LIMITS: dict[str, Any] = {  # integers, and the search limit as a [low, high] pair
    "body_bytes": 2 * 1024 * 1024,
    "batch_items": 1000,
    "read_ids": 1000,
    "page_limit": 1000,
    "content_chars": 32768,
    "metadata_keys": 32,
    "metadata_value_chars": 1024,
    "metadata_key_chars": 128,
    "idempotency_key_chars": 200,
    "external_id_chars": 200,
    "short_string_chars": 1024,
    "vector_dimensions": 4096,
    "credential_ttl_seconds": 86400,
    "concurrent_retrievals": 2,
    # Retrieval limits: a search's page (protocols/route.py) and a graph expansion's budget
    # (server/families/graph/graph_route.py); reported here so health has one source.
    "search_limit": list(SEARCH_LIMIT),
    "max_depth": [0, 3],
    "max_nodes": 1024,
    "max_edges": 4096,
    "max_scan": 16384,
    "query_chars": 4096,
}

RELATION_KINDS = (
    "same_entity",
    "semantic_related",
    "temporal_before",
    "causal_claim",
    "supports",
    "contradicts",
    "shares_name",  # document_entity_graph_v1 (builders/entity_graph.py, docs/graph-v4.md)
    "shares_entity",  # document_ner_graph_v1 (builders/ner_graph.py, docs/field-graphs.md)
    "shares_argument",  # imported_triples_v1 (builders/imported_graph.py, docs/graph-import.md)
) + tuple(DECLARED_RELATIONS)  # the kinds method families bring, each with its evidence rule (protocols/route.py)
# external_model: made by a model outside the lab (an imported LLM graph), named in `model`
ORIGINS = ("tool_observation", "model_inference", "human_statement", "imported_assertion", "external_model")
MODEL_ORIGINS = ("model_inference", "external_model")  # the origins whose `model` names the model
# Matched with `fullmatch` only: `$` would also accept a trailing newline ("lab\n").
SCOPE_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
RECORD_ID_RE = re.compile(r"mem-[0-9a-f]{32}")
RELATION_ID_RE = re.compile(r"rel-[0-9a-f]{32}")
SPACE_ID_RE = re.compile(r"space-[0-9a-f]{64}")


@dataclass(frozen=True)
class MemoryCreate:
    key: str
    external_id: str  # the document's own id (source.json); the record id derives from it alone
    payload: dict
    body_digest: str


@dataclass(frozen=True)
class MemoryUpdate:
    key: str
    id: str
    revision: int
    payload: dict
    body_digest: str


@dataclass(frozen=True)
class EmbeddingAttach:
    key: str
    record_id: str
    revision: int
    space: dict
    space_id: str
    vector: np.ndarray  # float32, finite, non-zero
    vector_sha256: str
    body_digest: str


@dataclass(frozen=True)
class RelationAssert:
    key: str
    external_id: str  # the edge's own id (relations.json); the relation id derives from it alone
    kind: str
    source: dict
    target: dict
    provenance: dict
    body_digest: str


# ---------------------------------------------------------------- parsing


def parse_json(raw: bytes) -> Any:
    """Bytes -> JSON value; anything that is not one UTF-8 JSON document is a 400."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, "malformed_json", f"body is not UTF-8: {exc}") from None
    try:
        return json.loads(text)
    # RecursionError: deep nesting; ValueError: also integers beyond Python's digit limit.
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, "malformed_json", f"body is not valid JSON: {exc}"[:300]) from None


# ---------------------------------------------------------------- primitives


def _fail(code: str, message: str) -> ApiError:
    return ApiError(422, code, message)


def fields(value: Any, where: str, required: tuple, optional: tuple = ()) -> dict:
    """An object with every required field and nothing beyond the optional ones (also search bodies)."""
    if not isinstance(value, dict):
        raise _fail("wrong_type", f"{where} must be an object, got {_type(value)}")
    unknown = sorted(set(value) - set(required) - set(optional))
    if unknown:
        hint = ""
        if any(k in ("weight", "weights", "confidence", "score") for k in unknown):
            hint = " (caller-supplied weights and confidences are not accepted)"
        raise _fail("unknown_field", f"{where} has unknown field(s) {_show(unknown)}{hint}")
    missing = [k for k in required if k not in value]
    if missing:
        raise _fail("missing_field", f"{where} is missing field(s) {_show(missing)}")
    return value


def _string(value: Any, where: str, max_chars: int, min_chars: int = 1) -> str:
    if not isinstance(value, str):
        raise _fail("wrong_type", f"{where} must be a string, got {_type(value)}")
    if not min_chars <= len(value) <= max_chars:
        raise _fail("out_of_range", f"{where} must have {min_chars}..{max_chars} characters, has {len(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail("invalid_string", f"{where} contains a lone surrogate (not encodable as UTF-8)") from None
    return value


def query_text(value: Any, min_chars: int = 0) -> str:
    """A search route's `query`: a string of min_chars..LIMITS["query_chars"] characters."""
    if not isinstance(value, str):
        raise _fail("wrong_type", f"query must be a string, got {_type(value)}")
    max_chars = LIMITS["query_chars"]
    if not min_chars <= len(value) <= max_chars:
        raise _fail("out_of_range", f"query must have {min_chars}..{max_chars} characters, has {len(value)}")
    return value


def bound_space(value: Any, spaces: dict):
    """The scope's space named by a search body's `space_id` (one with bindings), else 422."""
    if not isinstance(value, str):
        raise _fail("wrong_type", f"space_id must be a string, got {_type(value)}")
    space = spaces.get(value)
    if space is None:
        raise _fail("unknown_space", f"unknown space {shown(value)}: no embedding is bound in it in this scope")
    return space


def integer(value: Any, where: str, low: int, high: int) -> int:
    """An integer (bool refused) within [low, high]; also the search routes' check."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail("wrong_type", f"{where} must be an integer, got {_type(value)}")
    if not low <= value <= high:
        raise _fail("out_of_range", f"{where} must be in {low}..{high}, got {_clip(value)}")
    return value


def _list(value: Any, where: str, max_items: int, min_items: int = 1) -> list:
    if not isinstance(value, list):
        raise _fail("wrong_type", f"{where} must be an array, got {_type(value)}")
    if not min_items <= len(value) <= max_items:
        raise _fail("out_of_range", f"{where} must hold {min_items}..{max_items} items, holds {len(value)}")
    return value


def _pattern(value: Any, where: str, pattern: re.Pattern, what: str) -> str:
    _string(value, where, 200)
    if not pattern.fullmatch(value):
        raise _fail("invalid_id", f"{where} is not a valid {what}: {value[:80]!r}")
    return value


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def shown(value: Any) -> str:
    """A refused value for an error message: a clipped string, else its type (never a 2 MiB echo)."""
    return repr(value)[:80] if isinstance(value, str) else _type(value)


def _show(names: list) -> str:
    return ", ".join(repr(n[:60]) for n in names[:5]) + (" ..." if len(names) > 5 else "")


def _clip(value: int) -> str:
    text = str(value) if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit integer"
    return text


MAX_REVISION = 2**53


def _revision(value: Any, where: str) -> int:
    return integer(value, where, 1, MAX_REVISION)


def _items(body: Any) -> list:
    body = fields(body, "body", ("items",))
    items = _list(body["items"], "items", LIMITS["batch_items"])
    keys = set()
    for i, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("idempotency_key"), str):
            if item["idempotency_key"] in keys:
                raise _fail("duplicate_idempotency_key", f"items[{i}].idempotency_key repeats an earlier item of this batch")
            keys.add(item["idempotency_key"])
    return items


def _key(item: dict, where: str) -> str:
    return _string(item["idempotency_key"], f"{where}.idempotency_key", LIMITS["idempotency_key_chars"])


def _external_id(item: dict, where: str, seen: set[str]) -> str:
    """The caller's own id of a memory or relation (unique within the batch): ids derive from it."""
    external_id = _string(item["external_id"], f"{where}.external_id", LIMITS["external_id_chars"])
    if external_id in seen:
        raise _fail("duplicate_external_id", f"{where}.external_id repeats an earlier item of this batch")
    seen.add(external_id)
    return external_id


def _payload(value: Any, where: str) -> dict:
    payload = fields(value, where, ("content",), ("metadata",))
    content = _string(payload["content"], f"{where}.content", LIMITS["content_chars"])
    metadata = payload.get("metadata", {})
    if not isinstance(metadata, dict):
        raise _fail("wrong_type", f"{where}.metadata must be an object, got {_type(metadata)}")
    if len(metadata) > LIMITS["metadata_keys"]:
        raise _fail("out_of_range", f"{where}.metadata has {len(metadata)} keys, at most {LIMITS['metadata_keys']}")
    for name, text in metadata.items():
        _string(name, f"{where}.metadata key", LIMITS["metadata_key_chars"])
        _string(text, f"{where}.metadata[{name[:40]!r}]", LIMITS["metadata_value_chars"], min_chars=0)
    _graph_node(metadata, where)
    # Normalized so that an omitted metadata and an empty one are the same body.
    return {"content": content, "metadata": dict(metadata)}


def _graph_node(metadata: dict, where: str) -> None:
    """A node memory (protocols/route.py) is of a kind a family declares, naming what that kind names."""
    kind = metadata.get(GRAPH_NODE)
    if kind is None:
        return
    declared = NODE_KINDS.get(kind) if isinstance(kind, str) else None
    if declared is None:
        raise _fail("invalid_graph_node", f"{where}.metadata.{GRAPH_NODE} must be one of "
                                          f"{', '.join(repr(name) for name in NODE_KINDS)}, got {shown(kind)}")
    if not all(metadata.get(name) for name in declared.names):
        raise _fail("invalid_graph_node", f"{where}.metadata: a {kind} node names its {' and '.join(declared.names)} "
                                          f"(non-empty strings)")


# ---------------------------------------------------------------- write bodies


def memory_creates(body: Any) -> list[MemoryCreate]:
    out: list[MemoryCreate] = []
    external_ids: set[str] = set()
    for i, item in enumerate(_items(body)):
        where = f"items[{i}]"
        item = fields(item, where, ("idempotency_key", "external_id", "payload"))
        key = _key(item, where)
        external_id = _external_id(item, where, external_ids)
        payload = _payload(item["payload"], f"{where}.payload")
        value = {"idempotency_key": key, "external_id": external_id, "payload": payload}
        out.append(MemoryCreate(key, external_id, payload, digest(value)))
    return out


def memory_updates(body: Any) -> list[MemoryUpdate]:
    out, ids = [], set()
    for i, item in enumerate(_items(body)):
        where = f"items[{i}]"
        item = fields(item, where, ("idempotency_key", "id", "revision", "payload"))
        key = _key(item, where)
        record_id = _pattern(item["id"], f"{where}.id", RECORD_ID_RE, "memory id")
        if record_id in ids:
            raise _fail("duplicate_id", f"{where}.id updates the same memory twice in one batch")
        ids.add(record_id)
        revision = _revision(item["revision"], f"{where}.revision")
        payload = _payload(item["payload"], f"{where}.payload")
        value = {"idempotency_key": key, "id": record_id, "revision": revision, "payload": payload}
        out.append(MemoryUpdate(key, record_id, revision, payload, digest(value)))
    return out


def space(value: Any, where: str) -> tuple[dict, str]:
    value = fields(value, where, ("provider", "model", "revision", "dimensions"))
    normalized = {
        "provider": _string(value["provider"], f"{where}.provider", 200),
        "model": _string(value["model"], f"{where}.model", 200),
        "revision": _string(value["revision"], f"{where}.revision", 200),
        "dimensions": integer(value["dimensions"], f"{where}.dimensions", 1, LIMITS["vector_dimensions"]),
    }
    return normalized, "space-" + digest(normalized)


def vector(value: Any, where: str, dimensions: int) -> np.ndarray:
    """A JSON array -> float32 vector: finite, not all zero, exactly `dimensions` long."""
    if not isinstance(value, list):
        raise _fail("wrong_type", f"{where} must be an array of numbers, got {_type(value)}")
    if len(value) != dimensions:
        raise _fail("dimension_mismatch", f"{where} has {len(value)} values, the space declares {dimensions}")
    if not set(map(type, value)) <= {float, int}:  # exact types: bool (an int subclass) is refused
        for j, x in enumerate(value):
            if type(x) not in (float, int):
                raise _fail("wrong_type", f"{where}[{j}] must be a number, got {_type(x)}")
    try:
        wide = np.array(value, dtype=np.float64)
    except OverflowError:
        raise _fail("invalid_vector", f"{where} holds an integer too large for a float") from None
    return _narrow(wide, where)


def query_vector(value: Any, where: str, dimensions: int) -> np.ndarray:
    """A search's query vector: a JSON array (the rule of `vector`) or a string holding the base64
    (RFC 4648, padded, no line breaks) of its little-endian float64 bytes. Both travel exactly:
    float64 is what a JSON number denotes, so the two forms of one vector are the same request."""
    if not isinstance(value, str):
        return vector(value, where, dimensions)
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error) as exc:
        raise _fail("invalid_base64", f"{where} is neither an array nor valid base64: {exc}"[:200]) from None
    if len(raw) % 8:
        raise _fail("invalid_vector", f"{where} decodes to {len(raw)} bytes, not a whole number of float64 values")
    if len(raw) // 8 != dimensions:
        raise _fail("dimension_mismatch", f"{where} holds {len(raw) // 8} float64 values, the space declares {dimensions}")
    return _narrow(np.frombuffer(raw, dtype="<f8").astype(np.float64), where)


def _narrow(wide: np.ndarray, where: str) -> np.ndarray:
    """float64 values -> the float32 vector every binding and receipt is made of."""
    if not np.isfinite(wide).all():
        raise _fail("invalid_vector", f"{where} holds NaN or infinite values")
    with np.errstate(over="ignore"):
        narrow = wide.astype(np.float32)
    if not np.isfinite(narrow).all():
        raise _fail("invalid_vector", f"{where} holds values beyond the float32 range")
    if not narrow.any():
        raise _fail("invalid_vector", f"{where} is all zero (no direction to compare)")
    return narrow


def embedding_attaches(body: Any) -> list[EmbeddingAttach]:
    out = []
    for i, item in enumerate(_items(body)):
        where = f"items[{i}]"
        item = fields(item, where, ("idempotency_key", "record_id", "revision", "space", "vector"))
        key = _key(item, where)
        record_id = _pattern(item["record_id"], f"{where}.record_id", RECORD_ID_RE, "memory id")
        revision = _revision(item["revision"], f"{where}.revision")
        space_value, space_id = space(item["space"], f"{where}.space")
        narrow = vector(item["vector"], f"{where}.vector", space_value["dimensions"])
        sha = vector_sha256(narrow)
        # The body digest binds the vector through its float32 bytes: same vector, same digest.
        value = {"idempotency_key": key, "record_id": record_id, "revision": revision,
                 "space": space_value, "vector_sha256": sha}
        out.append(EmbeddingAttach(key, record_id, revision, space_value, space_id, narrow, sha, digest(value)))
    return out


def _endpoint(value: Any, where: str) -> dict:
    value = fields(value, where, ("id", "revision"))
    return {"id": _pattern(value["id"], f"{where}.id", RECORD_ID_RE, "memory id"),
            "revision": _revision(value["revision"], f"{where}.revision")}


def _provenance(value: Any, where: str) -> dict:
    value = fields(value, where, ("origin", "method", "method_revision", "evidence_ref"), ("model",))
    origin = value["origin"]
    if origin not in ORIGINS:
        raise _fail("unknown_origin", f"{where}.origin must be one of {', '.join(ORIGINS)}, got {shown(origin)}")
    model = value.get("model")
    if origin in MODEL_ORIGINS:
        model = _string(model, f"{where}.model (required when origin is {origin})", 200)
    elif model is not None:
        raise _fail("unexpected_model", f"{where}.model must be null unless origin is one of {', '.join(MODEL_ORIGINS)}")
    return {
        "origin": origin,
        "method": _string(value["method"], f"{where}.method", 200),
        "method_revision": _string(value["method_revision"], f"{where}.method_revision", 200),
        "evidence_ref": _string(value["evidence_ref"], f"{where}.evidence_ref", LIMITS["short_string_chars"]),
        "model": model,
    }


def _declared_evidence(kind: str, evidence: str, where: str) -> None:
    """A relation kind a family declares carries its weight in its evidence: refused unless it reads
    as the family's rule says (protocols/route.py)."""
    rule = DECLARED_RELATIONS.get(kind)
    if rule is not None and not rule.holds(evidence):
        raise _fail("invalid_evidence", f"{where} of a {kind} relation must read {rule.prefix}N ({rule.reads}), "
                                        f"got {shown(evidence)}")


def relation_asserts(body: Any) -> list[RelationAssert]:
    out: list[RelationAssert] = []
    external_ids: set[str] = set()
    for i, item in enumerate(_items(body)):
        where = f"items[{i}]"
        item = fields(item, where, ("idempotency_key", "external_id", "kind", "source", "target", "provenance"))
        key = _key(item, where)
        external_id = _external_id(item, where, external_ids)
        kind = item["kind"]
        if kind not in RELATION_KINDS:
            raise _fail("unknown_relation_kind",
                        f"{where}.kind must be one of {', '.join(RELATION_KINDS)}, got {shown(kind)}")
        source = _endpoint(item["source"], f"{where}.source")
        target = _endpoint(item["target"], f"{where}.target")
        if source["id"] == target["id"]:
            raise _fail("self_relation", f"{where} relates {source['id']} to itself")
        provenance = _provenance(item["provenance"], f"{where}.provenance")
        _declared_evidence(kind, provenance["evidence_ref"], f"{where}.provenance.evidence_ref")
        value = {"idempotency_key": key, "external_id": external_id, "kind": kind, "source": source,
                 "target": target, "provenance": provenance}
        out.append(RelationAssert(key, external_id, kind, source, target, provenance, digest(value)))
    return out


# ---------------------------------------------------------------- read bodies and queries


def record_ids(body: Any, field: str = "ids") -> list[str]:
    body = fields(body, "body", (field,))
    ids = _list(body[field], field, LIMITS["read_ids"])
    return [_pattern(v, f"{field}[{i}]", RECORD_ID_RE, "memory id") for i, v in enumerate(ids)]


def relation_ids(body: Any) -> list[str]:
    body = fields(body, "body", ("ids",))
    ids = _list(body["ids"], "ids", LIMITS["read_ids"])
    return [_pattern(v, f"ids[{i}]", RELATION_ID_RE, "relation id") for i, v in enumerate(ids)]


def binding_read(body: Any) -> tuple[list[str], str]:
    body = fields(body, "body", ("record_ids", "space_id"))
    ids = _list(body["record_ids"], "record_ids", LIMITS["read_ids"])
    ids = [_pattern(v, f"record_ids[{i}]", RECORD_ID_RE, "memory id") for i, v in enumerate(ids)]
    return ids, _pattern(body["space_id"], "space_id", SPACE_ID_RE, "space id")


def credential_request(body: Any) -> tuple[str, int]:
    body = fields(body, "body", ("scope", "ttl_seconds"))
    scope = _pattern(body["scope"], "scope", SCOPE_RE, "scope name ([a-z0-9][a-z0-9_-]{0,63})")
    return scope, integer(body["ttl_seconds"], "ttl_seconds", 1, LIMITS["credential_ttl_seconds"])


def _query_int(params, name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    if not re.fullmatch(r"[0-9]{1,16}", raw):
        raise _fail("wrong_type", f"query parameter {name} must be a non-negative integer, got {raw[:40]!r}")
    return integer(int(raw), f"query parameter {name}", low, high)


def _known_params(params, allowed: tuple) -> None:
    unknown = sorted(set(params.keys()) - set(allowed))
    if unknown:
        raise _fail("unknown_field", f"unknown query parameter(s) {_show(unknown)}")


def id_page(params, pattern: re.Pattern, what: str) -> tuple[str | None, int]:
    """`?after=ID&limit=N` of the listing routes (id order)."""
    _known_params(params, ("after", "limit"))
    after = params.get("after")
    if after is not None:
        _pattern(after, "query parameter after", pattern, what)
    return after, _query_int(params, "limit", 100, 1, LIMITS["page_limit"])


def journal_page(params) -> tuple[int, int]:
    _known_params(params, ("after", "limit"))
    return (_query_int(params, "after", 0, 0, 2**62),
            _query_int(params, "limit", 1000, 1, LIMITS["page_limit"]))
