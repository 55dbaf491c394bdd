"""Field-by-field checks shared by the protocol schema and the artifact validators.

Every failure names the field path (`selection.splits.test.counts.3`, `documents[4].id`) and the
reason, and is raised as the caller's own RefusedInput subclass so a CLI exits 2 with that message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NoReturn

from ground.errors import RefusedInput

HEX64 = re.compile(r"[0-9a-f]{64}")


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class Fields:
    """Type and value checks that raise `error(f"{path}: {reason}")`."""

    def __init__(self, error: type[RefusedInput] = RefusedInput):
        self.error = error

    def fail(self, path: str, reason: str) -> NoReturn:
        raise self.error(f"{path or '<root>'}: {reason}")

    def obj(
        self, value: Any, path: str, required: Iterable[str], optional: Iterable[str] = (),
        extra: bool = False,
    ) -> dict:
        """An object with every required key; unknown keys are refused unless `extra`."""
        if not isinstance(value, dict):
            self.fail(path, f"expected an object, got {_kind(value)}")
        required = list(required)
        for key in required:
            if key not in value:
                self.fail(join(path, key), "missing field")
        if not extra:
            allowed = set(required) | set(optional)
            for key in sorted(value):
                if key not in allowed:
                    self.fail(join(path, key), "unexpected field")
        return value

    def mapping(self, value: Any, path: str, nonempty: bool = True) -> dict:
        """An object used as a map with free keys (names of splits, methods, profiles)."""
        if not isinstance(value, dict):
            self.fail(path, f"expected an object, got {_kind(value)}")
        if nonempty and not value:
            self.fail(path, "must not be empty")
        return value

    def string(self, value: Any, path: str, nonempty: bool = True, allowed: Iterable[str] | None = None) -> str:
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {_kind(value)}")
        if nonempty and not value:
            self.fail(path, "must not be empty")
        if allowed is not None:
            allowed = list(allowed)
            if value not in allowed:
                self.fail(path, f"{value!r} is not one of {', '.join(map(repr, allowed))}")
        return value

    def hex64(self, value: Any, path: str) -> str:
        self.string(value, path)
        if not HEX64.fullmatch(value):
            self.fail(path, f"expected 64 lowercase hex digits, got {value!r}")
        return value

    def integer(self, value: Any, path: str, minimum: int | None = None) -> int:
        # bool is an int in Python but never a count in a protocol
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, f"expected an integer, got {_kind(value)}")
        if minimum is not None and value < minimum:
            self.fail(path, f"must be >= {minimum}, got {value}")
        return value

    def number(
        self, value: Any, path: str, low: float | None = None, high: float | None = None,
    ) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(path, f"expected a number, got {_kind(value)}")
        if value != value or value in (float("inf"), float("-inf")):
            self.fail(path, "must be finite")
        if low is not None and value < low:
            self.fail(path, f"must be >= {low}, got {value}")
        if high is not None and value > high:
            self.fail(path, f"must be <= {high}, got {value}")
        return value

    def array(self, value: Any, path: str, nonempty: bool = False) -> list:
        if not isinstance(value, list):
            self.fail(path, f"expected a list, got {_kind(value)}")
        if nonempty and not value:
            self.fail(path, "must not be empty")
        return value

    def strings(self, value: Any, path: str, nonempty: bool = False, unique: bool = False) -> list[str]:
        self.array(value, path, nonempty=nonempty)
        for i, item in enumerate(value):
            self.string(item, join(path, i))
        if unique:
            self.unique(value, path)
        return value

    def unique(self, values: list, path: str) -> None:
        seen = set()
        for i, item in enumerate(values):
            if item in seen:
                self.fail(join(path, i), f"duplicate {item!r}")
            seen.add(item)

    def ascending(self, values: list, path: str, what: str = "") -> None:
        """Strictly ascending: sorted with no duplicates."""
        for i in range(1, len(values)):
            if not values[i - 1] < values[i]:
                reason = "duplicate" if values[i - 1] == values[i] else "out of order"
                self.fail(join(path, i), f"{reason}{' ' + what if what else ''}: {values[i]!r} after {values[i - 1]!r}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)
