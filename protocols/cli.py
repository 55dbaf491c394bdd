"""What every command-line tool shares: refused input exits 2, progress lines with rate and ETA."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from protocols.errors import RefusedInput


def run(main: Callable[[list[str] | None], int | None], argv: list[str] | None = None) -> int:
    """Call a CLI main; a RefusedInput becomes one `error:` line on stderr and exit code 2."""
    try:
        code = main(argv)
    except RefusedInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return int(code or 0)


class Progress:
    """Prints `label: done/total (pct) rate/s ETA` at most every `interval` seconds, to stderr."""

    def __init__(self, label: str, total: int, unit: str = "items", interval: float = 2.0):
        self.label, self.total, self.unit, self.interval = label, total, unit, interval
        self.start = time.monotonic()
        self.last = 0.0
        self.done = 0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= self.interval or self.done >= self.total:
            self.last = now
            print(self.line(now), file=sys.stderr, flush=True)

    def line(self, now: float | None = None) -> str:
        elapsed = max((now or time.monotonic()) - self.start, 1e-9)
        rate = self.done / elapsed
        remaining = (self.total - self.done) / rate if rate > 0 else float("inf")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        eta = f"{remaining:.0f}s" if remaining != float("inf") else "?"
        return (
            f"{self.label}: {self.done}/{self.total} {self.unit} ({pct:.0f}%) "
            f"{rate:.1f} {self.unit}/s ETA {eta}"
        )
