"""The API host's handlers: OAuth, /auth, /file/upload, videos, subtitles, live."""

from __future__ import annotations

import re
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from .._validate import KNOWN_CHANNELS
from ._platform import PLATFORM, Platform
from ._state import ALL_SCOPES, new_id
from ._wire import ApiError, parse_bool, select_fields

__all__ = ["routes"]

routes = web.RouteTableDef()

_CHANNEL = re.compile(r"[a-z][a-z0-9_-]{0,63}")
_LANGUAGE = re.compile(r"[a-z]{2,3}")

VIDEO_DEFAULT_FIELDS = ("id", "title", "channel", "owner")
VIDEO_FIELDS = (
    "id title channel owner published mode password password_protected status url "
    "created_time is_created_for_kids description encoding_progress publishing_progress "
    "duration embed_url embed_html thumbnail_url private start_time end_time onair "
    "live_publish_url live_airing_time live_auto_record record_status audience "
    "stream_live_hls_url item_type tags"
).split()
OWNER_ONLY = frozenset({"live_publish_url"})
WRITABLE = frozenset(
    "title channel published password mode description start_time end_time "
    "is_created_for_kids live_auto_record private tags".split()
)
SUBTITLE_FIELDS = ("id", "format", "language", "language_label", "url", "item_type")


def _p(request: web.Request) -> Platform:
    return request.app[PLATFORM]


async def _form(request: web.Request) -> dict[str, str]:
    if request.method != "POST":
        return {}
    data = await request.post()
    return {k: str(v) for k, v in data.items()}


def _authorize(request: web.Request, scope: str | None = None) -> dict[str, Any]:
    """The token record, or the platform's 401/403."""
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value:
        raise ApiError(
            401,
            "invalid_token",
            "Missing access token.",
            headers={"WWW-Authenticate": 'Bearer realm="api", error="invalid_request"'},
        )
    token = _p(request).state.token(value.strip())
    if token is None or token["expires_at"] <= time.time():
        raise ApiError(
            401,
            "invalid_token",
            "Invalid or expired access token.",
            headers={
                "WWW-Authenticate": 'Bearer realm="api", error="invalid_token", '
                'error_description="The access token provided is invalid or expired"'
            },
        )
    if scope and scope not in token["scopes"]:
        raise ApiError(
            403,
            "access_forbidden",
            f"Insufficient scope: this operation needs `{scope}'.",
            reason="insufficient_scope",
            headers={"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{scope}"'},
        )
    return token


def _require(form: dict[str, str], name: str) -> str:
    value = form.get(name)
    if value is None or value == "":
        raise ApiError(
            400,
            "missing_required_parameter",
            f"Missing required parameter `{name}'.",
            param=name,
        )
    return value


def _video(request: web.Request, video_id: str) -> dict[str, Any]:
    video = _p(request).state.get("video", video_id)
    if video is None:
        raise ApiError(
            404,
            "not_found",
            f"Can't find object video for `id' parameter: {video_id}",
            reason="object_not_found",
        )
    return video


def _public(platform: Platform, video: dict[str, Any], viewer: str | None) -> dict[str, Any]:
    """A video's readable fields, as seen by ``viewer``."""
    out = dict(video)
    out["password_protected"] = video.get("password") is not None
    out["password"] = None  # reading the password gives null
    vid = video["id"]
    out["embed_url"] = f"{platform.api_base}/embed/video/{vid}"
    out["embed_html"] = (
        f'<iframe frameborder="0" width="480" height="270" src="{out["embed_url"]}" '
        f'allowfullscreen allow="autoplay"></iframe>'
    )
    if video.get("mode") == "live":
        out["stream_live_hls_url"] = f"{platform.api_base}/live/{vid}.m3u8"
    if viewer != video["owner"]:
        for name in OWNER_ONLY:
            out[name] = None
    return out


def _video_fields(request: web.Request, video: dict[str, Any], viewer: str) -> dict[str, Any]:
    """The fields the request asks for (``fields=``), as ``viewer`` may see them."""
    return select_fields(
        _public(_p(request), video, viewer),
        request.query.get("fields"),
        VIDEO_DEFAULT_FIELDS,
        VIDEO_FIELDS,
    )


def _video_response(request: web.Request, video: dict[str, Any], viewer: str) -> web.Response:
    return web.json_response(_video_fields(request, video, viewer))


def _owned_video(request: web.Request, token: dict[str, Any]) -> dict[str, Any]:
    video = _video(request, request.match_info["id"])
    if video["owner"] != token["owner"]:
        raise ApiError(403, "access_forbidden", "You are not the owner of this video.")
    return video


def _check_channel(value: str) -> str:
    if not _CHANNEL.fullmatch(value) or value not in KNOWN_CHANNELS:
        raise ApiError(
            400,
            "invalid_parameter",
            f"`channel' is not a known category: `{value}'",
            param="channel",
        )
    return value


def _timestamp(name: str, value: str) -> int:
    if not value.isdigit():
        raise ApiError(400, "invalid_parameter", f"`{name}' must be a timestamp", param=name)
    return int(value)


def _apply_writes(platform: Platform, video: dict[str, Any], form: dict[str, str]) -> None:
    for name, value in form.items():
        if name not in WRITABLE:
            raise ApiError(
                400, "invalid_parameter", f"`{name}' is not a writable field", param=name
            )
        if name == "password":
            # A form has no NULL: an empty value removes the password (see the README).
            video["password"] = value or None
        elif name in ("published", "is_created_for_kids", "live_auto_record", "private"):
            video[name] = parse_bool(name, value)
        elif name == "channel":
            video["channel"] = _check_channel(value)
        elif name in ("start_time", "end_time"):
            video[name] = _timestamp(name, value)
        elif name == "mode":
            if value not in ("vod", "live"):
                raise ApiError(400, "invalid_parameter", "`mode' must be vod or live", param="mode")
            video["mode"] = value
            if value == "live":
                _make_live(platform, video)
        elif name == "tags":
            video["tags"] = [t.strip() for t in value.split(",") if t.strip()]
        elif name == "title":
            if not value.strip():
                raise ApiError(400, "invalid_parameter", "`title' must not be empty", param=name)
            video["title"] = value
        else:
            video[name] = value


def _make_live(platform: Platform, video: dict[str, Any]) -> None:
    host = urlsplit(platform.api_base).hostname or "127.0.0.1"
    video.setdefault("live_publish_url", f"rtmp://{host}/publish-dm?auth={secrets.token_hex(8)}")
    video.setdefault("onair", False)
    video.setdefault("record_status", "stopped")
    video.setdefault("audience", 0)
    video.setdefault("live_airing_time", 0)
    video.setdefault("live_auto_record", False)
    video["status"] = "ready"


# --- OAuth ---------------------------------------------------------------------------------


def _oauth_error(status: int, error: str, description: str) -> web.Response:
    return web.json_response({"error": error, "error_description": description}, status=status)


@routes.post("/oauth/token")
async def oauth_token(request: web.Request) -> web.Response:
    platform = _p(request)
    form = await _form(request)
    client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
    if platform.clients.get(client_id) != secret or not client_id:
        return _oauth_error(401, "invalid_client", "The client credentials are invalid")
    grant = form.get("grant_type", "")
    scopes = form.get("scope", "").split()
    if grant == "client_credentials":
        owner = platform.user_id(client_id)
    elif grant == "password":
        username = form.get("username", "")
        if platform.users.get(username) != form.get("password") or not username:
            return _oauth_error(400, "invalid_grant", "Invalid username or password")
        owner = platform.user_id(username)
    elif grant == "refresh_token":
        record = platform.state.get("refresh_token", form.get("refresh_token", ""))
        if record is None:
            return _oauth_error(400, "invalid_grant", "Invalid refresh token")
        platform.state.delete("refresh_token", record["id"])
        owner, scopes = record["owner"], record["scopes"]
    else:
        return _oauth_error(400, "unsupported_grant_type", f"Unsupported grant type {grant!r}")
    unknown = [s for s in scopes if s not in ALL_SCOPES]
    if unknown:
        return _oauth_error(400, "invalid_scope", f"Unknown scope {unknown[0]!r}")
    token = platform.state.issue_token(
        owner=owner,
        scopes=scopes,
        lifetime=platform.token_lifetime,
        refresh=grant != "client_credentials",
    )
    body = {
        "access_token": token["id"],
        "token_type": "Bearer",
        "expires_in": int(platform.token_lifetime),
        "scope": " ".join(token["scopes"]),
        "uid": owner,
    }
    if "refresh_token" in token:
        body["refresh_token"] = token["refresh_token"]
    return web.json_response(body)


@routes.get("/auth")
async def auth_info(request: web.Request) -> web.Response:
    token = _authorize(request)
    return web.json_response(
        {
            "id": token["owner"],
            "scope": " ".join(token["scopes"]),
            "roles": [],
            "username": token["owner"],
            "screenname": token["owner"],
        }
    )


@routes.get("/logout")
async def logout(request: web.Request) -> web.Response:
    token = _authorize(request)
    _p(request).state.revoke_tokens(token["owner"])
    return web.json_response({})


# --- uploads -------------------------------------------------------------------------------


@routes.get("/file/upload")
async def file_upload(request: web.Request) -> web.Response:
    platform = _p(request)
    token = _authorize(request, "manage_videos")
    upload = platform.state.new_upload(token["owner"])
    uuid = upload["id"]
    seal = platform.state.seal(uuid)
    return web.json_response(
        {
            "upload_url": f"{platform.upload_base}/upload?uuid={uuid}&seal={seal}",
            "progress_url": f"{platform.upload_base}/progress?uuid={uuid}",
        }
    )


# --- videos --------------------------------------------------------------------------------


def _file_for(platform: Platform, url: str) -> dict[str, Any]:
    base = url.split("#", 1)[0]
    file = platform.state.get("file", base)
    if file is None:
        raise ApiError(
            400, "invalid_parameter", "`url' is not a file uploaded to this platform", param="url"
        )
    return file


@routes.post("/me/videos")
@routes.post("/videos")
async def create_video(request: web.Request) -> web.Response:
    platform = _p(request)
    token = _authorize(request, "manage_videos")
    form = await _form(request)
    mode = form.get("mode", "vod")
    if mode != "live":  # a live stream has no file
        _file_for(platform, _require(form, "url"))
    if not platform.state.quota_left(token["owner"], platform.faults.videos_per_day):
        raise ApiError(
            403,
            "access_forbidden",
            "Upload quota exceeded for the last 24 hours.",
            reason="quota_exceeded",
        )
    title = _require(form, "title")
    channel = _check_channel(_require(form, "channel"))
    video: dict[str, Any] = {
        "id": new_id(),
        "owner": token["owner"],
        "title": title,
        "channel": channel,
        "published": False,
        "mode": "vod",
        "password": None,
        "status": "ready",
        "encoding_progress": 100,
        "publishing_progress": 100,
        "created_time": int(time.time()),
        "is_created_for_kids": False,
        "private": False,
        "item_type": "video",
        "tags": [],
        "url": form.get("url", "").split("#", 1)[0] or None,
    }
    writes = {k: v for k, v in form.items() if k not in ("url", "title", "channel")}
    _apply_writes(platform, video, writes)
    while platform.state.get("video", video["id"]) is not None:
        video["id"] = new_id()
    platform.state.put("video", video["id"], video)
    platform.bump("videos_created")
    return _video_response(request, video, token["owner"])


@routes.get("/me/videos")
async def list_videos(request: web.Request) -> web.Response:
    platform = _p(request)
    token = _authorize(request)
    page, limit = _paging(request)
    mine = [v for v in platform.state.all("video") if v["owner"] == token["owner"]]
    for name in ("mode",):
        if name in request.query:
            mine = [v for v in mine if v.get(name) == request.query[name]]
    if "tags" in request.query:
        wanted = {t for t in request.query["tags"].split(",") if t}
        mine = [v for v in mine if wanted <= set(v.get("tags") or ())]
    if request.query.get("sort") == "recent":
        mine.reverse()
    if "password_protected" in request.query:
        want = parse_bool("password_protected", request.query["password_protected"])
        mine = [v for v in mine if (v.get("password") is not None) == want]
    chunk = mine[(page - 1) * limit : page * limit]
    return web.json_response(
        {
            "page": page,
            "limit": limit,
            "total": len(mine),
            "has_more": page * limit < len(mine),
            "list": [_video_fields(request, v, token["owner"]) for v in chunk],
        }
    )


def _paging(request: web.Request) -> tuple[int, int]:
    try:
        page = int(request.query.get("page", "1"))
        limit = int(request.query.get("limit", "10"))
    except ValueError:
        raise ApiError(400, "invalid_parameter", "`page' and `limit' are numbers") from None
    if page < 1 or not 1 <= limit <= 100:
        raise ApiError(400, "invalid_parameter", "`limit' is 1 to 100 and `page' 1 or more")
    return page, limit


@routes.get(r"/video/{id:[A-Za-z0-9]+}")
async def read_video(request: web.Request) -> web.Response:
    token = _authorize(request)
    video = _video(request, request.match_info["id"])
    return _video_response(request, video, token["owner"])


@routes.post(r"/video/{id:[A-Za-z0-9]+}")
async def write_video(request: web.Request) -> web.Response:
    platform = _p(request)
    form = await _form(request)
    token = _authorize(request, "manage_videos" if form.get("mode") == "live" else None)
    video = _owned_video(request, token)
    _apply_writes(platform, video, form)
    platform.state.put("video", video["id"], video)
    return _video_response(request, video, token["owner"])


@routes.delete(r"/video/{id:[A-Za-z0-9]+}")
async def delete_video(request: web.Request) -> web.Response:
    platform = _p(request)
    token = _authorize(request, "manage_videos")
    video = _owned_video(request, token)
    platform.state.delete("video", video["id"])
    return web.json_response({})


# --- subtitles -----------------------------------------------------------------------------

LANGUAGE_LABELS = {"en": "English", "fr": "Français", "de": "Deutsch", "es": "Español"}


@routes.post(r"/video/{id:[A-Za-z0-9]+}/subtitles")
async def create_subtitle(request: web.Request) -> web.Response:
    platform = _p(request)
    token = _authorize(request, "manage_subtitles")
    video = _owned_video(request, token)
    form = await _form(request)
    language = _require(form, "language")
    url = _require(form, "url")
    fmt = form.get("format", "SRT")
    if not _LANGUAGE.fullmatch(language):
        raise ApiError(
            400, "invalid_parameter", "`language' must be an ISO 639 code", param="language"
        )
    if fmt != "SRT":
        raise ApiError(400, "invalid_parameter", "`format' must be SRT", param="format")
    if urlsplit(url).scheme not in ("http", "https"):
        raise ApiError(400, "invalid_parameter", "`url' must be an http(s) URL", param="url")
    subtitle = {
        "id": new_id(),
        "video": video["id"],
        "language": language,
        "language_label": LANGUAGE_LABELS.get(language, language),
        "format": fmt,
        "url": url.split("#", 1)[0],
        "item_type": "subtitle",
    }
    platform.state.put("subtitle", subtitle["id"], subtitle)
    return web.json_response(
        select_fields(subtitle, request.query.get("fields"), ("id",), SUBTITLE_FIELDS)
    )


@routes.get(r"/video/{id:[A-Za-z0-9]+}/subtitles")
async def list_subtitles(request: web.Request) -> web.Response:
    platform = _p(request)
    _authorize(request)
    video = _video(request, request.match_info["id"])
    page, limit = _paging(request)
    items = [s for s in platform.state.all("subtitle") if s["video"] == video["id"]]
    chunk = items[(page - 1) * limit : page * limit]
    return web.json_response(
        {
            "page": page,
            "limit": limit,
            "total": len(items),
            "has_more": page * limit < len(items),
            "list": [
                select_fields(s, request.query.get("fields"), ("id",), SUBTITLE_FIELDS)
                for s in chunk
            ],
        }
    )


@routes.get(r"/subtitle/{id:[A-Za-z0-9]+}")
async def read_subtitle(request: web.Request) -> web.Response:
    _authorize(request)
    subtitle = _p(request).state.get("subtitle", request.match_info["id"])
    if subtitle is None:
        raise ApiError(404, "not_found", "Can't find object subtitle", reason="object_not_found")
    return web.json_response(
        select_fields(subtitle, request.query.get("fields"), ("id",), SUBTITLE_FIELDS)
    )


@routes.delete(r"/subtitle/{id:[A-Za-z0-9]+}")
async def delete_subtitle(request: web.Request) -> web.Response:
    _authorize(request, "manage_subtitles")
    if not _p(request).state.delete("subtitle", request.match_info["id"]):
        raise ApiError(404, "not_found", "Can't find object subtitle", reason="object_not_found")
    return web.json_response({})
