"""A protocol frozen by its lock: the digest of its content, kept beside it, checked before a run writes.

`lab protocol freeze FILE` (and `lab protocol new`) writes `FILE.lock.json` beside `FILE.json`:
the protocol's name, the digest of its canonical content and the digest of each field two levels
deep (so a refusal names the field that changed, e.g. `evaluation.primary_contrast`). A lock is
never rewritten: a changed protocol is a new version with its own name.

`check_frozen` is what `lab run` asks before it writes anything. It refuses:
1. a protocol that carries the name of one of the lab's own (declared in protocols/registry.py,
   their digests in `protocols/frozen/declared.lock.json`) with other content;
2. a protocol whose lock beside it no longer matches its content;
3. a protocol that carries the name a lock in the same folder froze, with other content (an edited
   copy that kept its name);
4. for `lab run`, a protocol that carries the name an earlier run in the same run root ran frozen
   (the lock `lab run` keeps beside the run's protocol.json), with other content: a lock moved away
   does not unfreeze a name the runs beside it already bind.
A file without a lock whose content some lock froze under its name is frozen; any other file
without a lock is not, and `lab run`, the report and the public page say so beside its digest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ground.canonical import digest
from ground.command import typed
from ground.errors import RefusedInput
from ground.files import load_json, refuse_existing, save
from ground.run_dir import FILES
from protocols.committed import FROZEN_DIR

LOCK_FORMAT = "lab-protocol-lock-v1"
LOCK_SUFFIX = ".lock.json"
DECLARED_LOCKS = FROZEN_DIR / "declared.lock.json"  # every declared protocol's name -> digest
RUN_PROTOCOL = FILES["protocol"]  # a run's copy of its protocol; `lab run` keeps the lock of a frozen one beside it


def lock_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name.removesuffix(".json") + LOCK_SUFFIX)


def field_digests(protocol: Mapping) -> dict[str, str]:
    """The digest of every field, and of every field inside an object field: `name` or `name.inner`."""
    out = {}
    for key, value in protocol.items():
        out[key] = digest(value)
        if isinstance(value, Mapping):
            for inner, part in value.items():
                out[f"{key}.{inner}"] = digest(part)
    return out


def make_lock(protocol: Mapping) -> dict:
    return {"format": LOCK_FORMAT, "protocol_version": protocol["protocol_version"], "digest": digest(protocol),
            "fields": field_digests(protocol)}


def changed_fields(lock: Mapping, protocol: Mapping) -> list[str]:
    """The fields whose digest differs from the lock's, innermost named where the lock has it."""
    now = field_digests(protocol)
    then = lock.get("fields") or {}
    changed = sorted(k for k in set(now) | set(then) if now.get(k) != then.get(k))
    # a changed `a.b` already says `a` changed: name the inner one only
    return [k for k in changed if "." in k or not any(c.startswith(f"{k}.") for c in changed)]


def declared_digests() -> dict[str, str]:
    return load_json(DECLARED_LOCKS, "declared protocols' locks")


def _read_lock(path: Path) -> dict | None:
    try:
        value = load_json(path, "protocol lock")
    except RefusedInput:
        return None
    return value if isinstance(value, dict) and value.get("format") == LOCK_FORMAT else None


def sibling_locks(path: Path, name: str) -> list[tuple[Path, dict]]:
    """The locks in the file's folder that froze `name`, other than the file's own."""
    own = lock_path(path).resolve()
    found: list[tuple[Path, dict]] = []
    for candidate in sorted(Path(path).resolve().parent.glob(f"*{LOCK_SUFFIX}")):
        lock = _read_lock(candidate)
        if candidate.resolve() != own and lock is not None and lock.get("protocol_version") == name:
            found.append((candidate, lock))
    return found


@dataclass(frozen=True)
class Standing:
    """How a protocol file stands: one line to print, whether its content is frozen, and the
    refusals `check_frozen` raises."""

    line: str
    frozen: bool
    problems: tuple[str, ...]
    by: str = ""  # what froze it, in words a report prints ("" when not frozen)
    hint: str = ""  # the command that freezes it, where that is the way on

    def told(self) -> str:
        """The line with its hint: for a file nothing refuses (a refused one cannot be frozen)."""
        return f"{self.line}; {self.hint}" if self.hint else self.line

    def record(self, protocol: Mapping) -> dict:
        """What a report keeps of it, beside the protocol's digest (no path: reports travel)."""
        return {"digest": digest(protocol), "frozen": self.frozen, "by": self.by}


def earlier_runs(run_root: Path, name: str) -> list[tuple[Path, dict]]:
    """The runs under `run_root` whose protocol was frozen under `name`: (run directory, the lock
    `lab run` kept beside its copy of the protocol)."""
    found: list[tuple[Path, dict]] = []
    if not Path(run_root).is_dir():
        return found
    for folder in sorted(p for p in Path(run_root).iterdir() if p.is_dir()):
        kept = lock_path(folder / RUN_PROTOCOL)
        lock = _read_lock(kept) if kept.is_file() else None
        if lock is not None and lock.get("protocol_version") == name:
            found.append((folder, lock))
    return found


def status(path: str | Path, protocol: Mapping, run_root: Path | None = None) -> Standing:
    """How the file stands against the lab's own protocols, its lock, the locks beside it and (with
    `run_root`) the protocols earlier runs there ran frozen. Frozen: the lab's own protocol
    unchanged, or content some lock froze under this name; a name frozen with other content is refused."""
    path = Path(path)
    name, content = protocol["protocol_version"], digest(protocol)
    problems = []
    declared = declared_digests().get(name)
    if declared is not None and declared != content:
        problems.append(f"it carries the name of the lab's protocol {name} (protocols/frozen/datasets/{name}.json) with other "
                        f"content; a protocol you changed is a new version: give it its own protocol_version")
    lock = _read_lock(lock_path(path)) if lock_path(path).is_file() else None
    if lock is not None and lock["digest"] != content:
        problems.append(f"it no longer matches its lock {lock_path(path)} (changed: "
                        f"{', '.join(changed_fields(lock, protocol))}); a frozen protocol is never edited: "
                        f"copy it under a new protocol_version and freeze that")
    others = [(str(other), sibling) for other, sibling in sibling_locks(path, name)]
    if run_root is not None:
        others += [(f"the lock of the earlier run {folder}", kept) for folder, kept in earlier_runs(run_root, name)]
    differing = [f"{where} (changed: {', '.join(changed_fields(other, protocol))})"
                 for where, other in others if other["digest"] != content]
    if differing:  # one reason, however many locks froze the name
        problems.append(f"it carries the name {name} that {'another lock' if len(differing) == 1 else 'other locks'} "
                        f"froze with other content: {'; '.join(differing)}; a frozen name is never reused: give it "
                        f"its own protocol_version")
    same = [where for where, other in others if other["digest"] == content]
    if declared == content:
        return Standing(f"frozen: the lab's own protocol {name}, unchanged", True, tuple(problems),
                        "the lab's own declared protocol, unchanged")
    if lock is not None:
        return (Standing(f"frozen: by its lock {lock_path(path)}", True, tuple(problems), "its lock")
                if lock["digest"] == content
                else Standing(f"NOT frozen: changed since its lock {lock_path(path)}", False, tuple(problems)))
    if same:
        return Standing(f"frozen: no lock beside it, but its content is what {same[0]} froze", True, tuple(problems),
                        "a lock of its name and content")
    return Standing("NOT frozen: no lock beside it and no lock froze this content", False, tuple(problems),
                    hint=f"`{typed(f'protocol freeze {path}')}` writes one")


def check_frozen(path: str | Path, protocol: Mapping, run_root: Path | None = None) -> Standing:
    standing = status(path, protocol, run_root)
    if standing.problems:
        raise RefusedInput(f"protocol {path}: " + (standing.problems[0] if len(standing.problems) == 1 else
                                                   "".join(f"\n- {p}" for p in standing.problems)))
    return standing


def freeze(path: str | Path, protocol: Mapping, run_root: Path | None = None) -> Path:
    """Write the file's lock; refused when the lock exists or the file's name is taken by other
    content (beside it, or in a run under `run_root`)."""
    target = lock_path(path)
    refuse_existing(target)
    check_frozen(path, protocol, run_root)
    save(target, make_lock(protocol))
    return target
