"""`lab serve DBDIR ACCESSFILE PORT [--host 127.0.0.1] [--scope lab] [--reopen]`.

Order matters: refuse bad arguments, bind the socket (a port in use leaves nothing behind), open (or
create) the store, mint the token, write the access file, and only then serve, so a client that
sees the access file can connect.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import time

from ground.errors import RefusedInput
from ground.files import refuse_existing, save

# The server itself (uvicorn, the app, the store) is imported by `serve`, not here: `lab` reads
# DESCRIPTION and configure for every --help (lab/cli.py builds the whole parser).

LOOPBACK = "127.0.0.1"


DESCRIPTION = """Serve the loopback lab: RocksDB store, in-memory indexes, retrieval routes (docs/serve.md).

Refuses an existing DBDIR (unless --reopen) or ACCESSFILE, binds 127.0.0.1 only, writes the access
file (mode 0600: base URL, token, scope, expiry, pid) and serves until SIGTERM or SIGINT."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dbdir", help="RocksDB directory (must not exist, unless --reopen)")
    parser.add_argument("access_file", help="where to write the access file (must not exist)")
    parser.add_argument("port", type=int, help="TCP port on 127.0.0.1; 0 picks a free one")
    parser.add_argument("--host", default=LOOPBACK, help="only 127.0.0.1 is accepted")
    parser.add_argument("--scope", default="lab", help="scope of the access file's token (default: lab)")
    parser.add_argument("--reopen", action="store_true",
                        help="restart on an existing DBDIR this lab created; earlier tokens are revoked")


def serve(args: argparse.Namespace) -> int:
    """The `lab serve` entry: arguments already parsed by the dispatcher."""
    return _serve(args)


def _bind(port: int) -> socket.socket:
    if not 0 <= port <= 65535:
        raise RefusedInput(f"PORT must be in 0..65535, got {port}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # asyncio also sets TCP_NODELAY on every accepted connection; without it a response written in
    # two segments waits for the client's delayed ACK (~40 ms on Linux loopback).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as exc:
        sock.close()
        raise RefusedInput(f"cannot bind {LOOPBACK}:{port}: {exc.strerror}") from None
    sock.listen(1024)
    return sock


def _serve(args: argparse.Namespace) -> int:
    from server import validation
    from server.store.credentials import iso_utc
    from server.store.store import Store, StoreOpenError

    if args.host != LOOPBACK:
        raise RefusedInput(f"the lab binds {LOOPBACK} only; refusing --host {args.host}")
    if not validation.SCOPE_RE.fullmatch(args.scope):
        raise RefusedInput(f"--scope must match [a-z0-9][a-z0-9_-]{{0,63}}, got {args.scope!r}")
    refuse_existing(args.access_file)
    if not args.reopen:
        refuse_existing(args.dbdir)
    # The port before the store: a port in use must be refused with no DBDIR left behind.
    sock = _bind(args.port)
    try:
        now = time.time()
        try:
            if args.reopen:
                store = Store.reopen(args.dbdir)
            else:
                store = Store.create(args.dbdir, "lab-" + secrets.token_hex(16), iso_utc(now))
        except StoreOpenError as exc:
            raise RefusedInput(str(exc)) from None
        try:
            return _run(args, store, sock, now)
        finally:
            store.close()
    finally:
        sock.close()


def _run(args: argparse.Namespace, store, sock: socket.socket, now: float) -> int:
    import uvicorn

    from server.http.app import Lab, create_app
    from server.http.one_write import OneWriteH11Protocol
    from server.retrieval.indexes import Indexes
    from server.store.credentials import DEFAULT_TTL_SECONDS, Credentials

    # uvicorn swaps in its own handlers while serving and re-raises the signal afterwards into
    # whatever was installed before; these handlers turn that (and a signal during start-up) into
    # a clean stop with exit code 0 and the store closed.
    stopping: dict = {"requested": False, "server": None}

    def stop(signum: int, frame: object) -> None:
        stopping["requested"] = True
        if stopping["server"] is not None:
            stopping["server"].should_exit = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    credentials = Credentials(store)
    if args.reopen:
        credentials.revoke_all()
    lab = Lab(store=store, credentials=credentials, indexes=Indexes())
    lab.feed_all()
    port = sock.getsockname()[1]
    base_url = f"http://{LOOPBACK}:{port}"
    issued = credentials.mint(args.scope, DEFAULT_TTL_SECONDS, now, may_mint=True)
    access = {"base_url": base_url, "token": issued["token"], "scope": args.scope,
              "issued_at": issued["issued_at"], "expires_at": issued["expires_at"],
              "lab_id": store.marker["lab_id"], "pid": os.getpid()}
    save(args.access_file, access)  # temp file from mkstemp: created 0600, then renamed
    os.chmod(args.access_file, 0o600)

    config = uvicorn.Config(create_app(lab), log_level="warning", access_log=False, lifespan="off",
                            # h11, not httptools: httptools cost the server less CPU per search (1.75 against
                            # 2.30 ms in an A/B at load 14), but it answers bytes that follow a request's
                            # declared body with uvicorn's plain-text 400 before the app's JSON answer, which
                            # breaks "every error is JSON" (tests/server/test_server_refusals.py, lying
                            # Content-Length). uvloop made no difference. uvicorn's h11 protocol, with each
                            # response in one write (server/http/one_write.py).
                            http=OneWriteH11Protocol, loop="asyncio", server_header=False, date_header=False,
                            timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    stopping["server"] = server
    server.should_exit = stopping["requested"]
    print(f"retrieval lab pid {os.getpid()} serving {base_url} (scope {args.scope}, access file "
          f"{args.access_file})", flush=True)
    server.run(sockets=[sock])
    print(f"retrieval lab pid {os.getpid()} stopped", flush=True)
    return 0
