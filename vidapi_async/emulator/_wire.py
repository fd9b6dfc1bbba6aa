"""The platform's wire conventions, as the emulator speaks them: error bodies, form
booleans, field selection, Content-Range and Range lists. Pure functions."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from aiohttp import web

__all__ = [
    "ApiError",
    "error_response",
    "format_ranges",
    "parse_bool",
    "parse_content_range",
    "select_fields",
]


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


def error_response(err: ApiError) -> web.Response:
    """``{"error": {"code", "message", "type", "error_data": {...}}}`` as the platform sends."""
    error_data: dict[str, Any] = {}
    if err.reason:
        error_data["reason"] = err.reason
    if err.param:
        error_data["param"] = err.param
    body = {
        "error": {
            "code": err.status,
            "message": err.message,
            "type": err.error_type,
            "more_info": "vidapi-emulator",
            "error_data": error_data,
        }
    }
    return web.Response(
        status=err.status,
        text=json.dumps(body),
        content_type="application/json",
        headers=err.headers,
    )


def parse_bool(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ApiError(400, "invalid_parameter", f"`{name}' must be a boolean", param=name)


def select_fields(
    record: Mapping[str, Any], fields: str | None, default: Iterable[str], known: Iterable[str]
) -> dict[str, Any]:
    """The fields asked for with ``fields=a,b`` (the defaults without it)."""
    names = [f for f in fields.split(",") if f] if fields else list(default)
    known_set = set(known)
    for name in names:
        if name not in known_set:
            raise ApiError(
                400,
                "invalid_parameter",
                f"Unknown field `{name}'",
                reason="unknown_field",
                param="fields",
            )
    return {name: record.get(name) for name in names}


_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-(\d+)|\*)/(\d+)")


def parse_content_range(value: str) -> tuple[int, int, int] | tuple[None, None, int]:
    """``bytes FIRST-LAST/TOTAL`` (or ``bytes */TOTAL``, our ask-what-you-hold form)."""
    m = _CONTENT_RANGE.fullmatch(value.strip())
    if not m:
        raise ApiError(400, "invalid_parameter", f"bad Content-Range {value!r}")
    total = int(m.group(3))
    if m.group(1) is None:
        return None, None, total
    first, last = int(m.group(1)), int(m.group(2))
    if first > last or last >= total:
        raise ApiError(416, "invalid_parameter", f"Content-Range {value!r} is out of bounds")
    return first, last, total


def format_ranges(ranges: list[list[int]], total: int) -> str:
    """``a-b,c-d/TOTAL`` as the platform's ``Range`` header lists what it holds."""
    return ",".join(f"{a}-{b}" for a, b in ranges) + f"/{total}"
