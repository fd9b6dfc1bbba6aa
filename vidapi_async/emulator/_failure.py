"""The platform's refusal, as the backend raises it (no HTTP here: ``_wire`` writes it)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ApiError"]


class ApiError(Exception):
    """Raised by handlers; the middleware turns it into the platform's error body."""

    def __init__(
        self,
        status: int,
        error_type: str,
        message: str,
        *,
        reason: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message
        self.reason = reason
        self.param = param
        self.headers = dict(headers or {})
