"""API v2 beside the legacy API, from the same backend: a video created in one dialect
is read in the other. Written from the platform's v2 documentation, not from the
client's dialect module (it imports nothing of the client), so the two can disagree.

v2's rules here: JSON bodies only (a form body is a 415), strict JSON booleans,
``visibility`` with its password rule, PATCH partial updates answered 204, DELETE 204,
creates 201, ``page``/``page_size`` lists that give ``next`` until null, errors as
``{"error": {"code", "message", "correlation_id", "details", "documentation_url"}}``,
tokens by client credentials with private API keys and v2 scopes (bundles expanded).

Where the platform's pages leave a point open, the choice is one named constant or
function below, marked UNCONFIRMED.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import re
import secrets
import time
import unicodedata
import urllib.parse
import uuid
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from ._backend import CHANNELS, Backend
from ._failure import ApiError
from ._formdata import media_type
from ._platform import PLATFORM
from ._webhooks import write_webhook

__all__ = ["API_KEYS", "SCOPES", "routes", "v2_error_response"]

routes = web.RouteTableDef()

SCOPES = (
    "account.read",
    "account.manage",
    "profile.read",
    "profile.manage",
    "video.read",
    "video.manage",
    "playlist.read",
    "playlist.manage",
    "player.read",
    "player.manage",
    "live.read",
    "live.manage",
    "analytics.manage",
    "organization.manage",
)
"""Every individual v2 scope the documentation names."""

_PUBLIC = ("playlist.read", "profile.read", "video.read")
# A bundle's manage scopes come with their read ones (the client's same UNCONFIRMED
# choice): account.read (GET /me), live.read, player.read.
_USER = (
    *_PUBLIC,
    "account.manage",
    "account.read",
    "live.manage",
    "live.read",
    "playlist.manage",
    "profile.manage",
    "video.manage",
)
_PUBLISHER = (*_USER, "analytics.manage", "player.manage", "player.read")
BUNDLES = {
    "bundle.public": _PUBLIC,
    "bundle.user": _USER,
    "bundle.publisher": _PUBLISHER,
    "bundle.organization": (*_PUBLISHER, "organization.manage"),
}

API_KEYS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # key -> (secret, user, permissions toggled on the key)
    "demo-api-key": ("demo-api-secret", "demo", SCOPES),
    "other-api-key": ("other-api-secret", "other", SCOPES),
    "demo-readonly-key": ("demo-readonly-secret", "demo", ("account.read", "video.read")),
}
"""Private API keys of the emulated organisation (public by design); the demo key may
be granted every scope, ``live.manage`` (a plan feature) among them. ``Emulator(api_keys=)``
adds others, e.g. a key without live."""

TOKEN_LIFETIME = 1800
"""Seconds a v2 token lives (UNCONFIRMED: third-party code sees ``expires_in`` ≈1800)."""
UPLOAD_SESSION_STATUS = 200
"""The upload session's status (UNCONFIRMED: the page does not say)."""
DEFAULT_PAGE_SIZE = 20
"""``page_size`` when not sent (UNCONFIRMED: 10 on one page, 20 on another)."""
REPEAT_DELETE_SUCCEEDS = True
"""A repeat delete by the owner answers 204 ("may still return success")."""
DOC_URL = "https://developers.dailymotion.com/reference/api-errors"
MAX_TAGS = 150
"""The most tags a video takes (the project's choice, docs/guides/decisions.md: the
platform publishes no limit); more is a 400 ``INVALID_PARAMETER``."""
MAX_TAG_LENGTH = 100
"""The longest tag, in characters (a choice, as ``MAX_TAGS``)."""

_CODES = {
    400: "INVALID_PARAMETER",  # UNCONFIRMED, as every code but the two below
    401: "AUTHENTICATION_REQUIRED",
    403: "MISSING_PERMISSIONS",  # confirmed
    404: "RESOURCE_NOT_FOUND",  # confirmed
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
}


def error_code(err: ApiError) -> str:
    """The v2 ``code`` for a refusal (UNCONFIRMED beyond ``RESOURCE_NOT_FOUND`` and
    ``MISSING_PERMISSIONS``)."""
    if err.error_type == "missing_required_parameter":
        return "MISSING_PARAMETER"
    if err.reason == "quota_exceeded":
        return "QUOTA_EXCEEDED"
    if err.status >= 500:
        return "INTERNAL_ERROR"
    return _CODES.get(err.status, "INVALID_REQUEST")


def v2_error_response(err: ApiError) -> web.Response:
    """A refusal in v2's error shape, with a fresh ``correlation_id``."""
    details: dict[str, Any] = {}
    if err.reason:
        details["reason"] = err.reason
    if err.param:
        details["param"] = err.param
    body = {
        "error": {
            "code": error_code(err),
            "message": err.message,
            "correlation_id": str(uuid.uuid4()),
            "details": details,
            "documentation_url": DOC_URL,
        }
    }
    return web.Response(
        status=err.status,
        text=json.dumps(body),
        content_type="application/json",
        headers=err.headers,
    )


def _b(request: web.Request) -> Backend:
    return request.app[PLATFORM].backend


def _invalid(param: str, message: str) -> ApiError:
    return ApiError(400, "invalid_parameter", message, param=param)


def _expanded(scopes: list[str] | tuple[str, ...]) -> set[str]:
    out = set(scopes)
    for name in scopes:
        out.update(BUNDLES.get(name, ()))
    return out


def _auth(request: web.Request, scope: str) -> dict[str, Any]:
    """The v2 token of the request, holding ``scope``: else 401, or 403
    ``MISSING_PERMISSIONS``. A legacy token is not a v2 one (401)."""
    token = _b(request).authorize(request.headers.get("Authorization", ""))
    if not token.get("v2"):
        raise ApiError(401, "invalid_token", "Not an API v2 token (malformed JWT).")
    if scope not in _expanded(token["scopes"]):
        raise ApiError(
            403,
            "access_forbidden",
            f"Missing permissions: this operation needs the scope {scope}.",
            reason="missing_permissions",
        )
    return token


# --- tokens ---------------------------------------------------------------------------------


def _oauth(status: int, error: str, description: str) -> web.Response:
    return web.json_response({"error": error, "error_description": description}, status=status)


@routes.post("/v2/token")
async def token(request: web.Request) -> web.Response:
    """Client credentials with a private API key; ``scope`` space-separated v2 names
    (bundles allowed), within the key's permissions; none asked: all of them. No
    refresh token."""
    if media_type(request.headers.get("Content-Type", "")) != "application/x-www-form-urlencoded":
        return _oauth(400, "invalid_request", "send the form url-encoded")
    form = dict(urllib.parse.parse_qsl((await request.read()).decode("utf-8", "replace")))
    backend = _b(request)
    client_id = form.get("client_id", "")
    key = backend.api_keys.get(client_id) or API_KEYS.get(client_id)
    if key is None or not hmac.compare_digest(key[0], form.get("client_secret", "")):
        return _oauth(401, "invalid_client", "The API key or its secret is wrong")
    if form.get("grant_type") != "client_credentials":
        return _oauth(400, "unsupported_grant_type", "API v2 takes client_credentials only")
    _secret, username, allowed = key
    asked = form.get("scope", "").split() or list(allowed)
    unknown = [s for s in asked if s not in SCOPES and s not in BUNDLES]
    if unknown:
        return _oauth(400, "invalid_scope", f"Unknown scope {unknown[0][:40]!r}")
    beyond = sorted(_expanded(asked) - set(BUNDLES) - set(allowed))
    if beyond:
        return _oauth(400, "invalid_scope", f"The key is not allowed {beyond[0]!r}")
    lifetime = int(min(TOKEN_LIFETIME, backend.token_lifetime))
    access = secrets.token_urlsafe(32)
    granted = sorted(set(asked))
    record = {
        "id": access,
        "owner": backend.accounts[username].id,
        "scopes": granted,
        "expires_at": time.time() + lifetime,
        "v2": True,
    }
    backend.store.put("token", access, record)
    return web.json_response(
        {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": lifetime,
            "scope": " ".join(granted),
        }
    )


# --- bodies -------------------------------------------------------------------------------


async def _body(request: web.Request, *, required: bool = True) -> dict[str, Any]:
    """The JSON object of a write; any other media type is a 415."""
    raw = await request.read()
    if not raw and not required:
        return {}
    if media_type(request.headers.get("Content-Type", "")) != "application/json":
        raise ApiError(415, "unsupported_media_type", "API v2 takes JSON bodies only.")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # nested too deep: a 400 too
        raise _invalid("body", "The body is not JSON.") from None
    if not isinstance(data, dict):
        raise _invalid("body", "The body must be a JSON object.")
    return data


def _text(body: Mapping[str, Any], name: str, low: int, high: int) -> str | None:
    if name not in body:
        return None
    value = body[name]
    # measured as it is kept: blank ends do not make room past ``high``
    if not isinstance(value, str) or len(value) > high or len(value.strip()) < low:
        raise _invalid(name, f"{name} must be a string of {low} to {high} characters")
    return value


def _flag(body: Mapping[str, Any], name: str) -> bool | None:
    if name not in body:
        return None
    if not isinstance(body[name], bool):
        raise _invalid(name, f"{name} must be a JSON boolean")
    return bool(body[name])


_LINE_BREAKS = str.maketrans("\n\r\t", "   ")


def _has(text: str, categories: tuple[str, ...]) -> bool:
    """Whether ``text`` holds a character of one of the Unicode ``categories``."""
    return any(unicodedata.category(c) in categories for c in text)


def unix_of(value: object, name: str) -> int | None:
    """ISO 8601 as UNIX seconds, or a 400."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            when = None
        if when is not None and when.tzinfo is not None:
            seconds = int(when.timestamp())
            if seconds < 0:
                raise _invalid(name, f"{name} is before 1970")
            return seconds
    raise _invalid(name, f"{name} must be an ISO 8601 date-time with its zone")


def iso_of(seconds: object) -> str | None:
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_WRITABLE = frozenset(
    "title description category visibility password is_for_kids is_explicit published_at "
    "language tags geo_restriction".split()
)


def _translate(
    body: Mapping[str, Any], video: Mapping[str, Any] | None
) -> tuple[dict[str, str], dict[str, Any]]:
    """A create's or PATCH's body as the backend's legacy form (strings) and the fields
    the legacy form has no name for (written on the record itself)."""
    unknown = sorted(set(body) - _WRITABLE - ({"source"} if video is None else set()))
    if unknown:
        raise _invalid(unknown[0], f"{unknown[0][:40]} is not a writable field")
    form: dict[str, str] = {}
    extra: dict[str, Any] = {}
    if (title := _text(body, "title", 1, 255)) is not None:
        form["title"] = title
    if (description := _text(body, "description", 0, 3000)) is not None:
        if _has(description.translate(_LINE_BREAKS), ("Cc", "Cs")):
            raise _invalid("description", "description holds a control character")
        form["description"] = description.strip()
    if "category" in body:
        if body["category"] not in CHANNELS:
            raise _invalid("category", "category is not a known category")
        form["channel"] = body["category"]
    if (kids := _flag(body, "is_for_kids")) is not None:
        form["is_created_for_kids"] = "true" if kids else "false"
    if (explicit := _flag(body, "is_explicit")) is not None:
        if video is not None and video.get("explicit") and not explicit:
            raise _invalid("is_explicit", "is_explicit cannot be unset")
        extra["explicit"] = explicit
    if "published_at" in body:
        extra["publish_date"] = unix_of(body["published_at"], "published_at")
    if "language" in body:
        if not isinstance(body["language"], str) or not re.fullmatch(r"[a-z]{2}", body["language"]):
            raise _invalid("language", "language is two lower-case letters")
        extra["language"] = body["language"]
    if "tags" in body:
        tags = body["tags"]
        if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
            raise _invalid("tags", "tags must be a list of strings")
        if any("," in t or _has(t, ("Cc", "Cf", "Cs", "Zl", "Zp")) for t in tags):
            raise _invalid("tags", "a tag holds a comma or a control character")
        if len(tags) > MAX_TAGS:
            raise _invalid("tags", f"{len(tags)} tags; at most {MAX_TAGS}")
        if any(len(t.strip()) > MAX_TAG_LENGTH for t in tags):
            raise _invalid("tags", f"a tag is longer than {MAX_TAG_LENGTH} characters")
        form["tags"] = ",".join(t.strip() for t in tags)
    if "geo_restriction" in body:
        extra["geoblocking"] = _geo(body["geo_restriction"])
    form.update(_visibility(body, video))
    return form, extra


def _geo(value: object) -> list[str] | None:
    if value is None:
        return None
    countries = value.get("countries") if isinstance(value, dict) else None
    if (
        not isinstance(value, dict)
        or value.get("mode") not in ("allow", "deny")
        or not isinstance(countries, list)
        or not all(isinstance(c, str) and re.fullmatch(r"[A-Za-z]{2}", c) for c in countries)
    ):
        raise _invalid("geo_restriction", "geo_restriction is {mode: allow|deny, countries}")
    return [value["mode"], *(c.lower() for c in countries)]


def _visibility(body: Mapping[str, Any], video: Mapping[str, Any] | None) -> dict[str, str]:
    """``visibility`` and its password rule: a password is required with, and allowed
    only with, ``visibility=password`` (a video already behind one keeps it)."""
    current = None if video is None else _visibility_of(video)
    wanted = body.get("visibility", current)
    if "visibility" in body and wanted not in ("public", "private", "password"):
        raise _invalid("visibility", "visibility is public, private or password")
    if "password" in body:
        password = body["password"]
        if wanted != "password":
            raise _invalid("password", "password is allowed only with visibility=password")
        if not isinstance(password, str) or not 1 <= len(password) <= 32:
            raise _invalid("password", "password is 1 to 32 characters")
    elif wanted == "password" and current != "password":
        raise _invalid("password", "visibility=password requires a password")
    if "visibility" not in body and "password" not in body:
        return {}
    out = {"published": "true", "private": "true" if wanted == "private" else "false"}
    if "password" in body:
        out["password"] = body["password"]
    elif wanted != "password":
        out["password"] = ""  # the legacy form's way of removing it
    return out


def _visibility_of(video: Mapping[str, Any]) -> str:
    if video.get("password") is not None:
        return "password"
    return "private" if video.get("private") or not video.get("published") else "public"


# --- representation -----------------------------------------------------------------------

READABLE = (
    "video_id title category description visibility is_for_kids is_explicit is_published "
    "tags language created_at published_at geo_restriction profile source embedding "
    "thumbnail processing video_url"
).split()
DEFAULT_FIELDS = ("video_id", "title", "category", "visibility", "is_for_kids", "created_at")
"""What a read gives without ``fields`` (UNCONFIRMED: "only some fields")."""


def private_id(video_id: str) -> str:
    """The ``k…`` id of a private video's address (stable per video)."""
    return "k" + hashlib.sha256(video_id.encode()).hexdigest()[:12]


def processing(status: str, progress: int) -> dict[str, Any]:
    """The ``processing`` object (UNCONFIRMED sub-fields: the legacy status words)."""
    return {"status": status, "progress": progress}


def v2_video(backend: Backend, video: Mapping[str, Any]) -> dict[str, Any]:
    """Every readable v2 field of a backend video."""
    legacy = backend.video_fields(
        video, video["owner"], "id,embed_url,embed_html,status,encoding_progress,thumbnail_url"
    )
    visibility = _visibility_of(video)
    geo = video.get("geoblocking")
    slug = private_id(video["id"]) if visibility == "private" else video["id"]
    return {
        "video_id": video["id"],
        "title": video.get("title"),
        "category": video.get("channel"),
        "description": video.get("description"),
        "visibility": visibility,
        "is_for_kids": bool(video.get("is_created_for_kids")),
        "is_explicit": bool(video.get("explicit")),
        "is_published": bool(video.get("published")),
        "tags": list(video.get("tags") or []),
        "language": video.get("language"),
        "created_at": iso_of(video.get("created_time")),
        "published_at": iso_of(video.get("publish_date")),
        "geo_restriction": None if not geo else {"mode": geo[0], "countries": geo[1:]},
        "profile": {"profile_id": video.get("profile", video["owner"])},
        "source": {"file_url": video.get("url"), "duration": video.get("duration")},
        "embedding": {"embed_url": legacy["embed_url"], "embed_html": legacy["embed_html"]},
        "thumbnail": {"h720_url": legacy["thumbnail_url"]},
        "processing": processing(legacy["status"], legacy["encoding_progress"]),
        "video_url": f"{backend.api_base}/video/{slug}",
    }


def select_fields(record: Mapping[str, Any], fields: str | None) -> dict[str, Any]:
    """``fields=a,b.c`` (dot notation picks an embedded object's field)."""
    names = [f for f in (fields or "").split(",") if f] or list(DEFAULT_FIELDS)
    out: dict[str, Any] = {}
    for name in names:
        top, _, sub = name.partition(".")
        if top not in record or (sub and not isinstance(record[top], dict)):
            raise _invalid("fields", f"Unknown field {name[:40]}")
        if not sub:
            out[top] = record[top]
            continue
        if sub not in record[top]:
            raise _invalid("fields", f"Unknown field {name[:40]}")
        out.setdefault(top, {})[sub] = record[top][sub]
    return out


def _json(data: Mapping[str, Any], status: int = 200) -> web.Response:
    return web.json_response(dict(data), status=status)


# --- me and profiles ----------------------------------------------------------------------


def profiles_of(backend: Backend, owner: str) -> list[dict[str, str]]:
    """An account's profiles: its own (id = the account's) and any added to the store
    as ``profile`` records (``{"id", "owner", "name"}``)."""
    account = next((a for a in backend.accounts.values() if a.id == owner), None)
    main = {"profile_id": owner, "name": account.username if account else owner}
    more = [
        {"profile_id": p["id"], "name": p.get("name", "")}
        for p in backend.store.owned("profile", owner)
    ]
    return [main, *more]


def _my_profile(request: web.Request, owner: str) -> str:
    wanted = request.match_info["profile"]
    if any(p["profile_id"] == wanted for p in profiles_of(_b(request), owner)):
        return wanted
    known = wanted in {a.id for a in _b(request).accounts.values()}
    if known or _b(request).store.get("profile", wanted) is not None:
        raise ApiError(403, "access_forbidden", "Missing permissions on this profile.")
    raise ApiError(
        404, "not_found", f"Profile with ID '{wanted[:40]}' not found.", reason="object_not_found"
    )


@routes.get("/v2/me")
async def me(request: web.Request) -> web.Response:
    owner = _auth(request, "account.read")["owner"]
    backend = _b(request)
    account = next((a for a in backend.accounts.values() if a.id == owner), None)
    return _json(
        {
            "user_id": owner,
            "username": account.username if account else owner,
            "profiles": profiles_of(backend, owner),
        }
    )


@routes.get("/v2/profiles/{profile}")
async def read_profile(request: web.Request) -> web.Response:
    owner = _auth(request, "profile.read")["owner"]
    profile_id = _my_profile(request, owner)
    name = next(p["name"] for p in profiles_of(_b(request), owner) if p["profile_id"] == profile_id)
    hook = _b(request).store.get("webhook", owner)
    record = {
        "profile_id": profile_id,
        "name": name,
        "display_name": name,
        "webhook": None
        if hook is None
        else {"callback_url": hook["url"], "events": hook["events"]},
    }
    return _json(select_fields(record, request.query.get("fields") or "profile_id,name"))


def _loopback(url: str) -> bool:
    return urllib.parse.urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")


@routes.patch("/v2/profiles/{profile}")
async def write_profile(request: web.Request) -> web.Response:
    """``{"webhook": {"callback_url", "events"}}``; ``null`` removes it. HTTPS only
    (loopback addresses aside, for local receivers); at least one event."""
    body = await _body(request)
    owner = _auth(request, "profile.manage")["owner"]
    _my_profile(request, owner)
    if set(body) - {"webhook"}:
        raise _invalid(sorted(set(body) - {"webhook"})[0], "not a writable profile field")
    hook = body.get("webhook")
    if hook is None:
        write_webhook(_b(request), owner, {"webhook_url": ""})
        return web.Response(status=204)
    url, events = (
        (hook.get("callback_url"), hook.get("events")) if isinstance(hook, dict) else (None, None)
    )
    if not isinstance(url, str) or not (url.startswith("https://") or _loopback(url)):
        raise _invalid("webhook.callback_url", "callback_url must be an https address")
    if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
        raise _invalid("webhook.events", "events needs at least one event type")
    write_webhook(_b(request), owner, {"webhook_url": url, "webhook_events": ",".join(events)})
    return web.Response(status=204)


# --- uploads and videos ---------------------------------------------------------------------


@routes.post("/v2/files/upload_sessions")
async def upload_session(request: web.Request) -> web.Response:
    """No body (a form body is a 415)."""
    if (
        await request.read()
        and media_type(request.headers.get("Content-Type", "")) != "application/json"
    ):
        raise ApiError(415, "unsupported_media_type", "API v2 takes JSON bodies only.")
    owner = _auth(request, "video.manage")["owner"]
    return _json(_b(request).new_upload(owner), UPLOAD_SESSION_STATUS)


def _extra(backend: Backend, video: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    if extra:
        video.update(extra)
        backend.store.put("video", video["id"], video)
    return video


@routes.post("/v2/profiles/{profile}/videos")
async def create_video(request: web.Request) -> web.Response:
    body = await _body(request)
    owner = _auth(request, "video.manage")["owner"]
    profile_id = _my_profile(request, owner)
    for name in ("title", "visibility", "category", "is_for_kids", "source"):
        if name not in body:
            raise ApiError(400, "missing_required_parameter", f"{name} is required", param=name)
    source = body["source"]
    if not isinstance(source, dict) or not isinstance(source.get("file_url"), str):
        raise _invalid("source", "source must be {file_url: ...}")
    form, extra = _translate({k: v for k, v in body.items() if k != "source"}, None)
    backend = _b(request)
    video = backend.create_video(owner, {"url": source["file_url"], **form})
    if profile_id != owner:
        extra["profile"] = profile_id
    video = _extra(backend, video, extra)
    return _json(select_fields(v2_video(backend, video), request.query.get("fields")), 201)


def _video_id(request: web.Request) -> str:
    value = request.match_info["id"]
    if not re.fullmatch(r"[A-Za-z0-9]{1,64}", value):
        raise ApiError(404, "not_found", "Video not found.", reason="object_not_found")
    return value


@routes.get("/v2/videos/{id}")
async def read_video(request: web.Request) -> web.Response:
    owner = _auth(request, "video.read")["owner"]
    backend = _b(request)
    video = backend.visible_video(owner, _video_id(request))
    return _json(select_fields(v2_video(backend, video), request.query.get("fields")))


@routes.patch("/v2/videos/{id}")
async def write_video(request: web.Request) -> web.Response:
    body = await _body(request)
    owner = _auth(request, "video.manage")["owner"]
    backend = _b(request)
    video = backend.owned_video(owner, _video_id(request))
    form, extra = _translate(body, video)
    video = backend.update_video(owner, video["id"], form) if form else video
    _extra(backend, video, extra)
    return web.Response(status=204)


@routes.delete("/v2/videos/{id}")
async def delete_video(request: web.Request) -> web.Response:
    owner = _auth(request, "video.manage")["owner"]
    backend, video_id = _b(request), _video_id(request)
    gone = backend.store.get("v2_deleted", video_id)
    if REPEAT_DELETE_SUCCEEDS and gone is not None and gone["owner"] == owner:
        return web.Response(status=204)
    backend.delete_video(owner, video_id)
    backend.store.put("v2_deleted", video_id, {"id": video_id, "owner": owner})
    return web.Response(status=204)


_LIST_PARAMS = frozenset({"page", "page_size", "fields", "sort", "tags", "visibility"})
_SORTS = ("created_at", "-created_at", "title", "-title")


@routes.get("/v2/profiles/{profile}/videos")
async def list_videos(request: web.Request) -> web.Response:
    """``page`` (≥1), ``page_size`` (1-100), ``sort``, ``fields``, filters ``tags``
    (comma-separated, UNCONFIRMED name) and ``visibility``; ``next`` until null."""
    owner = _auth(request, "video.read")["owner"]
    profile_id = _my_profile(request, owner)
    q = request.query
    unknown = sorted(set(q) - _LIST_PARAMS)
    if unknown:
        raise _invalid(unknown[0], f"Unknown parameter {unknown[0][:40]}")
    page, size = q.get("page", "1"), q.get("page_size", str(DEFAULT_PAGE_SIZE))
    if not (page.isascii() and page.isdigit() and size.isascii() and size.isdigit()):
        raise _invalid("page", "page and page_size are whole numbers")
    if int(page) < 1 or not 1 <= int(size) <= 100:
        raise _invalid("page_size", "page is 1 or more and page_size 1 to 100")
    sort = q.get("sort", "-created_at")
    if sort not in _SORTS:
        raise _invalid("sort", f"sort is one of {', '.join(_SORTS)}")
    backend = _b(request)
    tags = [t for t in q.get("tags", "").split(",") if t]
    found = list(backend.store.tagged(owner, tags))
    found = [v for v in found if v.get("profile", owner) == profile_id]
    if "visibility" in q:
        found = [v for v in found if _visibility_of(v) == q["visibility"]]
    if sort.lstrip("-") == "title":
        found.sort(key=lambda v: str(v.get("title", "")))
    if sort.startswith("-"):
        found.reverse()
    first, count = (int(page) - 1) * int(size), int(size)
    chunk = found[first : first + count]
    data = [select_fields(v2_video(backend, v), q.get("fields")) for v in chunk]

    def page_url(number: int) -> str:
        query = urllib.parse.urlencode({**q, "page": str(number)})
        return f"{backend.api_base}{request.path}?{query}"

    return _json(
        {
            "data": data,
            "page": int(page),
            "page_size": count,
            "total": len(found),
            "next": page_url(int(page) + 1) if first + count < len(found) else None,
            "previous": page_url(int(page) - 1) if int(page) > 1 else None,
        }
    )
