"""The two errors a command ends on: refused input (exit 2, nothing written) and a failed check
(exit 1: the command ran, and what it checked does not hold)."""


class RefusedInput(Exception):
    """Raised at a boundary when input is invalid; the message names what and why."""


class CheckFailed(Exception):
    """Raised when a check (an audit, a campaign's validation, a regeneration) finds something that
    does not hold; the message says what. Anything written before it is kept as the record."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, caught by a command that knows what it kept and how to continue: the message says
    both (`lab run`: the run directory and `lab run --resume RUN_DIR`)."""
