"""Bad input over real sockets: a 4xx JSON error, and the journal high watermark unchanged after it.

Ends with a hypothesis fuzz of every write route (>= 500 hostile requests, no 5xx, digest unchanged).
"""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluator.connection.client import LabClient
from tests.lab_fixtures import SPACE, embedding_item, memory_item, relation_item, seed


@pytest.fixture(scope="module")
def world(lab):
    """A scope with three memories (one updated to revision 2), embeddings and relations."""
    process, root = lab
    token = root.mint_credential("refusals", 3600)["token"]
    client = LabClient({**process.access, "token": token}, scope="refusals")
    ids = seed(client, 3)
    client.update_memories([{"idempotency_key": "u", "id": ids[2], "revision": 1, "payload": {"content": "v2"}}])
    yield process, client, ids
    client.close()


def _hwm(client: LabClient) -> int:
    return client.fence()["high_watermark"]


def _assert_refused(client: LabClient, response, status: int, code: str | None, hwm: int) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert isinstance(error["message"], str) and error["message"]
    if code is not None:
        assert error["code"] == code, error
    assert _hwm(client) == hwm, "a refused request must write nothing"


def _mem(**payload):
    return {"items": [{"idempotency_key": "bad", "external_id": "bad", "payload": payload}]}


BAD_MEMORY_BODIES = [
    ("malformed json", b'{"items": [', 400, "malformed_json"),
    ("not utf-8", b'\xff\xfe{}', 400, "malformed_json"),
    ("deep nesting", b"[" * 100000 + b"]" * 100000, 400, "malformed_json"),
    ("huge integer literal", b'{"items": ' + b"9" * 5000 + b"}", 400, "malformed_json"),
    ("body not an object", [], 422, "wrong_type"),
    ("items not an array", {"items": {}}, 422, "wrong_type"),
    ("empty batch", {"items": []}, 422, "out_of_range"),
    ("batch over 1000", {"items": [memory_item(f"k{i}", "x") for i in range(1001)]}, 422, "out_of_range"),
    ("missing payload", {"items": [{"idempotency_key": "bad"}]}, 422, "missing_field"),
    ("missing content", _mem(metadata={}), 422, "missing_field"),
    ("unknown field", {"items": [{**memory_item("bad"), "extra": 1}]}, 422, "unknown_field"),
    ("content wrong type", _mem(content=5), 422, "wrong_type"),
    ("content empty", _mem(content=""), 422, "out_of_range"),
    ("content too long", _mem(content="x" * 32769), 422, "out_of_range"),
    ("lone surrogate", b'{"items":[{"idempotency_key":"bad","external_id":"bad","payload":{"content":"\\ud800"}}]}', 422, "invalid_string"),
    ("metadata non-string value", _mem(content="x", metadata={"a": 1}), 422, "wrong_type"),
    ("metadata too many keys", _mem(content="x", metadata={f"k{i}": "v" for i in range(33)}), 422, "out_of_range"),
    ("metadata value too long", _mem(content="x", metadata={"a": "v" * 1025}), 422, "out_of_range"),
    ("idempotency key too long", {"items": [memory_item("k" * 201)]}, 422, "out_of_range"),
    ("idempotency key wrong type", {"items": [{**memory_item("x"), "idempotency_key": 7}]}, 422, "wrong_type"),
    ("duplicate key in batch", {"items": [memory_item("d"), memory_item("d")]}, 422, "duplicate_idempotency_key"),
    ("missing external id", {"items": [{"idempotency_key": "bad", "payload": {"content": "x"}}]}, 422, "missing_field"),
    ("external id wrong type", {"items": [memory_item("x", external_id=None) | {"external_id": 7}]}, 422, "wrong_type"),
    ("external id empty", {"items": [memory_item("x") | {"external_id": ""}]}, 422, "out_of_range"),
    ("external id too long", {"items": [memory_item("x", external_id="d" * 201)]}, 422, "out_of_range"),
    ("duplicate external id in batch", {"items": [memory_item("k1", external_id="doc"), memory_item("k2", external_id="doc")]},
     422, "duplicate_external_id"),
]


@pytest.mark.parametrize("name,body,status,code", BAD_MEMORY_BODIES, ids=[c[0] for c in BAD_MEMORY_BODIES])
def test_bad_memory_bodies(world, name, body, status, code):
    _, client, _ = world
    hwm = _hwm(client)
    response = client.request("POST", f"/api/v1/scopes/{client.scope}/memories", body)
    _assert_refused(client, response, status, code, hwm)


def _vector_case(vector, space=None):
    return lambda ids: {"items": [embedding_item("bad-e", ids[0], vector=vector, space=space)]}


def _raw_vector(literal: str):
    return lambda ids: json.dumps({"items": [embedding_item("bad-e", ids[0], vector=[0, 0, 0, 0])]}).replace(
        "[0, 0, 0, 0]", literal).encode()


BAD_EMBEDDINGS = [
    ("NaN literal", _raw_vector("[NaN, 1, 1, 1]"), 422, "invalid_vector"),
    ("Infinity literal", _raw_vector("[1, Infinity, 1, 1]"), 422, "invalid_vector"),
    ("overflowing float", _raw_vector("[1, 1e400, 1, 1]"), 422, "invalid_vector"),
    ("beyond float32", _vector_case([1e39, 1.0, 1.0, 1.0]), 422, "invalid_vector"),
    ("all zero", _vector_case([0.0, 0.0, 0.0, 0.0]), 422, "invalid_vector"),
    ("wrong dimension", _vector_case([1.0, 2.0, 3.0]), 422, "dimension_mismatch"),
    ("string element", _vector_case([1.0, "2", 3.0, 4.0]), 422, "wrong_type"),
    ("bool element", _vector_case([True, 1.0, 1.0, 1.0]), 422, "wrong_type"),
    ("dimensions over 4096", _vector_case([1.0] * 4097, {**SPACE, "dimensions": 4097}), 422, "out_of_range"),
    ("space missing field", _vector_case([1.0] * 4, {"provider": "p", "model": "m", "dimensions": 4}), 422, "missing_field"),
    ("unknown record", lambda ids: {"items": [embedding_item("bad-e", "mem-" + "0" * 32)]}, 404, "record_not_found"),
    ("stale revision", lambda ids: {"items": [embedding_item("bad-e", ids[2], revision=1)]}, 409, "stale_revision"),
    ("binding exists", lambda ids: {"items": [embedding_item("bad-e", ids[0])]}, 409, "binding_exists"),
]


@pytest.mark.parametrize("name,build,status,code", BAD_EMBEDDINGS, ids=[c[0] for c in BAD_EMBEDDINGS])
def test_bad_embedding_bodies(world, name, build, status, code):
    _, client, ids = world
    hwm = _hwm(client)
    response = client.request("POST", f"/api/v1/scopes/{client.scope}/embeddings", build(ids))
    _assert_refused(client, response, status, code, hwm)


def _rel(**changes):
    def build(ids):
        item = relation_item("bad-r", ids[0], ids[1])
        item.update(changes)
        return {"items": [item]}
    return build


BAD_RELATIONS = [
    ("unknown kind", _rel(kind="cites"), 422, "unknown_relation_kind"),
    ("self relation", lambda ids: {"items": [relation_item("bad-r", ids[0], ids[0])]}, 422, "self_relation"),
    ("stale endpoint", lambda ids: {"items": [relation_item("bad-r", ids[0], ids[2], target_revision=1)]}, 409, "stale_revision"),
    ("future endpoint revision", lambda ids: {"items": [relation_item("bad-r", ids[0], ids[1], target_revision=5)]}, 409, "stale_revision"),
    ("unknown endpoint", lambda ids: {"items": [relation_item("bad-r", ids[0], "mem-" + "1" * 32)]}, 404, "record_not_found"),
    ("caller weight", _rel(weight=0.9), 422, "unknown_field"),
    ("caller confidence in provenance", lambda ids: {"items": [relation_item("bad-r", ids[0], ids[1], confidence=0.5)]}, 422, "unknown_field"),
    ("missing provenance", lambda ids: {"items": [{k: v for k, v in relation_item("bad-r", ids[0], ids[1]).items() if k != "provenance"}]}, 422, "missing_field"),
    ("unknown origin", lambda ids: {"items": [relation_item("bad-r", ids[0], ids[1], origin="rumour")]}, 422, "unknown_origin"),
    ("model inference without model", lambda ids: {"items": [relation_item("bad-r", ids[0], ids[1], origin="model_inference")]}, 422, "wrong_type"),
    ("external model without model", lambda ids: {"items": [relation_item("bad-r", ids[0], ids[1], origin="external_model")]}, 422, "wrong_type"),
    ("model given for a tool", lambda ids: {"items": [relation_item("bad-r", ids[0], ids[1], model="llm")]}, 422, "unexpected_model"),
    ("revision zero", lambda ids: {"items": [relation_item("bad-r", ids[0], ids[1], source_revision=0)]}, 422, "out_of_range"),
    ("bad id shape", lambda ids: {"items": [relation_item("bad-r", "doc-1", ids[1])]}, 422, "invalid_id"),
    # `$` alone would accept a trailing newline; ids are matched whole
    ("id with a trailing newline", lambda ids: {"items": [relation_item("bad-r", ids[0] + "\n", ids[1])]}, 422, "invalid_id"),
    ("missing external id", lambda ids: {"items": [{k: v for k, v in relation_item("bad-r", ids[0], ids[1]).items()
                                                    if k != "external_id"}]}, 422, "missing_field"),
    ("duplicate external id in batch", lambda ids: {"items": [relation_item("bad-r1", ids[0], ids[1], external_id="e"),
                                                              relation_item("bad-r2", ids[1], ids[0], external_id="e")]},
     422, "duplicate_external_id"),
    # seed() asserted external id "r0" under key "r0"; another key cannot assert it again
    ("external id asserted under another key", lambda ids: {"items": [relation_item("bad-r", ids[1], ids[0], external_id="r0")]},
     409, "external_id_exists"),
]


@pytest.mark.parametrize("name,build,status,code", BAD_RELATIONS, ids=[c[0] for c in BAD_RELATIONS])
def test_bad_relation_bodies(world, name, build, status, code):
    _, client, ids = world
    hwm = _hwm(client)
    response = client.request("POST", f"/api/v1/scopes/{client.scope}/relations", build(ids))
    _assert_refused(client, response, status, code, hwm)


def test_stale_update_and_update_of_unknown_memory(world):
    _, client, ids = world
    hwm = _hwm(client)
    path = f"/api/v1/scopes/{client.scope}/memories/update"
    stale = {"items": [{"idempotency_key": "bad-u", "id": ids[2], "revision": 1, "payload": {"content": "x"}}]}
    _assert_refused(client, client.request("POST", path, stale), 409, "stale_revision", hwm)
    unknown = {"items": [{"idempotency_key": "bad-u", "id": "mem-" + "2" * 32, "revision": 1, "payload": {"content": "x"}}]}
    _assert_refused(client, client.request("POST", path, unknown), 404, "record_not_found", hwm)


def test_idempotency_replay_with_a_different_body_is_409(world):
    _, client, _ = world
    path = f"/api/v1/scopes/{client.scope}/memories"
    client.create_memories([memory_item("once", "first")])
    hwm = _hwm(client)
    body = {"items": [memory_item("new-key", "fine"), memory_item("once", "second")]}
    _assert_refused(client, client.request("POST", path, body), 409, "idempotency_conflict", hwm)


def test_an_external_id_created_under_another_key_is_409(world):
    # the record id derives from the external id alone, so a second create of the same document
    # under another idempotency key (another fixture, say) would collide with the first
    _, client, _ = world
    path = f"/api/v1/scopes/{client.scope}/memories"
    client.create_memories([memory_item("fixture-a:doc", "text", external_id="doc-x")])
    hwm = _hwm(client)
    body = {"items": [memory_item("fixture-b:other", "fine", external_id="doc-y"),
                      memory_item("fixture-b:doc", "text", external_id="doc-x")]}
    _assert_refused(client, client.request("POST", path, body), 409, "external_id_exists", hwm)


def test_body_over_two_mib_is_413_by_length_and_by_stream(world):
    _, client, _ = world
    hwm = _hwm(client)
    path = f"/api/v1/scopes/{client.scope}/memories"
    big = b'{"items":[' + b" " * (2 * 1024 * 1024) + b"]}"
    _assert_refused(client, client.request("POST", path, big), 413, "body_too_large", hwm)
    # No Content-Length (chunked): the server must count what it reads.
    chunks = (b" " * 65536 for _ in range(40))
    response = client.http.post(path, content=chunks, headers={"Content-Type": "application/json"})
    _assert_refused(client, response, 413, "body_too_large", hwm)


def _raw_post(client: LabClient, path: str, head_lines: list[str], payload: bytes, half_close: bool = False) -> bytes:
    """One POST over a bare socket (so the headers can lie); returns every byte the server sent."""
    url = urlsplit(client.access["base_url"])
    head = "\r\n".join([f"POST {path} HTTP/1.1", f"Host: {url.netloc}",
                         f"Authorization: {client.http.headers['authorization']}",
                         "Content-Type: application/json", *head_lines, "", ""]).encode()
    sock = socket.create_connection((url.hostname, url.port), timeout=10)

    def send() -> None:
        try:
            sock.sendall(head + payload)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server may close before we finish: that is its right
            pass

    sender = threading.Thread(target=send)
    sender.start()
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except OSError:
        pass
    sender.join()
    sock.close()
    return received


def test_lying_content_length_reads_only_what_it_declares(world):
    """Content-Length 1,000 with 3 MiB behind it: the body is the declared 1,000 bytes (malformed
    here), never more; the rest is not a request. Nothing is written."""
    _, client, _ = world
    hwm = _hwm(client)
    payload = b'{"items":[' + b" " * (3 * 1024 * 1024) + b"]}"
    answer = _raw_post(client, f"/api/v1/scopes/{client.scope}/memories", ["Content-Length: 1000"], payload)
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:300]
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    assert json.loads(rest[:length])["error"]["code"] == "malformed_json"
    assert _hwm(client) == hwm


def test_client_gone_mid_body_is_no_server_error(world):
    """A client that declares 1,000 bytes, sends 10 and goes away: no write and no 500/traceback."""
    process, client, _ = world
    hwm, log_before = _hwm(client), len(process.log())
    _raw_post(client, f"/api/v1/scopes/{client.scope}/memories", ["Content-Length: 1000"], b'{"items":[',
              half_close=True)
    time.sleep(0.3)  # let the server finish with the connection before reading its log
    assert _hwm(client) == hwm
    logged = process.log()[log_before:]
    assert "Traceback" not in logged and "Exception in ASGI application" not in logged, logged[-2000:]


@pytest.mark.heavy  # a sweep over every write route, or over credentials
def test_credentials_missing_wrong_expired_and_other_scope(world):
    process, client, _ = world
    hwm = _hwm(client)
    path = f"/api/v1/scopes/{client.scope}/memories"
    body = {"items": [memory_item("auth-probe")]}
    raw = httpx.Client(base_url=process.access["base_url"])
    _assert_refused(client, raw.post(path, json=body), 401, "missing_token", hwm)
    _assert_refused(client, raw.post(path, json=body, headers={"Authorization": "Bearer wrong"}), 401, "invalid_token", hwm)
    _assert_refused(client, raw.post(path, json=body, headers={"Authorization": "Basic abc"}), 401, "missing_token", hwm)
    with LabClient(process.access) as root:  # only the access file's credential may mint
        short = root.mint_credential(client.scope, 1)["token"]
        other = root.mint_credential("elsewhere", 60)["token"]
    _assert_refused(client, raw.post(path, json=body, headers={"Authorization": f"Bearer {other}"}), 403, "wrong_scope", hwm)
    time.sleep(2.05)
    _assert_refused(client, raw.post(path, json=body, headers={"Authorization": f"Bearer {short}"}), 401, "expired_token", hwm)
    raw.close()


def test_credential_request_validation(world):
    process, _, _ = world
    with LabClient(process.access) as root:  # the access file's credential, the one that may mint
        for body in ({"scope": "Bad Scope", "ttl_seconds": 5}, {"scope": "x", "ttl_seconds": 0},
                     {"scope": "x", "ttl_seconds": 86401}, {"scope": "x"}, {"scope": "x", "ttl_seconds": True},
                     {"scope": "x\n", "ttl_seconds": 5}):
            response = root.request("POST", "/api/v1/credentials", body)
            assert response.status_code == 422, (body, response.text)


def test_unknown_routes_methods_and_queries_are_json(world):
    _, client, _ = world
    hwm = _hwm(client)
    for method, path, status in (("GET", "/nowhere", 404), ("DELETE", "/health", 405),
                                 ("PUT", f"/api/v1/scopes/{client.scope}/memories", 405),
                                 ("GET", f"/api/v1/scopes/{client.scope}/memories?limit=0", 422),
                                 ("GET", f"/api/v1/scopes/{client.scope}/memories?limit=x", 422),
                                 ("GET", f"/api/v1/scopes/{client.scope}/memories?after=zz", 422),
                                 ("GET", f"/api/v1/scopes/{client.scope}/journal?after=-1", 422),
                                 ("GET", f"/api/v1/scopes/{client.scope}/journal?bogus=1", 422),
                                 ("POST", f"/api/v1/scopes/{client.scope}/search/nope", 404)):
        _assert_refused(client, client.request(method, path, {} if method == "POST" else None), status, None, hwm)


# ---------------------------------------------------------------- hypothesis fuzz

WRITE_ROUTES = ("memories", "memories/update", "embeddings", "relations")

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=30),
)
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)), max_leaves=20)
not_string = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.lists(json_leaf, max_size=3),
                       st.dictionaries(st.text(max_size=5), json_leaf, max_size=3))
not_int = st.one_of(st.none(), st.booleans(), st.floats(), st.text(max_size=5), st.lists(json_leaf, max_size=2))
hostile_vector = st.one_of(
    st.lists(st.sampled_from([math.nan, math.inf, -math.inf]), min_size=4, max_size=4),
    st.just([0.0, 0.0, 0.0, 0.0]),
    st.lists(st.floats(min_value=-1, max_value=1), max_size=3),
    st.lists(st.floats(min_value=-1, max_value=1), min_size=5, max_size=9),
    st.lists(st.integers(min_value=10**39, max_value=10**400), min_size=4, max_size=4),
    not_string.filter(lambda v: not isinstance(v, list)),
)


def _valid_body(route: str, ids: list[str]) -> dict:
    if route == "memories":
        return {"items": [memory_item("fuzz-m", "content")]}
    if route == "memories/update":
        return {"items": [{"idempotency_key": "fuzz-u", "id": ids[0], "revision": 1, "payload": {"content": "x"}}]}
    if route == "embeddings":
        return {"items": [embedding_item("fuzz-e", ids[1], vector=[1.0, 2.0, 3.0, 4.0],
                                         space={**SPACE, "model": "fuzz"})]}
    return {"items": [relation_item("fuzz-r", ids[0], ids[1])]}


@st.composite
def broken_body(draw, route: str, ids: list[str]):
    """A body that is certainly invalid: garbage, or a valid body with exactly one thing broken."""
    body = _valid_body(route, ids)
    item = body["items"][0]
    how = draw(st.sampled_from(["garbage", "json", "drop", "extra", "retype", "nest", "vector", "payload"]))
    if how == "garbage":
        return draw(st.binary(max_size=200).filter(lambda b: not b.strip().startswith(b"{")))
    if how == "json":
        value = draw(json_value.filter(lambda v: not (isinstance(v, dict) and "items" in v)))
        return json.dumps(value).encode()
    if how == "drop":
        del item[draw(st.sampled_from(sorted(item)))]
    elif how == "extra":
        item[draw(st.text(min_size=1, max_size=12).filter(lambda k: k not in item))] = draw(json_value)
    elif how == "retype":
        field = draw(st.sampled_from(sorted(item)))
        item[field] = draw(not_int if field == "revision" else not_string)
    elif how == "nest":
        depth = draw(st.integers(min_value=50, max_value=5000))
        field = draw(st.sampled_from(sorted(item)))
        return json.dumps(body).replace(json.dumps(item[field]), "[" * depth + "1" + "]" * depth, 1).encode()
    elif how == "vector" and route == "embeddings":
        item["vector"] = draw(hostile_vector)
    else:  # hostile payload / endpoint values where the route has them
        target = item.get("payload") or item.get("source") or item.get("space")
        if target is None:
            item["idempotency_key"] = draw(not_string)
        else:
            key = draw(st.sampled_from(sorted(target)))
            if key == "dimensions" or (key == "revision" and "id" in target):
                target[key] = draw(not_int)
            elif key == "metadata":  # any object of strings is valid metadata, so never an object
                target[key] = draw(not_string.filter(lambda v: not isinstance(v, dict)))
            else:
                target[key] = draw(not_string)
    return json.dumps(body).encode()  # NaN/Infinity go out as literals; \ud800 as escapes


@pytest.mark.heavy  # a sweep over every write route, or over credentials
def test_fuzz_write_routes(world):
    _, client, ids = world
    before = (client.digest(), _hwm(client))
    statuses: list[int] = []

    @settings(max_examples=520, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def one_request(data):
        route = data.draw(st.sampled_from(WRITE_ROUTES))
        body = data.draw(broken_body(route, ids))
        response = client.request("POST", f"/api/v1/scopes/{client.scope}/{route}", body)
        statuses.append(response.status_code)
        assert 400 <= response.status_code < 500, (route, body[:300], response.text)
        assert response.json()["error"]["code"]

    one_request()
    assert len(statuses) >= 500
    assert (client.digest(), _hwm(client)) == before
