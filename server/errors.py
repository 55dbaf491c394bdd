"""The one error type of the lab server: raised at the boundary, rendered as a JSON error body."""

from __future__ import annotations


class ApiError(Exception):
    """A refused request: HTTP status, snake_case code and a message that names what and why.

    Raising it anywhere before a commit guarantees nothing was written.
    """

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> dict:
        return {"error": {"code": self.code, "message": self.message}}
