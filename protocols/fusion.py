"""The fusion rules, declared once: every name a ranking profile's `fusion` may say.

A profile (or a profile's `base`) that fuses ranked channel lists names its rule in a string field
`fusion`; the value is read, not decorative. The schema refuses a name this table does not declare
(protocols/schema.py), and each side binds the rules it implements in its own table, checked at
import against this one the way `check_bindings` checks routes: the server its fusers
(server/retrieval/fusion.py, server/families/rescue/rescue_method.py), the evaluator its independent recomputations
(evaluator/verification/recompute.py, evaluator/verification/verifiers/lists/rescue.py). So a profile saying
"combsum" is refused when the protocol loads, and a rule can be neither served unverified nor
verified unserved. (A `fusion` that is an object, as in the rescue and walk families, holds a
family's own parameters for fusing its lane back in; it names no rule.)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ground.fields import Fields, join

# name -> what it computes (docs/retrieval.md states the arithmetic down to the operation order)
FUSION_RULES: dict[str, str] = {
    "weighted_reciprocal_rank": "per record, the sum over the channels that ranked it of weight / (k + rank), "
                                "ranks 1-based, channels cut at their depth, in exact rationals",
}


def named_rules(profile: object, path: str) -> Iterator[tuple[str, object]]:
    """(field path, value) of every `fusion` field of a profile, at any depth, that names a rule
    (any value but an object: a mistyped one is refused as a name, not skipped)."""
    if isinstance(profile, Mapping):
        for key, value in profile.items():
            where = join(path, key)
            if key == "fusion" and not isinstance(value, Mapping):
                yield where, value
            else:
                yield from named_rules(value, where)
    elif isinstance(profile, list):
        for i, value in enumerate(profile):
            yield from named_rules(value, join(path, i))


def check_profile_rules(f: Fields, profile: Mapping, path: str, profiles: Mapping) -> None:
    """Every rule a profile names is declared; a `base` that fuses like another profile (the walk's
    `base.profile`) names one of the protocol's profiles that names a rule, since both sides read
    the rule from there."""
    for where, value in named_rules(profile, path):
        f.string(value, where, allowed=FUSION_RULES)
    base = profile.get("base")
    if isinstance(base, Mapping) and "profile" in base and "fusion" not in base:
        where = join(join(path, "base"), "profile")
        name = f.string(base["profile"], where, allowed=sorted(profiles))
        if not isinstance(profiles[name], Mapping) or profiles[name].get("fusion") not in FUSION_RULES:
            f.fail(where, f"{name!r} names no fusion rule for the base to fuse by")


def check_fusion_bindings(side: str, bound: Mapping[str, object]) -> None:
    """Refuse a side's table that does not implement every declared rule, or implements one this
    table does not declare: raised at import, before anything is served or verified."""
    missing = [name for name in FUSION_RULES if name not in bound]
    unknown = [name for name in bound if name not in FUSION_RULES]
    faults = ([f"implements no fusion rule {missing}"] if missing else []) + \
        ([f"implements {unknown}, which protocols/fusion.py does not declare"] if unknown else [])
    if faults:
        raise RuntimeError(f"{side} {' and '.join(faults)}: every declared fusion rule needs exactly one implementation")
