"""The legacy API's requests, as data (the sans-io side of ``_dialects.legacy``):
form-encoded POSTs to ``/me/...``, ``/video/<id>`` and the like, ``fields=`` on every
answer. Pure functions of the API root and the checked arguments, as ``_v2`` is
for API v2; the dialect sends them through the client's requester."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from .. import _validate as check
from .._errors import InvalidArgumentError
from .._resources.fields import VIDEO_FIELDS
from . import _raw
from ._requests import Request, api_request, form_bool, form_fields, plain_get, query_text

__all__ = [
    "DEFAULT_BASE_URL",
    "create_video",
    "form_of",
    "get_video",
    "metadata_form",
    "player_form",
    "post_video",
    "raw_request",
    "scope_for",
    "with_tag",
]

DEFAULT_BASE_URL: Final = "https://api.dailymotion.com"


def form_of(values: Mapping[str, object], argument: str) -> list[tuple[str, str]]:
    """Keyword values as form pairs in the platform's conventions, or a typed error."""
    try:
        return form_fields(values, argument)
    except TypeError as exc:
        raise InvalidArgumentError(argument, str(exc).split(": ", 1)[-1]) from None


def metadata_form(values: Mapping[str, object]) -> list[tuple[str, str]]:
    """A video's checked metadata (``VideoMetadata.values``) in the platform's form
    conventions: lists comma-joined, booleans ``true``/``false``, dates as UNIX
    seconds, ``None`` the empty value that clears a field."""
    return [(name, _form_text(value)) for name, value in values.items()]


def _form_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return form_bool(value)
    if isinstance(value, tuple):
        return ",".join(value)
    return str(value)


def player_form(settings: Mapping[str, object]) -> list[tuple[str, str]]:
    """Player settings as form pairs (each name checked), or a typed error."""
    for name in settings:
        if not check.is_field_name(name):
            raise InvalidArgumentError(name, "not a setting name")
    return form_of(settings, "settings")


def with_tag(form: list[tuple[str, str]], tag: str) -> list[tuple[str, str]]:
    """``form`` with ``tag`` added to its ``tags`` (the pair made if there is none)."""
    for i, (key, value) in enumerate(form):
        if key == "tags":
            form[i] = ("tags", ",".join([*(t for t in value.split(",") if t), tag]))
            return form
    return [*form, ("tags", tag)]


def create_video(
    base_url: str,
    form: list[tuple[str, str]],
    *,
    fields: Sequence[str] = VIDEO_FIELDS,
    scope: str | None = None,
) -> Request:
    """``POST /me/videos`` with ``form`` (checked and encoded already)."""
    return api_request(
        base_url,
        "POST",
        "/me/videos",
        query=[("fields", ",".join(fields))],
        form=form,
        scope=scope,
        idempotent=False,
    )


def post_video(
    base_url: str,
    video_id: str,
    form: list[tuple[str, str]],
    returning: Iterable[str],
    scope: str | None = None,
) -> Request:
    """``POST /video/<id>`` with ``form``, answering the ``returning`` fields."""
    return api_request(
        base_url,
        "POST",
        f"/video/{video_id}",
        query=[("fields", check.fields_value(returning))],
        form=form,
        scope=scope,
    )


def get_video(base_url: str, video_id: str, names: str, scope: str | None = None) -> Request:
    """``GET /video/<id>?fields=`` (``names``: comma-joined, checked)."""
    if type(names) is str and video_id.isascii() and video_id.isalnum():
        # The usual read (a checked id, the names fields_value joined): built directly.
        return plain_get(base_url, f"/video/{video_id}", _fields_query(names), scope)
    return api_request(
        base_url, "GET", f"/video/{video_id}", query=[("fields", names)], scope=scope
    )


@functools.lru_cache(maxsize=64)
def _fields_query(names: str) -> str:
    """``fields=<names>`` as a query writes it (a program reads a few lists of fields)."""
    return query_text([("fields", names)])


_SCOPES: Final = (
    # (methods, path pattern, scope): the scope each known write needs, so that a raw
    # call is refused before sending when the token's scopes are known (as typed ones).
    (("GET", "POST"), r"/file/upload/?", "manage_videos"),
    (("POST",), r"/(me|user/[^/]+)/videos/?|/videos/?", "manage_videos"),
    (("DELETE",), r"/video/[^/]+/?", "manage_videos"),
    (("POST", "DELETE"), r"/video/[^/]+/subtitles/?|/subtitle/[^/]+/?", "manage_subtitles"),
    (("POST",), r"/me/playlists/?", "manage_playlists"),
    (("POST", "DELETE"), r"/playlist/[^/]+(/videos(/[^/]+)?)?/?", "manage_playlists"),
    (("POST",), r"/me/players/?", "manage_players"),
    (("POST", "DELETE"), r"/player/[^/]+/?", "manage_players"),
)


def scope_for(method: str, path: str) -> str | None:
    """The scope a request to ``path`` needs, where the platform documents one."""
    for methods, pattern, scope in _SCOPES:
        if method in methods and re.fullmatch(pattern, path):
            return scope
    return None


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
    """A raw call's request in the legacy API: ``data`` form-encoded (POST), the scope
    a known write needs checked. Every argument checked before anything is sent."""
    checked = _raw.raw_path(path)
    query = _raw.raw_form(params, "params")
    form = _raw.raw_form(data, "data") if method == "POST" else None
    _raw.add_fields(query, fields)
    return api_request(
        base_url,
        method,
        checked,
        query=query,
        form=form,
        scope=scope_for(method, checked.rstrip("/") or "/"),
        idempotent=idempotent,
    )
