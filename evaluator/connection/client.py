"""HTTP client of the lab: one `httpx.Client`, one method per route, errors as `LabError`."""

from __future__ import annotations

import base64
import json
import re
import time
from typing import Any

import httpx
import numpy as np
import orjson


class LabError(Exception):
    """An error answer of the lab: HTTP status, the error code and message of its JSON body."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


def encode(value: Any) -> bytes:
    # Compact and NaN-refusing, so the client never sends what the server would have to reject.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


# 19 digits in a row: an integer orjson could read beyond 64 bits (from -2**63 - 1 on), which it
# turns into a float where Python's parser keeps an int; 18 digits stay within 64 bits.
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def _no_constant(name: str):
    raise ValueError(f"{name} in a JSON answer of the lab (canonical JSON holds no non-finite number)")


def _finite(text: str) -> float:
    value = float(text)
    if value - value != 0.0:  # inf - inf is NaN, and NaN compares unequal to everything
        raise ValueError(f"{text[:40]} overflows a float in a JSON answer of the lab")
    return value


def decode(content: bytes) -> Any:
    """`json.loads(content)`, the same values, in about a third of the CPU for a search page; and
    never a NaN or an infinity, so its values can be digested by `ground.fast_canonical`.

    orjson reads every document that Python's parser reads to the same values (the same correctly
    rounded floats, the last of duplicate keys), except that it refuses what canonical JSON never
    holds (NaN, Infinity, numbers that overflow a float, lone surrogates) and reads integers
    beyond 64 bits as floats; the refused ones and any text with 19 digits in a row go to
    `json.loads`, which refuses the non-finite numbers too (a ValueError, like any JSON the lab
    should not have sent; `canonical()` would have refused to digest them), so the result is
    otherwise always Python's (tests/evaluator/test_client_decode.py).
    """
    if _LONG_DIGITS.search(content) is None:
        try:
            return orjson.loads(content)
        except orjson.JSONDecodeError:
            pass
    return json.loads(content, parse_constant=_no_constant, parse_float=_finite)


def vector_base64(vector) -> str:
    """A query vector on the wire: base64 of its little-endian float64 bytes (docs/api.md). Exact
    like the JSON array of the same numbers (a float32 value is a float64 value), and about half
    the bytes and a fraction of the parsing on both sides."""
    return base64.b64encode(np.asarray(vector, dtype=np.float64).astype("<f8").tobytes()).decode("ascii")


class LabClient:
    def __init__(self, access: dict, scope: str | None = None, timeout: float = 60.0):
        self.access = access
        self.scope = scope or access["scope"]
        # One connection pool, shared by the client (every route) and the searches, which go to
        # the transport directly: see `search`.
        self._transport = httpx.HTTPTransport()
        self.http = httpx.Client(base_url=access["base_url"], timeout=timeout, transport=self._transport,
                                 headers={"Authorization": f"Bearer {access['token']}"})
        base = httpx.URL(access["base_url"])
        self._search_headers = [(b"Host", base.netloc), (b"Authorization", f"Bearer {access['token']}".encode("ascii")),
                                (b"Content-Type", b"application/json")]
        self._search_extensions = {"timeout": httpx.Timeout(timeout).as_dict()}
        self._search_urls: dict[str, httpx.URL] = {}

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> LabClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ plumbing

    def request(self, method: str, path: str, body: Any = None, params: dict | None = None) -> httpx.Response:
        """The raw response (no error check); `body` is JSON-encoded unless it is already bytes."""
        content = body if isinstance(body, (bytes, type(None))) else encode(body)
        headers = {"Content-Type": "application/json"} if content is not None else None
        return self.http.request(method, path, content=content, params=params, headers=headers)

    def _call(self, method: str, path: str, body: Any = None, params: dict | None = None) -> Any:
        return self._checked(self.request(method, path, body, params)).json()

    @staticmethod
    def _checked(response: httpx.Response) -> httpx.Response:
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
                code, message = error["code"], error["message"]
            except (ValueError, KeyError, TypeError):
                code, message = "unparsable_error", response.text[:500]
            raise LabError(response.status_code, code, message)
        return response

    def _scoped(self, tail: str) -> str:
        return f"/api/v1/scopes/{self.scope}/{tail}"

    # ------------------------------------------------------------ service routes

    def health(self) -> dict:
        return self._call("GET", "/health")

    def identity(self) -> dict:
        return self._call("GET", "/api/v1/identity")

    def catalog(self) -> dict:
        return self._call("GET", "/api/v1/catalog")

    def mint_credential(self, scope: str, ttl_seconds: int) -> dict:
        return self._call("POST", "/api/v1/credentials", {"scope": scope, "ttl_seconds": ttl_seconds})

    # ------------------------------------------------------------ writes

    def create_memories(self, items: list[dict]) -> dict:
        return self._call("POST", self._scoped("memories"), {"items": items})

    def update_memories(self, items: list[dict]) -> dict:
        return self._call("POST", self._scoped("memories/update"), {"items": items})

    def attach_embeddings(self, items: list[dict]) -> dict:
        return self._call("POST", self._scoped("embeddings"), {"items": items})

    def assert_relations(self, items: list[dict]) -> dict:
        return self._call("POST", self._scoped("relations"), {"items": items})

    # ------------------------------------------------------------ reads

    def read_memories(self, ids: list[str]) -> list[dict]:
        return self._call("POST", self._scoped("memories/read"), {"ids": ids})["records"]

    def list_memories(self, after: str | None = None, limit: int = 100) -> dict:
        return self._call("GET", self._scoped("memories"), params=_page(after, limit))

    def read_embeddings(self, record_ids: list[str], space_id: str) -> list[dict]:
        body = {"record_ids": record_ids, "space_id": space_id}
        return self._call("POST", self._scoped("embeddings/read"), body)["bindings"]

    def read_relations(self, ids: list[str]) -> list[dict]:
        return self._call("POST", self._scoped("relations/read"), {"ids": ids})["relations"]

    def list_relations(self, after: str | None = None, limit: int = 100) -> dict:
        return self._call("GET", self._scoped("relations"), params=_page(after, limit))

    def journal(self, after: int = 0, limit: int = 1000) -> dict:
        return self._call("GET", self._scoped("journal"), params={"after": after, "limit": limit})

    def fence(self) -> dict:
        return self._call("GET", self._scoped("fence"))

    def digest(self) -> dict:
        return self._call("GET", self._scoped("digest"))

    def running_digest(self) -> dict:
        """`{"fence", "running_digest": {"scheme", "digest", "counts"}}`, one state."""
        return self._call("GET", self._scoped("running-digest"))

    # ------------------------------------------------------------ searches

    def search(self, method: str, body: dict) -> tuple[dict, int, int, float]:
        """(page, server retrieval micros, response bytes, client-side HTTP seconds).

        A campaign sends tens of thousands of searches, so each goes straight to the client's
        transport (httpx's own HTTPTransport, the same pool and connection) with a request built
        from prepared parts: the same request line, Host, Authorization, Content-Type and body on
        the wire, without the client layer's per-request URL joining, header merging, cookie jar,
        auth and redirect handling, which none of the lab's answers use. That layer cost about a
        quarter of a millisecond of client CPU per request (docs/serve.md, "Per-request overhead").
        """
        content = encode(body)
        url = self._search_urls.get(method)
        if url is None:
            url = self._search_urls[method] = self.http.base_url.join(self._scoped(f"search/{method}"))
        request = httpx.Request("POST", url, headers=self._search_headers, content=content,
                                extensions=self._search_extensions)
        started = time.perf_counter()
        response = self._transport.handle_request(request)
        try:
            response.read()
        finally:
            response.close()
        seconds = time.perf_counter() - started
        self._checked(response)
        return decode(response.content), int(response.headers["X-Lab-Retrieval-Micros"]), len(response.content), seconds


def _page(after: str | None, limit: int) -> dict:
    return {"limit": limit} if after is None else {"after": after, "limit": limit}
