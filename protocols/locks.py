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
   copy that kept its name). A lock travels with its file: a copy moved elsewhere without it is an
   unfrozen protocol, reported as such by `lab protocol show PATH`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ground.canonical import digest
from ground.errors import RefusedInput
from ground.files import load_json, refuse_existing, save
from protocols.committed import FROZEN_DIR

LOCK_FORMAT = "lab-protocol-lock-v1"
LOCK_SUFFIX = ".lock.json"
DECLARED_LOCKS = FROZEN_DIR / "declared.lock.json"  # every declared protocol's name -> digest


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
    found = []
    for candidate in sorted(Path(path).resolve().parent.glob(f"*{LOCK_SUFFIX}")):
        lock = _read_lock(candidate)
        if candidate.resolve() != own and lock is not None and lock.get("protocol_version") == name:
            found.append((candidate, lock))
    return found


def status(path: str | Path, protocol: Mapping) -> tuple[str, list[str]]:
    """(one line saying how the file stands, the refusals `check_frozen` would raise)."""
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
    for other, sibling in sibling_locks(path, name):
        if sibling["digest"] != content:
            problems.append(f"it carries the name {name} that {other} froze, with other content (changed: "
                            f"{', '.join(changed_fields(sibling, protocol))}); give it its own protocol_version")
    if declared == content:
        line = f"the lab's own protocol {name}, unchanged"
    elif lock is not None:
        line = f"frozen by {lock_path(path)}" + ("" if lock["digest"] == content else " (and changed since)")
    else:
        line = f"not frozen: `lab protocol freeze {path}` writes its lock"
    return line, problems


def check_frozen(path: str | Path, protocol: Mapping) -> None:
    _, problems = status(path, protocol)
    if problems:
        raise RefusedInput(f"protocol {path}: " + "; ".join(problems))


def freeze(path: str | Path, protocol: Mapping) -> Path:
    """Write the file's lock; refused when the lock exists or the file's name is taken by other content."""
    target = lock_path(path)
    refuse_existing(target)
    check_frozen(path, protocol)
    save(target, make_lock(protocol))
    return target
