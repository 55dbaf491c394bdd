"""The campaign journal: every recorded job, appended as it is recorded, beside the report.

`<report>.journal` is JSON Lines: a header binding it to the report (format, plan digest, start
time), then one line per job in plan order, `{"order", "job", "row"}` (`row` is the row the job
added, the first repetition of a (query, method), else null). Lines are appended as jobs are
recorded (each line handed to the operating system at once, so the evaluator's own death loses
nothing) and fsynced in batches (every JOURNAL_SYNC_SECONDS and at the end, so a machine crash
loses at most the last batch, which `lab evaluate --resume` fetches and checks again). Saving
progress costs one append per job instead of rewriting a report that grows to hundreds of MB. A torn last
line (a crash inside a write) is not a job: reading stops at the first line that is not a whole,
well-formed entry of the next order.

`<report>.lock` holds an exclusive lock while an evaluate (or its resume) writes the report, so a
resume cannot start beside a campaign that is still running; the file is removed on the way out.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from ground.errors import RefusedInput
from ground.fast_canonical import compact

JOURNAL_FORMAT = "lab-evaluate-journal-v1"
JOURNAL_SYNC_SECONDS = 1.0


class JournalError(RefusedInput):
    """A journal that does not belong to its report, or a report that is in use."""


def journal_path(report: Path) -> Path:
    return Path(str(report) + ".journal")


class ReportLock:
    """An exclusive, non-blocking lock on `<report>.lock`, held while the report may change."""

    def __init__(self, report: Path):
        self.path = Path(str(report) + ".lock")
        self.fd: int | None = None

    def __enter__(self) -> "ReportLock":
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # the holder before us removes the file on its way out: a lock on a removed file is none
            if os.fstat(self.fd).st_ino != os.stat(self.path, follow_symlinks=False).st_ino:
                raise BlockingIOError
        except (BlockingIOError, FileNotFoundError):
            os.close(self.fd)
            self.fd = None
            raise JournalError(f"report {str(self.path)[:-len('.lock')]} is being written by another evaluate "
                               f"(its lock {self.path} is held)") from None
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.unlink(self.path)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _line(value) -> bytes:
    # a job and its row hold no NaN or infinity (its page was read by the client's parser, which
    # refuses them), so orjson writes these bytes where it is proved to (ground/fast_canonical.py)
    return compact(value) + b"\n"


class Journal:
    """Appends jobs to a journal: `create` a new one, or `reopen` one read by `read_journal`."""

    def __init__(self, path: Path, handle, next_order: int):
        self.path, self.handle, self.next_order = path, handle, next_order
        self.last_sync = time.monotonic()

    @classmethod
    def create(cls, path: Path, header: dict) -> "Journal":
        handle = open(path, "xb")  # never overwrites: evaluate refused an existing report first
        handle.write(_line({"format": JOURNAL_FORMAT, **header}))
        journal = cls(path, handle, 0)
        journal.sync()
        return journal

    @classmethod
    def reopen(cls, path: Path, valid_bytes: int, next_order: int) -> "Journal":
        handle = open(path, "r+b")
        handle.truncate(valid_bytes)  # drop a torn last line before appending after it
        handle.seek(valid_bytes)
        return cls(path, handle, next_order)

    def append(self, job: dict, row: dict | None) -> None:
        if job["order"] != self.next_order:
            raise ValueError(f"journal: job {job['order']} appended where job {self.next_order} is next")
        self.handle.write(_line({"order": job["order"], "job": job, "row": row}))
        self.handle.flush()
        self.next_order += 1
        if time.monotonic() - self.last_sync >= JOURNAL_SYNC_SECONDS:
            self.sync()

    def sync(self) -> None:
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.last_sync = time.monotonic()

    def close(self) -> None:
        if not self.handle.closed:
            self.sync()
            self.handle.close()


def read_journal(path: Path, header: dict) -> tuple[list[dict], list[dict | None], int]:
    """(jobs, rows or None per job, bytes of whole entries) of a journal whose header is `header`."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise JournalError(f"no journal {path} beside the report: nothing to resume from") from None
    jobs: list[dict] = []
    rows: list[dict | None] = []
    end = data.find(b"\n")
    if end < 0:
        raise JournalError(f"journal {path}: no complete header line")
    try:
        head = json.loads(data[:end])
    except ValueError:
        raise JournalError(f"journal {path}: the header is not JSON") from None
    if head != {"format": JOURNAL_FORMAT, **header}:
        raise JournalError(f"journal {path} belongs to another campaign (its header {head} is not this report's)")
    valid = end + 1
    while True:
        end = data.find(b"\n", valid)
        if end < 0:
            break  # a torn last line: not a job
        try:
            entry = json.loads(data[valid:end])
        except ValueError:
            break
        if not isinstance(entry, dict) or entry.get("order") != len(jobs) or not isinstance(entry.get("job"), dict) \
                or entry["job"].get("order") != len(jobs):
            break
        jobs.append(entry["job"])
        rows.append(entry.get("row"))
        valid = end + 1
    return jobs, rows, valid
