"""API v2 as a second dialect: its requests, its answers deciphered into the plain
mappings the legacy dialect's answers give (so that the same models are filled), and
its errors into the same exception tree. No I/O, no asyncio, no aiohttp.

The names and values the client's typed operations use are the legacy ones
(``channel``, ``is_created_for_kids``, ``published``/``private``/``password``,
``geoblocking``, UNIX seconds); this module translates them both ways.

Every point that the platform's public v2 pages do not settle is one named constant or
function below, marked UNCONFIRMED with the line of the spec it comes from, so that a
correction from the real platform is a one-line change. The emulator makes the same
choices from its own code.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from .. import _errors as e
from .._dialects.operations import Operation
from . import _answers, _raw
from ._answers import header, parse_retry_after
from ._requests import Request, api_request, origin, redact_data, shown

__all__ = [
    "DEFAULT_BASE_URL",
    "DIALECT",
    "TOKEN_URL",
    "UNSUPPORTED",
    "V2_VIDEO_FIELDS",
    "add_playlist_video",
    "api_error",
    "check_video_create",
    "choose_profile",
    "create_livestream",
    "create_player",
    "create_playlist",
    "create_video",
    "decode_api_response",
    "delete_video",
    "expand_scopes",
    "get_livestream",
    "get_profile",
    "get_video",
    "iso_from_unix",
    "list_videos",
    "livestream_from",
    "me",
    "needs_current",
    "next_page",
    "page_items",
    "player_from",
    "player_request",
    "playlist_from",
    "playlist_request",
    "raw_request",
    "set_webhook",
    "unix_from_iso",
    "unsupported",
    "update_video",
    "upload_session",
    "upload_session_from",
    "user_from",
    "v2_scopes",
    "video_body",
    "video_fields",
    "video_from",
    "visibility_from",
    "webhook_from",
]

DIALECT: Final = "v2"
DEFAULT_BASE_URL: Final = "https://api.dailymotion.com/v2"
"""The v2 root (spec §3 "Base URL"); a ``base_url`` given names the root instead."""
TOKEN_URL: Final = "https://oauth2.dailymotion.com/v2/token"  # noqa: S105 - an address
"""The platform's v2 token endpoint (spec §2 "Token endpoint")."""


def token_url_for(base_url: str) -> str:
    """The token endpoint for a v2 root: the platform's own for its root, else
    ``{base_url}/token`` (UNCONFIRMED: our convention for other hosts, the emulator
    among them; the platform's token host differs from its API host, spec §2)."""
    base = base_url.rstrip("/")
    return TOKEN_URL if base == DEFAULT_BASE_URL else f"{base}/token"


# --- scopes -------------------------------------------------------------------------------

READS_WITH_MANAGE: Final[Mapping[str, str]] = {
    # UNCONFIRMED (spec §2 "Scopes": the bundles list manage scopes without their read
    # ones; account.read, live.read and player.read are on endpoint pages only): a
    # bundle holding a manage scope is taken to hold its read scope too, so that what a
    # bundle manages it may read (GET /me, the profile lookup, needs account.read).
    "account.manage": "account.read",
    "live.manage": "live.read",
    "player.manage": "player.read",
}


def _with_reads(*names: str) -> tuple[str, ...]:
    return tuple(
        dict.fromkeys(
            n for name in names for n in (name, READS_WITH_MANAGE.get(name)) if n is not None
        )
    )


_PUBLIC: Final = ("playlist.read", "profile.read", "video.read")
_USER: Final = _with_reads(
    *_PUBLIC,
    "account.manage",
    "live.manage",
    "playlist.manage",
    "profile.manage",
    "video.manage",
)
_PUBLISHER: Final = _with_reads(*_USER, "analytics.manage", "player.manage")
BUNDLES: Final[Mapping[str, tuple[str, ...]]] = {
    # spec §2 "Scopes (v2 api-scopes page)": each bundle holds the one above it; the read
    # scope of each manage one added (READS_WITH_MANAGE, UNCONFIRMED).
    "bundle.public": _PUBLIC,
    "bundle.user": _USER,
    "bundle.publisher": _PUBLISHER,
    "bundle.organization": (*_PUBLISHER, "organization.manage"),
}

SCOPES_FOR_LEGACY: Final[Mapping[str, tuple[str, ...]]] = {
    # UNCONFIRMED, every row (spec §2 "Legacy → v2 scope mapping": inferred from which
    # scope each endpoint page asks for). manage_videos covers what it covers in the
    # legacy API: uploads (and the profile lookup they need: account.read), live,
    # webhooks (profile.manage).
    "manage_videos": (
        "video.manage",
        "video.read",
        "account.read",
        "live.manage",
        "live.read",
        "profile.manage",
        "profile.read",
    ),
    "manage_playlists": ("playlist.manage", "playlist.read"),
    "manage_players": ("player.manage", "player.read"),
    "userinfo": ("account.read",),
    "email": ("account.read",),
}

DEFAULT_SCOPES: Final = ("account.read", "video.read", "video.manage")
"""What a v2 token asks for when no scope is given: what uploading, reading and
changing videos need (UNCONFIRMED whether a grant without ``scope`` gets the key's
every permission, spec §2 "Body")."""


SCOPE_REFUSED_ERRORS: Final = frozenset({"invalid_scope", "access_denied"})
"""The token endpoint's OAuth ``error`` codes that refuse a scope the key's plan or
permissions lack (UNCONFIRMED: spec §2 names no code; RFC 6749's ``invalid_scope``,
and ``access_denied``). Any other error is not taken as a refusal of the scope."""


def v2_scopes(names: Iterable[str]) -> tuple[str, ...]:
    """Scope names in v2's vocabulary: v2 names (``video.manage``, bundles) as given,
    legacy ones through ``SCOPES_FOR_LEGACY``; one with no v2 counterpart is an
    ``InvalidArgumentError`` naming it."""
    out: list[str] = []
    for name in names:
        if not isinstance(name, str) or not name:
            raise e.InvalidArgumentError("scopes", "scope names are non-empty strings")
        if "." in name:
            out.append(name)
        elif name in SCOPES_FOR_LEGACY:
            out.extend(SCOPES_FOR_LEGACY[name])
        else:
            raise e.InvalidArgumentError("scopes", f"{name!r} has no API v2 counterpart")
    return tuple(dict.fromkeys(out))


def expand_scopes(names: Iterable[str]) -> frozenset[str]:
    """Granted scopes with every bundle expanded (a token granted ``bundle.user`` may
    ``video.manage``), for checking an operation's scope before sending."""
    out = set()
    for name in names:
        out.add(name)
        out.update(BUNDLES.get(name, ()))
    return frozenset(out)


# --- what v2 does not offer ---------------------------------------------------------------

UNSUPPORTED: Final[Mapping[Operation, str]] = {
    # operation -> why (spec §4 "Subtitles / thumbnails", "Livestreams", §5 "live").
    # create_live_stream and get_live_stream speak v2's livestream resource instead.
    Operation.UPLOAD_SUBTITLE: "no v2 endpoint for subtitle files was found (only ai_subtitles)",
    Operation.CREATE_SUBTITLE: "no v2 endpoint for subtitle files was found (only ai_subtitles)",
    Operation.LIST_SUBTITLES: "no v2 endpoint for subtitle files was found (only ai_subtitles)",
    Operation.DELETE_SUBTITLE: "no v2 endpoint for subtitle files was found (only ai_subtitles)",
    Operation.SET_THUMBNAIL: "no v2 endpoint sets a custom thumbnail",
    Operation.MAKE_LIVE: "live is a separate livestream resource in v2: a video cannot become live",
    Operation.GET_AUTH_INFO: "v2 has no /auth; the token's scopes come with it",
    Operation.CATEGORIES: "v2 documents no list of categories",
    Operation.PLAYLISTS_REMOVE_VIDEO: "no v2 path to remove a video from a playlist was found",
    Operation.PLAYLISTS_MINE: "no v2 path listing a profile's playlists was found",
    Operation.PLAYLISTS_VIDEOS: "no v2 path listing a playlist's videos was found",
    Operation.PLAYERS_MINE: "listing a profile's players is UNCONFIRMED in v2 (spec §4 Players)",
}
"""Operations v2 does not offer: ``unsupported(operation)`` raises before sending."""

UNSUPPORTED_FIELDS: Final[Mapping[str, str]] = {
    "expiry_date": "no v2 video field for an expiry date was found",
    "thumbnail_url": "no v2 endpoint sets a custom thumbnail",
}
"""Metadata arguments v2 has no field for."""


def unsupported(operation: str) -> None:
    """``UnsupportedOperationError`` when v2 does not offer ``operation``."""
    known = Operation.named(operation)
    why = None if known is None else UNSUPPORTED.get(known)
    if why is not None:
        raise e.UnsupportedOperationError(operation, DIALECT, why + "; use api='legacy'")


# --- values -------------------------------------------------------------------------------


def iso_from_unix(value: object, argument: str) -> str | None:
    """UNIX seconds (or an aware ``datetime``) as v2's ISO 8601 text, UTC with ``Z``
    (spec §3 "Timestamps": ``2026-06-01T12:00:00Z``). ``None`` stays ``None``. A time
    before 1970 or past year 9999 (UTC) is ``InvalidArgumentError``: ISO 8601 has
    four-digit years, and the legacy dialect sends UNIX seconds from 0."""
    if value is None:
        return None
    try:
        if isinstance(value, dt.datetime):
            if value.tzinfo is None or value.utcoffset() is None:
                raise e.InvalidArgumentError(argument, "a datetime needs a time zone")
            when = value.astimezone(dt.UTC)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            when = dt.datetime.fromtimestamp(math.floor(value), dt.UTC)
        else:
            raise e.InvalidArgumentError(argument, "expected UNIX seconds or an aware datetime")
    except (OverflowError, OSError, ValueError):
        raise e.InvalidArgumentError(argument, "not a time the platform knows") from None
    if when.year < 1970:
        raise e.InvalidArgumentError(argument, "a time before 1970 (UTC)")
    return when.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


_ISO = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"([Zz]|[+-][0-9]{2}:?[0-9]{2})"
)


def unix_from_iso(value: object, name: str) -> int | None:
    """v2's ISO 8601 text as UNIX seconds (what the models hold); ``None`` stays
    ``None``; anything else is ``UnexpectedResponseError`` naming the field."""
    if value is None:
        return None
    if not isinstance(value, str) or not _ISO.fullmatch(value):
        raise e.UnexpectedResponseError(
            f"{name}: expected an ISO 8601 time, got {str(value)[:40]!r}", status=None
        )
    text = value.upper().replace("Z", "+00:00").replace(" ", "T")
    try:
        return int(dt.datetime.fromisoformat(text).timestamp())
    except ValueError:
        raise e.UnexpectedResponseError(
            f"{name}: not a time: {value[:40]!r}", status=None
        ) from None


def _strict_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise e.InvalidArgumentError(name, "must be True or False")
    return value


def category_for(channel: str) -> str:
    """A legacy ``channel`` slug as v2's ``category`` (UNCONFIRMED: v2's enum values
    are not published; the legacy slugs are sent as they are, spec §4 "Category enum
    values are UNCONFIRMED for v2")."""
    return channel


def geo_restriction(value: object) -> dict[str, Any] | None:
    """The legacy ``geoblocking`` (country codes, led by ``allow`` (the default) or
    ``deny``) as v2's ``{"mode", "countries"}`` (spec §5; mode values ``allow``/``deny``
    are (3p); country codes sent upper-case: UNCONFIRMED). ``None``: no restriction."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, Sequence) or not all(isinstance(c, str) for c in items):
        raise e.InvalidArgumentError("geoblocking", "expected country codes, led by allow/deny")
    codes = [c.strip() for c in items if c.strip()]
    mode = "allow"
    if codes and codes[0].lower() in ("allow", "deny"):
        mode = codes.pop(0).lower()
    for code in codes:
        if not re.fullmatch(r"[A-Za-z]{2}", code):
            raise e.InvalidArgumentError("geoblocking", f"{code[:10]!r} is not a country code")
    return {"mode": mode, "countries": [c.upper() for c in codes]}


def geoblocking_from(value: object) -> list[str] | None:
    """v2's ``geo_restriction`` read back as the legacy list (mode first, codes in
    lower case); ``null`` is ``None``. Any other shape (no mode, a mode other than
    ``allow``/``deny``, countries not a list of two-letter codes) is
    ``UnexpectedResponseError``: never a guess."""
    if value is None:
        return None
    mode = value.get("mode") if isinstance(value, Mapping) else None
    countries = value.get("countries") if isinstance(value, Mapping) else None
    if (
        mode not in ("allow", "deny")
        or not isinstance(countries, list)
        or not all(isinstance(c, str) and re.fullmatch(r"[A-Za-z]{2}", c) for c in countries)
    ):
        raise e.UnexpectedResponseError(
            f"geo_restriction: expected {{mode: allow|deny, countries: [codes]}}, got "
            f"{shown(repr(value), (), 80)}",
            status=None,
        )
    return [mode, *(c.lower() for c in countries)]


VISIBILITIES: Final = ("public", "private", "password")
"""v2's ``visibility`` values (spec §4); any other read is ``UnexpectedResponseError``
(docs/guides/decisions.md)."""


PASSWORD_LENGTH: Final = (1, 32)
"""v2's password length (spec §4 "password: 1–32 chars")."""

_NOT_GIVEN: Any = object()


def needs_current(metadata: Mapping[str, object]) -> bool:
    """Whether an update's visibility depends on the video's current one: given
    ``published=True``, ``private=False`` or a password removed (without
    ``private=True`` or ``published=False``, which make it private), the new visibility is
    computed from the current one so that none of them lowers its protection (read
    first: ``GET /videos/{id}?fields=video_id,visibility``)."""
    if metadata.get("private") is True or metadata.get("published") is False:
        return False  # private either way
    return (
        metadata.get("published") is True
        or metadata.get("private") is False
        or ("password" in metadata and metadata["password"] in (None, ""))
    )


def visibility_from(data: Mapping[str, Any], what: str) -> str:
    """A video's ``visibility`` as read; anything but ``VISIBILITIES`` is
    ``UnexpectedResponseError`` (never a guess about a video's protection)."""
    value = data.get("visibility")
    if value not in VISIBILITIES:
        raise e.UnexpectedResponseError(
            f"{what}: visibility: expected one of {', '.join(VISIBILITIES)}, got "
            f"{shown(repr(value), (), 40)}",
            status=None,
        )
    return str(value)


def visibility(
    *,
    published: object = None,
    private: object = None,
    password: object = _NOT_GIVEN,
    current: str | None = None,
) -> dict[str, Any]:
    """The legacy ``published``/``private``/``password`` as v2's ``visibility`` (and
    ``password``): UNCONFIRMED mapping (spec §5 "published + private + password ->
    visibility (+ password)"), one that never lowers a video's protection
    (docs/guides/api-v2.md "Visibility"). ``current``: the video's visibility, for an
    update (``None``: a new video, ``public`` unless said).

    A password makes it ``password`` (refused with ``private=True`` or
    ``published=False``: v2 has neither a private nor an unpublished video with a
    password). ``private=True`` or ``published=False`` make it ``private`` (v2 has no
    unpublished state one can write: spec §4 "is_published is read-only"). Else, from
    ``current``: ``published=True`` changes nothing; ``private=False`` makes a
    ``private`` video ``public`` (a ``password`` one keeps its password, as in the
    legacy API); a password removed makes a ``password`` video ``private`` (v2 does
    not tell which visibility it had before). Only a change is in the answer."""
    if published is not None:
        _strict_bool("published", published)
    if private is not None:
        _strict_bool("private", private)
    if password is not _NOT_GIVEN and password not in (None, ""):
        if not isinstance(password, str):
            raise e.InvalidArgumentError("password", "must be a string")
        low, high = PASSWORD_LENGTH
        if not low <= len(password) <= high:
            raise e.InvalidArgumentError("password", f"API v2 takes {low} to {high} characters")
        if private:
            raise e.InvalidArgumentError("password", "a private video has no password in API v2")
        if published is False:
            raise e.InvalidArgumentError(
                "password",
                "an unpublished video has no password in API v2 (published=False makes it "
                "private): give one of published=False and a password",
            )
        return {"visibility": "password", "password": password}
    if private or published is False:
        return {"visibility": "private"}
    if current is None:  # a new video
        return {"visibility": "public"} if private is False or published is True else {}
    wanted = current
    if password is not _NOT_GIVEN and wanted == "password":
        wanted = "private"
    if private is False and wanted == "private":
        wanted = "public"
    return {} if wanted == current else {"visibility": wanted}


_RENAMES: Final[Mapping[str, str]] = {
    # legacy argument -> v2 body field (spec §4 "Create/PATCH body fields", §5)
    "title": "title",
    "description": "description",
    "is_created_for_kids": "is_for_kids",
    "explicit": "is_explicit",  # UNCONFIRMED name (spec §5 "explicit -> is_explicit")
    "language": "language",  # UNCONFIRMED name (spec §4 "language: name UNCONFIRMED")
    "tags": "tags",  # writability UNCONFIRMED (spec §4)
}
_VISIBILITY_ARGS = ("published", "private", "password")


CLEARED_BY_NULL: Final[Mapping[str, str]] = {
    "publish_date": "published_at",
    "geoblocking": "geo_restriction",
}
"""The fields ``update_video(name=None)`` clears, as v2 names them: a PATCH with
``null`` (UNCONFIRMED: the spec shows PATCH changing what is sent, not how a field is
emptied; ``null`` is JSON merge-patch's way, and the emulator takes it so)."""


def video_body(
    metadata: Mapping[str, object], *, operation: str, current: str | None = None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The v2 JSON body for the legacy metadata arguments given (``None`` values
    other than ``password`` are left out: not given, but on an update ``null`` for
    those ``CLEARED_BY_NULL`` names), and the secrets in it (a password). An argument
    v2 has no field for is ``UnsupportedOperationError``. ``current``: the video's
    visibility on an update (``visibility``), required when ``needs_current``."""
    body: dict[str, Any] = {}
    for name, value in metadata.items():
        if name in UNSUPPORTED_FIELDS and value is not None:
            raise e.UnsupportedOperationError(
                f"{operation}({name}=...)", DIALECT, UNSUPPORTED_FIELDS[name]
            )
        if name in _VISIBILITY_ARGS:
            continue
        if value is None:
            if operation == "update_video" and name in CLEARED_BY_NULL:
                body[CLEARED_BY_NULL[name]] = None
            continue
        if name == "channel":
            if not isinstance(value, str):
                raise e.InvalidArgumentError("channel", "must be a string")
            body["category"] = category_for(value)
        elif name in ("is_created_for_kids", "explicit"):
            body[_RENAMES[name]] = _strict_bool(name, value)
        elif name == "tags":
            tags = value.split(",") if isinstance(value, str) else value
            if not isinstance(tags, Sequence) or not all(isinstance(t, str) for t in tags):
                raise e.InvalidArgumentError("tags", "expected strings")
            body["tags"] = [t.strip() for t in tags if t.strip()]
        elif name == "publish_date":
            body["published_at"] = iso_from_unix(value, name)
        elif name == "geoblocking":
            body["geo_restriction"] = geo_restriction(value)
        elif name in _RENAMES:
            if not isinstance(value, str):
                raise e.InvalidArgumentError(name, "must be a string")
            body[_RENAMES[name]] = value
        elif name not in UNSUPPORTED_FIELDS:
            raise e.InvalidArgumentError(name, "not a video field this client knows")
    given = {k: metadata[k] for k in _VISIBILITY_ARGS if k in metadata}
    if given.get("password") is None and "password" in given and operation == "create_video":
        del given["password"]  # no password on a new video: nothing to remove
    if operation == "update_video" and current is None and needs_current(given):
        raise ValueError("update_video: the video's current visibility is needed")
    body.update(visibility(**given, current=current))
    secret = body.get("password")
    return body, (secret,) if isinstance(secret, str) else ()


# --- requests -----------------------------------------------------------------------------


def _json(request: Request, body: Mapping[str, Any], secrets: tuple[str, ...] = ()) -> Request:
    encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return attrs.evolve(request, json_body=encoded, body_secrets=secrets)


def _segment(value: object, name: str) -> str:
    """An id as one path segment: letters, digits, '-' and '_' only."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", value):
        raise e.InvalidArgumentError(name, "expected an id (letters, digits, '-', '_')")
    return value


def upload_session(base_url: str) -> Request:
    """``POST /files/upload_sessions`` with no body (spec §4 "Upload session"). A
    spare session costs nothing: retried like a read."""
    return api_request(base_url, "POST", "/files/upload_sessions", scope="video.manage")


def upload_session_from(data: Mapping[str, Any], what: str) -> dict[str, Any]:
    """The session's ``upload_url`` and ``progress_url`` (the legacy names too)."""
    url = data.get("upload_url")
    if not isinstance(url, str) or not url:
        raise e.UnexpectedResponseError(f"{what}: the answer has no upload_url", status=None)
    return {"upload_url": url, "progress_url": data.get("progress_url")}


def create_video(
    base_url: str, profile_id: str, file_url: str, metadata: Mapping[str, object]
) -> Request:
    """``POST /profiles/{profile_id}/videos`` (spec §4 "Videos"): the uploaded file's
    ``url`` as ``source.file_url``, with the fields v2 requires (``title``,
    ``visibility``, ``category``, ``is_for_kids``; visibility ``public`` unless said)."""
    return _create_on_profile(
        base_url, profile_id, "videos", metadata, {"source": {"file_url": file_url}}
    )


def check_video_create(metadata: Mapping[str, object]) -> None:
    """What ``create_video`` would refuse of ``metadata`` (an argument v2 has no field
    for, a required one missing), refused now: before an upload's first request."""
    _create_body("videos", metadata)


def _create_body(
    kind: str, metadata: Mapping[str, object]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The JSON body of a new video or livestream (``kind``) and its secrets."""
    operation, what = (
        ("create_video", "video") if kind == "videos" else ("create_live_stream", "live stream")
    )
    body, secrets = video_body(metadata, operation=operation)
    for name, v2_name in (("title", "title"), ("channel", "category")):
        if v2_name not in body:
            raise e.InvalidArgumentError(name, f"API v2 requires it on a new {what}")
    body.setdefault("visibility", "public")
    body.setdefault("is_for_kids", False)
    return body, secrets


def _create_on_profile(
    base_url: str,
    profile_id: str,
    kind: str,
    metadata: Mapping[str, object],
    more: Mapping[str, Any],
) -> Request:
    """``POST /profiles/{profile_id}/{kind}`` (a video or a livestream): the fields v2
    requires of both (``title``, ``category``; ``visibility`` public and
    ``is_for_kids`` false unless said), then ``more``."""
    body, secrets = _create_body(kind, metadata)
    scope = "video.manage" if kind == "videos" else "live.manage"
    body.update(more)
    request = api_request(
        base_url,
        "POST",
        f"/profiles/{_segment(profile_id, 'profile_id')}/{kind}",
        scope=scope,
        idempotent=False,
    )
    return _json(request, body, secrets)


def update_video(
    base_url: str, video_id: str, metadata: Mapping[str, object], current: str | None = None
) -> Request | None:
    """``PATCH /videos/{id}`` with only the fields given (spec §3 "Verbs"); answered
    204, so a caller that needs the new state reads it after. ``current``: the video's
    visibility, required when ``needs_current(metadata)``. ``None`` when the
    visibility arguments given change nothing (nothing to send)."""
    body, secrets = video_body(metadata, operation="update_video", current=current)
    if not body:
        if any(name in metadata for name in _VISIBILITY_ARGS):
            return None
        raise e.InvalidArgumentError("metadata", "nothing to change")
    request = api_request(
        base_url, "PATCH", f"/videos/{_segment(video_id, 'video_id')}", scope="video.manage"
    )
    return _json(request, body, secrets)


def delete_video(base_url: str, video_id: str) -> Request:
    """``DELETE /videos/{id}``: 204; a repeat "may still return success" (spec §3)."""
    return api_request(
        base_url, "DELETE", f"/videos/{_segment(video_id, 'video_id')}", scope="video.manage"
    )


READ_FIELDS: Final[Mapping[str, str]] = {
    # legacy field -> v2 selector (spec §4 "Readable video fields", §5)
    "id": "video_id",
    "title": "title",
    "channel": "category",
    "owner": "profile.profile_id",
    "published": "is_published",
    "private": "visibility",
    "password_protected": "visibility",
    "description": "description",
    "tags": "tags",
    "language": "language",
    "is_created_for_kids": "is_for_kids",
    "explicit": "is_explicit",
    "created_time": "created_at",
    "publish_date": "published_at",
    "updated_time": "updated_at",
    "geoblocking": "geo_restriction",
    "url": "video_url",
    "private_id": "video_url",
    "embed_url": "embedding.embed_url",
    "embed_html": "embedding.embed_html",
    "duration": "source.duration",  # (3p)
    "thumbnail_url": "thumbnail.h720_url",  # (3p), UNCONFIRMED which size
    "status": "processing.status",  # UNCONFIRMED: processing's sub-fields unpublished
    "encoding_progress": "processing.progress",  # UNCONFIRMED, as above
}
"""A legacy field without a v2 counterpart (``views_total``, live fields) is not asked
for and reads ``None``; ``mode`` is not asked for either: ``video_from`` fills it."""

V2_VIDEO_FIELDS: Final[frozenset[str]] = frozenset(
    selector.split(".", 1)[0] for selector in READ_FIELDS.values()
)
"""v2's own names of the video fields above: given in ``fields=``, asked as themselves
(``visibility``), and read under their own names beside the legacy ones."""


def video_fields(names: Iterable[str]) -> str:
    """The v2 ``fields=`` selection for field names, legacy ones or v2's own
    (``video_id`` always)."""
    out = ["video_id"]
    for name in names:
        selector = READ_FIELDS.get(name) or (name if name in V2_VIDEO_FIELDS else None)
        if selector is not None and selector not in out:
            out.append(selector)
    return ",".join(out)


def get_video(base_url: str, video_id: str, fields: Iterable[str]) -> Request:
    """``GET /videos/{id}?fields=...`` (spec §4)."""
    return api_request(
        base_url,
        "GET",
        f"/videos/{_segment(video_id, 'video_id')}",
        query=[("fields", video_fields(fields))],
        scope="video.read",
    )


OLDEST_FIRST: Final = "created_at"
"""``sort`` for oldest first (spec §3 "Sorting": ``-`` means descending)."""
TAG_FILTER: Final = "tags"
"""The list filter by tag (UNCONFIRMED name, spec §4 "Filters: ... parameter names
UNCONFIRMED")."""
PAGE_SIZE_MAX: Final = 100


def list_videos(
    base_url: str,
    profile_id: str,
    fields: Iterable[str],
    *,
    page: int = 1,
    page_size: int = PAGE_SIZE_MAX,
    tag: str | None = None,
) -> Request:
    """``GET /profiles/{profile_id}/videos``, oldest first, ``page_size`` sent always
    (spec §3: the default differs between pages); later pages: ``next_page``."""
    if not 1 <= page_size <= PAGE_SIZE_MAX:
        raise e.InvalidArgumentError("page_size", f"API v2 pages by 1 to {PAGE_SIZE_MAX}")
    query = [
        ("fields", video_fields(fields)),
        ("sort", OLDEST_FIRST),
        ("page", str(page)),
        ("page_size", str(page_size)),
    ]
    if tag is not None:
        query.append((TAG_FILTER, tag))
    return api_request(
        base_url,
        "GET",
        f"/profiles/{_segment(profile_id, 'profile_id')}/videos",
        query=query,
        scope="video.read",
    )


def page_items(data: Mapping[str, Any], what: str) -> tuple[list[Mapping[str, Any]], str | None]:
    """A list answer's items (``data``) and its ``next`` address (``None`` at the end).
    ``next`` is read at the top level or in a ``pagination`` object (spec §3: which one
    is UNCONFIRMED; both are read)."""
    items = data.get("data")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise e.UnexpectedResponseError(f"{what}: the answer has no list of data", status=None)
    nxt = data.get("next")
    pagination = data.get("pagination")
    if nxt is None and isinstance(pagination, Mapping):
        nxt = pagination.get("next")
    if nxt is not None and (not isinstance(nxt, str) or not nxt):
        raise e.UnexpectedResponseError(f"{what}: next is not an address", status=None)
    return items, nxt


def next_page(current: Request, next_url: str, seen: Iterable[str] = ()) -> Request:
    """The request for the ``next`` address (opaque, sent as given: spec §3 "follow
    until null"). One on another origin than the API, or already fetched (a loop), is
    ``UnexpectedResponseError``: the token would go nowhere it should."""
    next_url = urllib.parse.urljoin(current.url, next_url)  # a relative next: this page's
    if origin(next_url) != origin(current.url):
        raise e.UnexpectedResponseError(
            f"{current.what}: next names another host than the API's", status=None
        )
    known = seen if isinstance(seen, set | frozenset) else set(seen)
    if next_url == current.url or next_url in known:
        raise e.UnexpectedResponseError(
            f"{current.what}: next names a page already read", status=None
        )
    return Request("GET", next_url, scope=current.scope, exact_url=True)


def me(base_url: str) -> Request:
    """``GET /me``: the user and their profiles (spec §4 "Me / profiles")."""
    return api_request(base_url, "GET", "/me", scope="account.read")


def user_from(data: Mapping[str, Any]) -> dict[str, Any]:
    """``/me`` as the legacy user mapping (``id``, ``username``), v2 fields kept."""
    out = {k: v for k, v in data.items() if k != "user_id"}
    out["id"] = data.get("user_id")
    return out


def choose_profile(data: Mapping[str, Any], wanted: str | None) -> str:
    """The profile to create under: ``wanted`` when it is one of the user's, else the
    only one. Several without a choice, none, or a ``wanted`` not among them is an
    ``InvalidArgumentError`` naming them (never a guess)."""
    profiles = data.get("profiles")
    if not isinstance(profiles, list):
        raise e.UnexpectedResponseError("GET /me: the answer has no profiles", status=None)
    if not all(isinstance(p, Mapping) and isinstance(p.get("profile_id"), str) for p in profiles):
        raise e.UnexpectedResponseError("GET /me: a profile without a string id", status=None)
    found = [(str(p["profile_id"]), str(p.get("name") or "")) for p in profiles]
    names = ", ".join(f"{pid} ({name})" if name else pid for pid, name in found) or "none"
    names = shown(names, (), _answers.SERVER_TEXT_CHARS)  # server text: cut and escaped
    if wanted is not None:
        if any(pid == wanted for pid, _ in found):
            return wanted
        raise e.InvalidArgumentError("profile_id", f"{wanted!r} is not yours; yours: {names}")
    if len(found) == 1:
        return found[0][0]
    if not found:
        raise e.InvalidArgumentError("profile_id", "this key reaches no profile")
    raise e.InvalidArgumentError(
        "profile_id", f"this key reaches several profiles, choose one: {names}"
    )


# --- playlists, players, webhooks ---------------------------------------------------------

PLAYLIST_TITLE_FIELD: Final = "title"
"""The playlist's title in JSON (UNCONFIRMED: spec §4 "JSON name `name` vs `title`")."""
PLAYLIST_VIDEO_FIELD: Final = "video_id"
"""The body field naming the video to add (UNCONFIRMED: spec §4 "The name of the
video-ID body field is UNCONFIRMED")."""


def _playlist_body(
    name: object, description: object, private: object, *, creating: bool
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if name is not None:
        if not isinstance(name, str) or not 1 <= len(name) <= 50:
            raise e.InvalidArgumentError("name", "API v2 takes 1 to 50 characters")
        body[PLAYLIST_TITLE_FIELD] = name
    if description is not None:
        if not isinstance(description, str) or len(description) > 2000:
            raise e.InvalidArgumentError("description", "API v2 takes at most 2000 characters")
        body["description"] = description
    if private is not None or creating:
        # UNCONFIRMED mapping (spec §5 "playlist private (bool) -> visibility")
        body["visibility"] = "private" if _strict_bool("private", bool(private)) else "public"
    return body


def create_playlist(
    base_url: str,
    profile_id: str,
    name: str,
    *,
    description: str | None = None,
    private: bool = False,
) -> Request:
    """``POST /profiles/{profile_id}/playlists`` (spec §4 "Playlists"): 201."""
    _strict_bool("private", private)
    request = api_request(
        base_url,
        "POST",
        f"/profiles/{_segment(profile_id, 'profile_id')}/playlists",
        scope="playlist.manage",
        idempotent=False,
    )
    return _json(request, _playlist_body(name, description, private, creating=True))


def playlist_request(
    base_url: str,
    method: str,
    playlist_id: str,
    *,
    name: str | None = None,
    description: str | None = None,
    private: bool | None = None,
) -> Request:
    """``GET``, ``PATCH`` or ``DELETE /playlists/{id}`` (UNCONFIRMED paths, spec §4)."""
    path = f"/playlists/{_segment(playlist_id, 'playlist_id')}"
    if method == "GET":
        return api_request(base_url, "GET", path, scope="playlist.read")
    request = api_request(base_url, method, path, scope="playlist.manage")
    if method != "PATCH":
        return request
    body = _playlist_body(name, description, private, creating=False)
    if not body:
        raise e.InvalidArgumentError("playlist", "nothing to change")
    return _json(request, body)


def add_playlist_video(base_url: str, playlist_id: str, video_id: str) -> Request:
    """``POST /playlists/{playlist_id}/videos`` (spec §4): 201 with the item."""
    request = api_request(
        base_url,
        "POST",
        f"/playlists/{_segment(playlist_id, 'playlist_id')}/videos",
        scope="playlist.manage",
        idempotent=False,
    )
    return _json(request, {PLAYLIST_VIDEO_FIELD: _segment(video_id, "video_id")})


def playlist_from(item: Mapping[str, Any]) -> dict[str, Any]:
    """A v2 playlist as the legacy mapping (``id``, ``name``, ``private``, ``owner``)."""
    out = {k: v for k, v in item.items() if k not in ("playlist_id", PLAYLIST_TITLE_FIELD)}
    out["id"] = item.get("playlist_id")
    out["name"] = item.get(PLAYLIST_TITLE_FIELD)
    if item.get("visibility") in ("public", "private"):
        out["private"] = item["visibility"] == "private"
    profile = item.get("profile")
    if profile is not None:
        out["owner"] = profile.get("profile_id") if isinstance(profile, Mapping) else profile
    return out


def create_player(base_url: str, profile_id: str, label: str) -> Request:
    """``POST /profiles/{profile_id}/players`` with ``{"name": label}`` (spec §4
    "Players"; the legacy ``label`` is v2's ``name``, spec §5)."""
    if not isinstance(label, str) or not label.strip():
        raise e.InvalidArgumentError("label", "must be a non-empty string")
    request = api_request(
        base_url,
        "POST",
        f"/profiles/{_segment(profile_id, 'profile_id')}/players",
        scope="player.manage",
        idempotent=False,
    )
    return _json(request, {"name": label})


def player_request(
    base_url: str, method: str, player_id: str, settings: Mapping[str, object] | None = None
) -> Request:
    """``GET /players/{id}``, ``PATCH`` (204; ``label`` sent as ``name``, other
    settings as given: v2's own names) or ``DELETE`` (UNCONFIRMED, spec §4)."""
    path = f"/players/{_segment(player_id, 'player_id')}"
    if method == "GET":
        return api_request(base_url, "GET", path, scope="player.read")
    request = api_request(base_url, method, path, scope="player.manage")
    if method != "PATCH":
        return request
    body = {("name" if k == "label" else k): v for k, v in (settings or {}).items()}
    if not body:
        raise e.InvalidArgumentError("settings", "nothing to change")
    return _json(request, body)


def player_from(item: Mapping[str, Any]) -> dict[str, Any]:
    """A v2 player as the legacy mapping (``id``, ``label``)."""
    out = {k: v for k, v in item.items() if k not in ("player_id", "name")}
    out["id"] = item.get("player_id")
    out["label"] = item.get("name")
    return out


def set_webhook(
    base_url: str, profile_id: str, url: str | None, events: Sequence[str] = ()
) -> Request:
    """``PATCH /profiles/{profile_id}`` with ``webhook`` (spec §4 "Webhooks": needs
    ``profile.manage`` and the Owner role). ``url=None`` removes it by writing
    ``"webhook": null`` (UNCONFIRMED: spec §4 "delete semantics UNCONFIRMED")."""
    hook = None if url is None else {"callback_url": url, "events": list(events)}
    request = api_request(
        base_url, "PATCH", f"/profiles/{_segment(profile_id, 'profile_id')}", scope="profile.manage"
    )
    return _json(request, {"webhook": hook})


def get_profile(base_url: str, profile_id: str, fields: str = "profile_id,name,webhook") -> Request:
    """``GET /profiles/{id}`` (spec §4)."""
    return api_request(
        base_url,
        "GET",
        f"/profiles/{_segment(profile_id, 'profile_id')}",
        query=[("fields", fields)],
        scope="profile.read",
    )


def webhook_from(profile: Mapping[str, Any]) -> dict[str, Any] | None:
    """A profile's ``webhook`` as the legacy mapping (``url``, ``events``)."""
    hook = profile.get("webhook")
    if not isinstance(hook, Mapping) or not hook.get("callback_url"):
        return None
    events = hook.get("events")
    return {"url": hook["callback_url"], "events": list(events) if isinstance(events, list) else []}


# --- livestreams ---------------------------------------------------------------------------

LIVESTREAM_PATH: Final = "/livestreams/{id}"
"""A livestream's own path, read with ``GET`` (UNCONFIRMED: spec §4 "Livestreams" gives
no read path; this is the PATCH path, itself (3p), which no operation here sends)."""
LIVESTREAM_READ_SCOPE: Final = "live.read"
"""The scope a livestream read needs (spec §4: ``live.read``; its path UNCONFIRMED)."""
LIVESTREAM_INGEST_URL: Final = "rtmp_url"
"""The field of ``ingest`` read as ``live_publish_url`` (UNCONFIRMED: (3p) notes name
``ingest.rtmp_url`` and ``ingest.srt_url``)."""
LIVESTREAM_PAGE_URL: Final = "livestream_url"
"""The field read as the live stream's ``url``, its page (UNCONFIRMED: (3p) field,
read as ``video_url`` is for a video)."""
LIVESTREAM_TIMES: Final[Mapping[str, str]] = {
    # v2 name -> legacy name (spec §4: start_at/end_at, ISO 8601)
    "start_at": "start_time",
    "end_at": "end_time",
}


def create_livestream(base_url: str, profile_id: str, metadata: Mapping[str, object]) -> Request:
    """``POST /profiles/{profile_id}/livestreams`` (spec §4 "Livestreams", scope
    ``live.manage``): ``title``, ``category``, ``visibility`` and ``is_for_kids``
    always (required), ``start_at``/``end_at`` (ISO 8601) from the legacy
    ``start_time``/``end_time`` UNIX seconds when given."""
    given = dict(metadata)
    times = {v2: given.pop(legacy, None) for v2, legacy in LIVESTREAM_TIMES.items()}
    more = {
        v2_name: iso_from_unix(value, LIVESTREAM_TIMES[v2_name])
        for v2_name, value in times.items()
        if value is not None
    }
    return _create_on_profile(base_url, profile_id, "livestreams", given, more)


def get_livestream(base_url: str, livestream_id: str) -> Request:
    """``GET`` a livestream at ``LIVESTREAM_PATH`` (UNCONFIRMED path, spec §4)."""
    path = LIVESTREAM_PATH.format(id=_segment(livestream_id, "livestream_id"))
    return api_request(base_url, "GET", path, scope=LIVESTREAM_READ_SCOPE)


def livestream_from(item: Mapping[str, Any]) -> dict[str, Any]:
    """A v2 livestream as the legacy mapping of a live video: ``mode`` ``"live"``,
    ``id`` from ``livestream_id``, ``live_publish_url`` from ``ingest``, the page as
    ``url``, ``start_time``/``end_time`` in UNIX seconds; the video renames
    (``category``, ``visibility``, ...) as ``video_from`` reads them. Its ``status``
    (values unpublished) is kept as ``livestream_status``, not read as a video's
    processing status; ``ingest`` stays under its own name (its ``srt_url`` too)."""
    rest = {
        k: v
        for k, v in item.items()
        if k not in ("livestream_id", LIVESTREAM_PAGE_URL, "status", *LIVESTREAM_TIMES)
    }
    out = video_from(rest)
    if "livestream_id" in item:
        out["id"] = item["livestream_id"]
    out["mode"] = "live"
    if LIVESTREAM_PAGE_URL in item:
        out["url"] = item[LIVESTREAM_PAGE_URL]
    if "status" in item:
        out["livestream_status"] = item["status"]
    ingest = item.get("ingest")
    if isinstance(ingest, Mapping):
        out["live_publish_url"] = ingest.get(LIVESTREAM_INGEST_URL)
    for v2_name, legacy in LIVESTREAM_TIMES.items():
        if v2_name in item:
            out[legacy] = unix_from_iso(item[v2_name], v2_name)
    return out


# --- answers ------------------------------------------------------------------------------


def processing_state(value: object) -> tuple[str | None, int | None]:
    """``processing`` as the legacy ``status`` and ``encoding_progress``: UNCONFIRMED
    (spec §4 lists ``processing`` as an embedded object without its sub-fields); read
    as ``{"status": "processing"|"ready"|"encoding_error", "progress": 0-100}``."""
    if not isinstance(value, Mapping):
        return None, None
    status, progress = value.get("status"), value.get("progress")
    return (
        status if isinstance(status, str) else None,
        progress if isinstance(progress, int) and not isinstance(progress, bool) else None,
    )


_PRIVATE_ID = re.compile(r"/(k[A-Za-z0-9]+)/?$")
_READ_RENAMES: Final[Mapping[str, str]] = {
    "video_id": "id",
    "category": "channel",
    "is_for_kids": "is_created_for_kids",
    "is_explicit": "explicit",
    "is_published": "published",
    "video_url": "url",
}
_READ_TIMES: Final[Mapping[str, str]] = {
    # UNCONFIRMED pairs (spec §5 "exact name pairs UNCONFIRMED")
    "created_at": "created_time",
    "published_at": "publish_date",
    "updated_at": "updated_time",
    "uploaded_at": "uploaded_time",
}


def video_from(item: Mapping[str, Any]) -> dict[str, Any]:
    """A v2 video as the legacy mapping the models are filled from: the renames, UNIX
    seconds, ``visibility`` as ``private``/``password_protected``, the embedded
    objects' fields under their legacy names. A v2 field with no legacy name is kept
    under its own. ``mode`` is ``"vod"``: a v2 video is one (live streams are v2's
    livestream resource, ``livestream_from``)."""
    out: dict[str, Any] = {"mode": "vod"}
    for key, value in item.items():
        if key in _READ_RENAMES:
            out[_READ_RENAMES[key]] = value
        elif key in _READ_TIMES:
            out[_READ_TIMES[key]] = unix_from_iso(value, key)
        elif key == "visibility":
            if value not in VISIBILITIES or not isinstance(value, str):
                raise e.UnexpectedResponseError(
                    f"visibility: expected one of {', '.join(VISIBILITIES)}, got "
                    f"{shown(repr(value), (), 40)}",
                    status=None,
                )
            out["visibility"] = value
            out["private"] = value == "private"
            out["password_protected"] = value == "password"
        elif key == "geo_restriction":
            out["geoblocking"] = geoblocking_from(value)
        elif key == "profile":
            out["owner"] = value.get("profile_id") if isinstance(value, Mapping) else value
        elif key == "source" and isinstance(value, Mapping):
            out["duration"] = value.get("duration")
        elif key == "embedding" and isinstance(value, Mapping):
            out["embed_url"] = value.get("embed_url")
            out["embed_html"] = value.get("embed_html")
        elif key == "thumbnail" and isinstance(value, Mapping):
            out["thumbnail_url"] = value.get("h720_url")
        elif key == "processing":
            out["status"], out["encoding_progress"] = processing_state(value)
        else:
            out.setdefault(key, value)
    url = out.get("url")
    if out.get("private") and isinstance(url, str) and (m := _PRIVATE_ID.search(url)):
        out["private_id"] = m.group(1)
    return out


def decode_api_response(
    request: Request,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    secrets: Iterable[str | None] = (),
) -> Mapping[str, Any]:
    """A success's JSON object (``{}`` for a 204 or an empty body), or the exception
    for an error answer in v2's shape."""
    return _answers.decode_api_response(
        request, status, headers, body, secrets=secrets, error=api_error
    )


CONFIRMED_CODES: Final[Mapping[str, type[e.APIError]]] = {
    # spec §3 "Errors: Codes confirmed" (their statuses 404/403 presumed)
    "RESOURCE_NOT_FOUND": e.NotFoundError,
    "MISSING_PERMISSIONS": e.ForbiddenError,
}
PRESUMED_CODES: Final[Mapping[str, type[e.APIError]]] = {
    # UNCONFIRMED, every one (spec §3 "The full code/status table is UNCONFIRMED"):
    # the names the emulator answers with.
    "INVALID_PARAMETER": e.InvalidParameterError,
    "MISSING_PARAMETER": e.MissingParameterError,
    "UNSUPPORTED_MEDIA_TYPE": e.BadRequestError,
    "QUOTA_EXCEEDED": e.QuotaExceededError,
}


def api_error(
    request: Request,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    secrets: Iterable[str | None] = (),
) -> e.APIError:
    """The exception for a v2 error answer ``{"error": {"code", "message",
    "correlation_id", "details", ...}}``. The status decides for 401 (a token to fetch
    anew), 429 and 5xx (to retry); otherwise the ``code``: a known one its class, an
    unknown one a plain ``APIError`` carrying it (``error_type``). ``correlation_id``
    is kept on every one and shown in its message."""
    secrets = tuple(secrets)
    data, text = _answers.error_answer(body, secrets)
    headers = redact_data(dict(headers), secrets)
    err = data.get("error")
    code = reason = correlation = None
    if isinstance(err, Mapping):
        message = str(err.get("message") or "")
        code = err.get("code") if isinstance(err.get("code"), str) else None
        correlation = err.get("correlation_id")
        details = err.get("details")
        if isinstance(details, Mapping) and isinstance(details.get("reason"), str):
            reason = details["reason"]
    else:
        message = text
    message = (
        f"{request.what}: {shown(message or f'HTTP {status}', secrets, _answers.SERVER_TEXT_CHARS)}"
    )
    kwargs: dict[str, Any] = {
        "status": status,
        "error_type": code,
        "reason": reason,
        "body": data,
        "headers": dict(headers),
        "correlation_id": shown(correlation, secrets, 100)
        if isinstance(correlation, str)
        else None,
    }
    retry_after = parse_retry_after(header(headers, "Retry-After"))
    if status == 401:
        return e.InvalidTokenError(message, **kwargs)
    if status == 429:
        return e.RateLimitedError(message, retry_after=retry_after, **kwargs)
    if status >= 500:
        return e.ServerError(message, retry_after=retry_after, **kwargs)
    cls = CONFIRMED_CODES.get(code or "") or PRESUMED_CODES.get(code or "")
    if cls is e.QuotaExceededError:
        return e.QuotaExceededError(message, retry_after=retry_after, **kwargs)
    if cls is e.ForbiddenError and request.scope is not None:
        return e.InsufficientScopeError(message, scope=request.scope, **kwargs)
    return (cls or e.APIError)(message, **kwargs)


# --- raw calls ----------------------------------------------------------------------------


def raw_request(
    base_url: str,
    method: str,
    path: object,
    *,
    params: Mapping[str, object] | None = None,
    data: Mapping[str, object] | None = None,
    fields: Iterable[str] | str | None = None,
    idempotent: bool = True,
) -> Request:
    """A raw call's request in v2 (``client.get/post/patch/delete``): ``data`` as a JSON
    body (POST, PATCH); no legacy scope is checked. Every argument checked first."""
    checked = _raw.raw_path(path)
    query = _raw.raw_form(params, "params")
    _raw.add_fields(query, fields)
    request = api_request(base_url, method, checked, query=query, idempotent=idempotent)
    if method in ("POST", "PATCH"):
        return attrs.evolve(request, json_body=_raw.json_body(data))
    return request
