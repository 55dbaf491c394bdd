"""A retriever served by the user on loopback, asked for each cohort query (docs/external.md).

The contract: `POST http://127.0.0.1:PORT/PATH` with the JSON body
`{"query_id": str, "query": str, "limit": int}` (plus `"query_vector": [float, ...]` and
`"space_id": str` when asked: the campaign's own frozen query vector, float32 values written as
JSON numbers), answered by `200` and `{"hits": [{"document_id": str, "score": number}, ...]}`.

Only 127.0.0.1 is accepted as the host: the lab never sends the cohort's questions off the machine.
Each query is asked once, in sorted id order, with no retry; its wall time (request sent to answer
parsed) is recorded. An answer that is not a 200 with that shape, times out, or names a document
not in the corpus, a document twice or a score that is not a finite number is a failure: recorded
with its reason, and the query judged as an empty ranking (its hits are not used).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from evaluator.judge.runs import Hit, Problems, group
from evaluator.numbers.metrics import latency_summary
from ground.command import Progress
from ground.errors import RefusedInput

LOOPBACK = "127.0.0.1"


class NotLoopback(RefusedInput):
    """A retriever URL whose host is not 127.0.0.1 (or that is not a plain http URL with a port)."""


def check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise NotLoopback(f"retriever {url!r}: only http://{LOOPBACK}:PORT/... is accepted (scheme {parts.scheme!r})")
    if parts.username or parts.password:
        raise NotLoopback(f"retriever {url!r}: no credentials in the URL")
    if parts.hostname != LOOPBACK:
        raise NotLoopback(f"retriever {url!r}: host {parts.hostname!r} refused; only {LOOPBACK} (loopback) is "
                          f"accepted, so the cohort's questions never leave this machine")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        raise NotLoopback(f"retriever {url!r}: give the port (http://{LOOPBACK}:PORT/...)")
    return url


class RetrieverRefused(RefusedInput):
    """The retriever cannot be reached at all: refused before anything is written (exit 2)."""


@dataclass
class Asked:
    """What the retriever answered: accepted (document, score) pairs by query, failures, timings."""

    hits: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # query id -> reason
    latency_ms: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict:
        reasons: dict[str, int] = {}
        for reason in self.failures.values():
            kind = reason.split(":", 1)[0]
            reasons[kind] = reasons.get(kind, 0) + 1
        times = [self.latency_ms[q] for q in sorted(self.latency_ms)]
        return {"asked": len(self.latency_ms), "failures": len(self.failures),
                "failures_by_kind": dict(sorted(reasons.items())),
                "failed_queries": dict(sorted(self.failures.items())),
                "latency_ms": latency_summary(times) if times else None}


def hits_of(answer: object) -> list | None:
    if isinstance(answer, dict) and isinstance(answer.get("hits"), list):
        return answer["hits"]
    return None


def ask(url: str, queries: Sequence[Mapping], documents: Mapping | set, limit: int, *, timeout: float,
        vectors: Mapping[str, list[float]] | None = None, space_id: str | None = None) -> Asked:
    """Ask the retriever for every query (`{id, text}`), in the order given."""
    import httpx

    check_url(url)
    asked = Asked()
    progress = Progress("retriever", len(queries), "queries")
    with httpx.Client(timeout=timeout, trust_env=False) as client:  # trust_env off: never via a proxy
        for query in queries:
            body = {"query_id": query["id"], "query": query["text"], "limit": limit}
            if vectors is not None:
                body.update(query_vector=vectors[query["id"]], space_id=space_id)
            started = time.perf_counter()
            try:
                response = client.post(url, json=body)
                answer = response.json() if response.status_code == 200 else None
                reason = None if response.status_code == 200 else f"http {response.status_code}"
            except httpx.TimeoutException:
                answer, reason = None, f"timeout: no answer within {timeout:g} s"
            except httpx.ConnectError as exc:
                if not asked.latency_ms:  # the first request: nothing listens there, so nothing is judged
                    raise RetrieverRefused(f"--retriever {url}: nothing answers ({exc}); start the retriever "
                                           "or check the port (nothing written)") from None
                answer, reason = None, f"connection: {type(exc).__name__}: {exc}"
            except httpx.HTTPError as exc:
                answer, reason = None, f"connection: {type(exc).__name__}: {exc}"
            except ValueError:
                answer, reason = None, "malformed: the answer is not JSON"
            asked.latency_ms[query["id"]] = (time.perf_counter() - started) * 1000.0
            progress.advance()
            if reason is None:
                reason = accept(asked, query["id"], hits_of(answer), documents)
            if reason is not None:
                asked.failures[query["id"]] = reason
    return asked


def accept(asked: Asked, query_id: str, hits: list | None, documents: Mapping | set) -> str | None:
    """Record a query's hits, or return why they cannot be used."""
    if hits is None:
        return 'malformed: the answer is not {"hits": [...]}'
    parsed = []
    for i, hit in enumerate(hits):
        if not isinstance(hit, dict) or not isinstance(hit.get("document_id"), str) or "score" not in hit:
            return f"malformed: hits[{i}] is not an object with a string document_id and a score"
        parsed.append(Hit(query_id, hit["document_id"], hit["score"], 0))
    grouped, problems = group(parsed, {query_id}, documents, Problems())
    if problems:
        return f"invalid: {problems.message()}"
    asked.hits[query_id] = grouped.get(query_id, [])
    return None
