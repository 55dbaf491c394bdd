"""The Starlette app: routes of docs/contracts.md over one `Lab` (store, credentials, indexes).

Every handler follows the same line: authorize, read the capped body, validate (server/validation.py),
then do the work in a worker thread. Writes hold the writer side of one lock while they commit and
feed the indexes; searches hold the reader side, so a page and its fence describe one state.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ground.fast_canonical import render
from server import routes as search_routes
from server import validation
from server.errors import ApiError
from server.retrieval.indexes import Indexes
from server.store.credentials import Credentials
from server.store.store import Change, Store, WriteResult, decode_vector, journal_id

VERSION = "0.1.0"


class CanonicalJSON(JSONResponse):
    """Canonical bytes: the same answer is always the same bytes (`ground.canonical`, rendered
    by orjson where that is proved to give the same bytes: ground/fast_canonical.py)."""

    def render(self, content: Any) -> bytes:
        return render(content)


class ReadWriteLock:
    """Many readers (searches, reads) or one writer (a batch commit plus its index feed)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False

    def read(self) -> _Held:
        return _Held(self, write=False)

    def write(self) -> _Held:
        return _Held(self, write=True)

    def _acquire(self, write: bool) -> None:
        with self._cond:
            if write:
                self._cond.wait_for(lambda: not self._writer and self._readers == 0)
                self._writer = True
            else:
                self._cond.wait_for(lambda: not self._writer)
                self._readers += 1

    def _release(self, write: bool) -> None:
        with self._cond:
            if write:
                self._writer = False
            else:
                self._readers -= 1
            self._cond.notify_all()


@dataclass
class _Held:
    lock: ReadWriteLock
    write: bool

    def __enter__(self) -> None:
        self.lock._acquire(self.write)

    def __exit__(self, *exc: object) -> None:
        self.lock._release(self.write)


@dataclass
class Lab:
    store: Store
    credentials: Credentials
    indexes: Indexes
    lock: ReadWriteLock = field(default_factory=ReadWriteLock)
    retrievals: int = 0  # touched only on the event loop thread, so no lock

    def feed(self, scope: str, changes: list[Change]) -> None:
        """Hand committed values to the in-memory indexes (RocksDB stays the truth)."""
        index = self.indexes.scope(scope)
        for change in changes:
            v = change.value
            if change.kind == "memory":
                index.put_memory(v["id"], v["revision"], v["payload"]["content"], payload=v["payload"])
            elif change.kind == "binding":
                index.put_binding(v["record_id"], v["revision"], v["space_id"],
                                  decode_vector(v["vector_base64"]), binding_id=v["binding_id"])
            else:
                index.put_relation(v)

    def feed_all(self) -> None:
        """Start-up: rebuild every index from RocksDB, memories before bindings before relations."""
        for family, kind in (("memories", "memory"), ("bindings", "binding"), ("relations", "relation")):
            for scope, value in self.store.scopes_and_values(family):
                self.feed(scope, [Change(kind, value)])


def _limits() -> dict:
    return dict(validation.LIMITS)


# ---------------------------------------------------------------- request plumbing


def _lab(request: Request) -> Lab:
    return request.app.state.lab


def _authorize(request: Request, scoped: bool = True) -> str:
    """The scope a request may act on; scoped routes also check the path's scope."""
    path_scope = request.path_params.get("scope") if scoped else None
    credential = _lab(request).credentials.check(request.headers.get("authorization"), path_scope)
    return credential["scope"]


async def _body(request: Request) -> Any:
    """The JSON body, refused above 2 MiB by Content-Length and again by counting streamed bytes."""
    cap = validation.LIMITS["body_bytes"]
    stream = request.stream()
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        await _drain(stream)
        raise ApiError(413, "body_too_large", f"request body of {declared[:20]} bytes exceeds the {cap}-byte limit")
    chunks, size = [], 0
    try:
        async for chunk in stream:
            size += len(chunk)
            if size > cap:
                await _drain(stream)
                raise ApiError(413, "body_too_large", f"request body exceeds the {cap}-byte limit")
            chunks.append(chunk)
    except ClientDisconnect:
        # The client left mid-body: bad input, not a server fault (no 500, no traceback in the log).
        raise ApiError(400, "incomplete_body", f"the client disconnected after {size} bytes of the body") from None
    return validation.parse_json(b"".join(chunks))


async def _drain(stream, budget: int = 64 * 1024 * 1024) -> None:
    # Reading (and discarding) the rest lets the client finish sending and read our 413 instead of
    # a reset connection; past the budget we stop and let the connection drop.
    try:
        async for chunk in stream:
            budget -= len(chunk)
            if budget < 0:
                return
    except ClientDisconnect:
        return


def _write_answer(result: WriteResult) -> dict:
    return {"receipts": result.receipts, "replayed": result.replayed, "fence": result.fence}


async def _write(request: Request, parse, commit) -> Response:
    scope = _authorize(request)
    body = await _body(request)
    lab = _lab(request)

    def work() -> dict:
        items = parse(body)
        with lab.lock.write():
            result = commit(lab.store, scope, items)
            lab.feed(scope, result.changes)
        return _write_answer(result)

    return CanonicalJSON(await run_in_threadpool(work))


async def _read(request: Request, work) -> Response:
    """A read under the reader lock, off the event loop."""
    lab = _lab(request)

    def locked() -> dict:
        with lab.lock.read():
            return work(lab.store)

    return CanonicalJSON(await run_in_threadpool(locked))


# ---------------------------------------------------------------- routes


async def health(request: Request) -> Response:
    return CanonicalJSON({"status": "ok", "version": VERSION, "limits": _limits()})


async def identity(request: Request) -> Response:
    scope = _authorize(request, scoped=False)
    marker = _lab(request).store.marker
    return CanonicalJSON({"lab_id": marker["lab_id"], "scope": scope, "version": VERSION,
                          "created_at": marker["created_at"], "journal_id": journal_id(marker["lab_id"], scope)})


async def catalog(request: Request) -> Response:
    _authorize(request, scoped=False)
    return CanonicalJSON({"profiles": search_routes.CATALOG})


async def credentials(request: Request) -> Response:
    holder = _lab(request).credentials.check(request.headers.get("authorization"))
    if not holder.get("may_mint"):
        raise ApiError(403, "minting_not_allowed",
                       "only the lab's own credential (its access file) can mint tokens; this one was minted")
    scope, ttl = validation.credential_request(await _body(request))
    # A minted token never outlives the one that minted it.
    ttl = min(ttl, max(1, holder["expires_epoch"] - int(time.time())))
    return CanonicalJSON(await run_in_threadpool(_lab(request).credentials.mint, scope, ttl))


async def create_memories(request: Request) -> Response:
    return await _write(request, validation.memory_creates, Store.create_memories)


async def update_memories(request: Request) -> Response:
    return await _write(request, validation.memory_updates, Store.update_memories)


async def attach_embeddings(request: Request) -> Response:
    return await _write(request, validation.embedding_attaches, Store.attach_embeddings)


async def assert_relations(request: Request) -> Response:
    return await _write(request, validation.relation_asserts, Store.assert_relations)


async def read_memories(request: Request) -> Response:
    scope = _authorize(request)
    ids = validation.record_ids(await _body(request))
    return await _read(request, lambda store: {"records": store.read_memories(scope, ids)})


async def _list(request: Request, id_re, what: str, key: str, lister) -> Response:
    """One page of ids after `after`: the shape every listing route shares."""
    scope = _authorize(request)
    after, limit = validation.id_page(request.query_params, id_re, what)

    def work(store: Store) -> dict:
        items, nxt = lister(store, scope, after, limit)
        return {key: items, "next": nxt}

    return await _read(request, work)


async def list_memories(request: Request) -> Response:
    return await _list(request, validation.RECORD_ID_RE, "memory id", "records", Store.list_memories)


async def read_embeddings(request: Request) -> Response:
    scope = _authorize(request)
    ids, space_id = validation.binding_read(await _body(request))
    return await _read(request, lambda store: {"bindings": store.read_bindings(scope, ids, space_id)})


async def read_relations(request: Request) -> Response:
    scope = _authorize(request)
    ids = validation.relation_ids(await _body(request))
    return await _read(request, lambda store: {"relations": store.read_relations(scope, ids)})


async def list_relations(request: Request) -> Response:
    return await _list(request, validation.RELATION_ID_RE, "relation id", "relations", Store.list_relations)


async def journal(request: Request) -> Response:
    scope = _authorize(request)
    after, limit = validation.journal_page(request.query_params)

    def work(store: Store) -> dict:
        return {**store.fence(scope), "entries": store.journal(scope, after, limit)}

    return await _read(request, work)


async def fence(request: Request) -> Response:
    scope = _authorize(request)
    return await _read(request, lambda store: store.fence(scope))


async def digest(request: Request) -> Response:
    scope = _authorize(request)
    return await _read(request, lambda store: store.digests(scope))


async def running_digest(request: Request) -> Response:
    """The fence and the running digest, read under one reader lock: a pair that describes one state."""
    scope = _authorize(request)
    return await _read(request, lambda store: {"fence": store.fence(scope),
                                                "running_digest": store.running_digest(scope)})


async def search(request: Request) -> Response:
    scope = _authorize(request)
    route = request.path_params["method"]
    if route not in search_routes.HANDLERS:  # before the body is read: one 404 for every unknown route
        raise search_routes.unknown_route(route)
    body = await _body(request)
    lab = _lab(request)
    if lab.retrievals >= validation.LIMITS["concurrent_retrievals"]:
        raise ApiError(503, "retrieval_busy",
                       f"{lab.retrievals} retrievals are running; at most "
                       f"{validation.LIMITS['concurrent_retrievals']} at once, retry later")
    lab.retrievals += 1
    try:
        started = time.perf_counter_ns()

        def work() -> dict:
            with lab.lock.read():
                page = search_routes.search(lab.indexes.scope(scope), route, body)
                page["fence"] = lab.store.fence(scope)
            return page

        page = await run_in_threadpool(work)
        micros = (time.perf_counter_ns() - started) // 1000
    finally:
        lab.retrievals -= 1
    return CanonicalJSON(page, headers={"X-Lab-Retrieval-Micros": str(micros)})


# ---------------------------------------------------------------- errors


# Starlette types every handler as taking an Exception; each is registered for one class
async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return CanonicalJSON(exc.body(), status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    message = {404: f"no route {request.method} {request.url.path}",
               405: f"{request.method} is not allowed on {request.url.path}"}.get(exc.status_code, str(exc.detail))
    return CanonicalJSON({"error": {"code": code, "message": message}}, status_code=exc.status_code,
                         headers=exc.headers)


async def _unexpected(request: Request, exc: Exception) -> Response:
    # A bug, not bad input; still a JSON body so a client never has to parse an HTML page.
    return CanonicalJSON({"error": {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"[:500]}},
                         status_code=500)


def create_app(lab: Lab) -> Starlette:
    scoped = "/api/v1/scopes/{scope}"
    routes = [
        # first: Starlette tries the routes in order, and a campaign is tens of thousands of searches
        # (no other path overlaps this one, so the order changes no answer)
        Route(f"{scoped}/search/{{method}}", search, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/api/v1/identity", identity, methods=["GET"]),
        Route("/api/v1/catalog", catalog, methods=["GET"]),
        Route("/api/v1/credentials", credentials, methods=["POST"]),
        Route(f"{scoped}/memories", create_memories, methods=["POST"]),
        Route(f"{scoped}/memories", list_memories, methods=["GET"]),
        Route(f"{scoped}/memories/update", update_memories, methods=["POST"]),
        Route(f"{scoped}/memories/read", read_memories, methods=["POST"]),
        Route(f"{scoped}/embeddings", attach_embeddings, methods=["POST"]),
        Route(f"{scoped}/embeddings/read", read_embeddings, methods=["POST"]),
        Route(f"{scoped}/relations", assert_relations, methods=["POST"]),
        Route(f"{scoped}/relations", list_relations, methods=["GET"]),
        Route(f"{scoped}/relations/read", read_relations, methods=["POST"]),
        Route(f"{scoped}/journal", journal, methods=["GET"]),
        Route(f"{scoped}/fence", fence, methods=["GET"]),
        Route(f"{scoped}/digest", digest, methods=["GET"]),
        Route(f"{scoped}/running-digest", running_digest, methods=["GET"]),
    ]
    app = Starlette(routes=routes, exception_handlers={
        ApiError: _api_error, HTTPException: _http_error, Exception: _unexpected})
    app.state.lab = lab
    return app
