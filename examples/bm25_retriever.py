"""An example external retriever for `lab judge --retriever` (docs/external.md): BM25 (bm25s) over
the corpus that `lab export --with-corpus` writes, served on 127.0.0.1 with the lab's tiny contract.

    python examples/bm25_retriever.py --corpus RUN/public.text/corpus.jsonl --port 8765
    lab judge --run-dir RUN --retriever http://127.0.0.1:8765/search --name bm25s --output-dir OUT

POST /search with {"query_id", "query", "limit"} (a "query_vector" is accepted and ignored: BM25
reads text only) answers {"hits": [{"document_id", "score"}, ...]}, best first, documents with a
positive score only. GET /health answers {"status": "ok", "documents": N} once the index is built.
It listens on 127.0.0.1 only; with --port 0 it picks a free port. The first line it prints is
`listening on http://127.0.0.1:PORT/search`, when it is ready.

It needs bm25s (pinned in the project's test extras) and nothing of the lab: it is the kind of
program a user brings, outside `evaluator/` and `server/`.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def load_corpus(path: Path) -> tuple[list[str], list[str]]:
    ids, texts = [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                doc = json.loads(line)
                ids.append(doc["id"])
                texts.append(doc["text"])
    return ids, texts


class Index:
    def __init__(self, ids: list[str], texts: list[str]):
        import bm25s

        self.bm25s = bm25s
        self.ids = ids
        self.model = bm25s.BM25()
        self.model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def search(self, query: str, limit: int) -> list[dict]:
        tokens = self.bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)
        if not tokens[0]:
            return []
        found, scores = self.model.retrieve(tokens, k=min(limit, len(self.ids)), show_progress=False)
        return [{"document_id": self.ids[int(i)], "score": float(s)} for i, s in zip(found[0], scores[0]) if s > 0]


def handler(index: Index, path: str):
    class Handler(BaseHTTPRequestHandler):
        def answer(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802 (the stdlib's name)
            if self.path == "/health":
                self.answer(200, {"status": "ok", "documents": len(index.ids)})
            else:
                self.answer(404, {"error": "not found"})

        def do_POST(self):  # noqa: N802
            if self.path != path:
                self.answer(404, {"error": "not found"})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                query, limit = body["query"], int(body["limit"])
                if not isinstance(query, str) or not 1 <= limit <= 1000:
                    raise ValueError("query must be a string and limit 1..1000")
            except (KeyError, ValueError, TypeError) as exc:
                self.answer(400, {"error": f"bad request: {exc}"})
                return
            self.answer(200, {"hits": index.search(query, limit)})

        def log_message(self, format, *args):  # quiet: one line per request would flood the test log
            pass

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="corpus.jsonl written by lab export --with-corpus")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--path", default="/search", help="the route answering queries (default /search)")
    args = parser.parse_args(argv)
    index = Index(*load_corpus(args.corpus))
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(index, args.path))
    print(f"listening on http://127.0.0.1:{server.server_address[1]}{args.path}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
