"""uvicorn's h11 protocol with each response handed to the socket in one write.

uvicorn writes a response's head when the app sends `http.response.start` and its body when the
app sends `http.response.body`: two `send` calls, two TCP segments (Nagle is off, main.py), and a
client that reads the head alone wakes up twice. Here the connection's transport is wrapped so
that writes made in one turn of the event loop leave together at the end of that turn: Starlette
sends start and body one after the other without yielding, so every answer goes out as one
segment. Nothing else changes (same bytes, same order, same h11 parser and error answers, so the
JSON-error guarantees of tests/server/test_server_refusals.py hold); a close, or a write on a transport
that is closing, flushes first. Measured: docs/serve.md, "Per-request overhead".
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


class _WritesPerTurn:
    """A transport proxy: `write` collects, one real write per event-loop turn."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def writelines(self, lines) -> None:
        for data in lines:
            self.write(data)

    def _flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def __getattr__(self, name: str) -> Any:  # everything else is the real transport's
        return getattr(self._transport, name)


class OneWriteH11Protocol(H11Protocol):
    """`uvicorn.Config(http=OneWriteH11Protocol)`: h11, each response in one write."""

    # the wrapper stands in for the transport (it forwards what h11's protocol calls): a duck, not a subclass
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_WritesPerTurn(transport, self.loop))  # type: ignore[arg-type]
