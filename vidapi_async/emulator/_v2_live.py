"""API v2's livestreams, from the same backend as the legacy live streams: a livestream
created in v2 is a video with ``mode=live`` to the legacy API (its ``live_publish_url``
is the livestream's ``ingest.rtmp_url``). JSON bodies, 201 on create, scopes
``live.manage`` (create) and ``live.read`` (read).

Written from the platform's v2 pages (spec api-v2 §4 "Livestreams"), not from the
client's dialect module. UNCONFIRMED choices, each named below: the read path
(``/v2/livestreams/{id}``, the (3p) PATCH path), the (3p) field names
(``livestream_id``, ``livestream_url``, ``ingest.rtmp_url``/``srt_url``, ``status``)
and the values of ``status``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from ._backend import MAX_TIMESTAMP, Backend
from ._failure import ApiError
from ._v2 import (
    _auth,
    _b,
    _body,
    _invalid,
    _json,
    _my_profile,
    _translate,
    _visibility_of,
    iso_of,
    select_fields,
    unix_of,
)

__all__ = ["LIVESTREAM_STATUS", "routes"]

routes = web.RouteTableDef()

REQUIRED = ("title", "category", "visibility", "is_for_kids")
"""What a new livestream needs (spec §4 "Livestreams")."""
WRITABLE = frozenset({*REQUIRED, "description", "start_at", "end_at"})
"""What a create takes (spec §4: the required ones, ``description``,
``start_at``/``end_at``)."""
LIVESTREAM_STATUS = {True: "on_air", False: "idle"}
"""``status`` by whether it is on air (UNCONFIRMED: the field is (3p), its values
unpublished)."""


def livestream(backend: Backend, video: Mapping[str, Any]) -> dict[str, Any]:
    """Every readable v2 field of a backend live video."""
    vid = video["id"]
    host = urlsplit(backend.api_base).hostname or "127.0.0.1"
    return {
        "livestream_id": vid,
        "title": video.get("title"),
        "category": video.get("channel"),
        "description": video.get("description"),
        "visibility": _visibility_of(video),
        "is_for_kids": bool(video.get("is_created_for_kids")),
        "start_at": iso_of(video.get("start_time")),
        "end_at": iso_of(video.get("end_time")),
        "created_at": iso_of(video.get("created_time")),
        "status": LIVESTREAM_STATUS[bool(video.get("onair"))],
        "livestream_url": f"{backend.api_base}/video/{vid}",
        "ingest": {
            "rtmp_url": video.get("live_publish_url"),
            "srt_url": f"srt://{host}:9710?streamid={vid}",  # UNCONFIRMED shape
        },
        "profile": {"profile_id": video.get("profile", video["owner"])},
    }


def _fields(request: web.Request, record: Mapping[str, Any]) -> dict[str, Any]:
    return select_fields(record, request.query.get("fields") or ",".join(record))


@routes.post("/v2/profiles/{profile}/livestreams")
async def create_livestream(request: web.Request) -> web.Response:
    body = await _body(request)
    owner = _auth(request, "live.manage")["owner"]
    profile_id = _my_profile(request, owner)
    for name in REQUIRED:
        if name not in body:
            raise ApiError(400, "missing_required_parameter", f"{name} is required", param=name)
    unknown = sorted(set(body) - WRITABLE)
    if unknown:
        raise _invalid(unknown[0], f"{unknown[0][:40]} is not a writable field")
    times = {k: body[k] for k in ("start_at", "end_at") if k in body}
    form, _ = _translate({k: v for k, v in body.items() if k not in times}, None)
    seconds: dict[str, int | None] = {k: unix_of(v, k) for k, v in times.items()}
    for v2_name, legacy in (("start_at", "start_time"), ("end_at", "end_time")):
        if (when := seconds.get(v2_name)) is not None:
            if when > MAX_TIMESTAMP:  # checked here: the backend's error names start_time
                raise _invalid(v2_name, f"{v2_name} is past the year 9999")
            form[legacy] = str(when)
    start, end = seconds.get("start_at"), seconds.get("end_at")
    if start is not None and end is not None and end < start:
        raise _invalid("end_at", "end_at is before start_at")
    backend = _b(request)
    video = backend.create_video(owner, {**form, "mode": "live"})
    if profile_id != owner:
        video["profile"] = profile_id
        backend.store.put("video", video["id"], video)
    return _json(_fields(request, livestream(backend, video)), 201)


@routes.get("/v2/livestreams/{id}")
async def read_livestream(request: web.Request) -> web.Response:
    """The owner's livestream (its ingest address holds the stream key); a video that
    is not live is not a livestream (404)."""
    owner = _auth(request, "live.read")["owner"]
    backend = _b(request)
    value = request.match_info["id"]
    video = None
    if re.fullmatch(r"[A-Za-z0-9]{1,64}", value):
        video = backend.store.get("video", value)
    if video is None or video.get("mode") != "live":
        raise ApiError(
            404,
            "not_found",
            f"Livestream with ID '{value[:40]}' not found.",
            reason="object_not_found",
        )
    video = backend.owned_video(owner, video["id"])
    return _json(_fields(request, livestream(backend, video)))
