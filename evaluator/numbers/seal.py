"""The report's seal: the digest of every field evaluate wrote, one level deep.

Warm-up and job timings, resource samples, start and finish times are measurements: nothing in the
frozen inputs reproduces them, so the audit cannot derive them again. Instead evaluate seals every
top-level field of the report when it saves a finished (complete or failed) report: a scalar by
its digest, a list by the digest of each entry, an object by the digest of each member. The audit
recomputes the seal and names each field whose value is not the one sealed (`warmup[3]`,
`jobs[17]`, `resources.series`), on top of everything it re-derives.

The seal binds the report to itself; it is not a signature. An edit that rewrites a field and its
seal entry together is caught by the re-derivations where a field can be derived, and otherwise
only by the digest of the whole report published with it (`private_report_digest` in the public
report), which the audit checks when given the public report.
"""

from __future__ import annotations

from collections.abc import Mapping

from ground.fast_canonical import digest_finite as digest  # a report holds no NaN: see `seal_of`

SEAL_FORMAT = "graph_evaluation_seal_v1"


def seal_of(report: Mapping, known: Mapping[str, list[str]] | None = None) -> dict:
    """The seal of every top-level field of a report but the seal itself (`known`: entry digests
    of list fields the caller has already computed, say of the rows).

    Each digest is `ground.canonical.digest` of the value, computed with orjson where its bytes
    are proved equal (`digest_finite`): a report read from disk holds no NaN (its parser refuses
    them) and evaluate saves a report refusing NaN right after sealing it, so no sealed report can
    hold one."""
    known = known or {}
    return {"format": SEAL_FORMAT,
            "fields": {key: _seal(value, known.get(key)) for key, value in sorted(report.items()) if key != "seal"}}


def _seal(value, entries: list[str] | None = None) -> dict:
    if isinstance(value, list):
        return {"entries": entries if entries is not None else [digest(v) for v in value]}
    if isinstance(value, dict):
        return {"members": {k: digest(v) for k, v in value.items()}}
    return {"value": digest(value)}


def _label(entry) -> str:
    """What a list entry is about, so `jobs[17]` also says which query, method and repetition."""
    if not isinstance(entry, Mapping):
        return ""
    parts = [f"{name} {entry[name]}" for name in ("query_id", "method", "repetition") if name in entry]
    return f" ({', '.join(str(p) for p in parts)})" if parts else ""


def seal_failures(report: Mapping, known: Mapping[str, list[str]] | None = None) -> list[str]:
    """Every field whose value is not the one evaluate sealed, by name (and entry or member)."""
    stored = report.get("seal")
    if not isinstance(stored, Mapping) or stored.get("format") != SEAL_FORMAT or not isinstance(stored.get("fields"), Mapping):
        return [f"seal: missing or not a {SEAL_FORMAT} (evaluate seals every finished report)"]
    sealed, current = stored["fields"], seal_of(report, known)["fields"]
    out = []
    for key in sorted(set(sealed) | set(current)):
        if key not in current:
            out.append(f"{key}: in seal.fields but missing from the report")
        elif key not in sealed:
            out.append(f"{key}: not in seal.fields (added after evaluate sealed the report)")
        else:
            out.extend(_differences(key, sealed[key], current[key], report[key]))
    return out


def _differences(key: str, sealed, current: dict, value) -> list[str]:
    where = f"not the value sealed in seal.fields.{key}"
    if not isinstance(sealed, Mapping) or set(sealed) != set(current):
        return [f"{key}: sealed as {sorted(sealed) if isinstance(sealed, Mapping) else sealed!r}, now {sorted(current)} "
                f"({where})"]
    if "value" in current:
        return [] if sealed["value"] == current["value"] else [f"{key}: {where}"]
    if "entries" in current:
        old, new = sealed["entries"], current["entries"]
        if not isinstance(old, list) or len(old) != len(new):
            return [f"{key}: {len(new)} entries, {len(old) if isinstance(old, list) else '?'} sealed ({where})"]
        return [f"{key}[{i}]{_label(value[i])}: {where}" for i, (a, b) in enumerate(zip(old, new)) if a != b]
    old, new = sealed["members"], current["members"]
    if not isinstance(old, Mapping):
        return [f"{key}: {where}"]
    out = []
    for member in sorted(set(old) | set(new), key=str):
        if member not in new:
            out.append(f"{key}.{member}: sealed but missing ({where})")
        elif member not in old:
            out.append(f"{key}.{member}: not sealed ({where})")
        elif old[member] != new[member]:
            out.append(f"{key}.{member}: {where}")
    return out
