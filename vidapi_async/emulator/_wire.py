"""The platform's error format, as the emulator speaks it."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ._failure import ApiError

__all__ = ["ApiError", "error_response"]


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
