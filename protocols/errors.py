"""The one error type that means: the input was refused, nothing was written (exit code 2)."""


class RefusedInput(Exception):
    """Raised at a boundary when input is invalid; the message names what and why."""
