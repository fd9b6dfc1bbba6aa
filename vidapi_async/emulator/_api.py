"""The API host's handlers: parse the request, call the backend, answer JSON.

Paths take an optional trailing slash, as the platform does (the official SDK asks for
``/me/``). The rules themselves (ownership, defaults, quotas) live in ``_backend``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import urllib.parse
from collections.abc import Mapping
from typing import Any

import aiohttp
from aiohttp import web

from ._backend import CHANNELS, SUBTITLE_FIELDS, Backend, page_of, select
from ._failure import ApiError
from ._formdata import media_type
from ._platform import PLATFORM

__all__ = ["routes"]

routes = web.RouteTableDef()

BODY_FIELDS = web.RequestKey("body_fields", str)
"""``fields`` given in a POST's body rather than its query."""
_ID = "{id:[A-Za-z0-9]+}"
_SLASH = "{slash:/?}"


def _b(request: web.Request) -> Backend:
    return request.app[PLATFORM].backend


def _auth(request: web.Request, scope: str | None = None) -> dict[str, Any]:
    return _b(request).authorize(request.headers.get("Authorization", ""), scope)


def _viewer(request: web.Request) -> str | None:
    return _b(request).viewer(request.headers.get("Authorization", ""))


async def _form(request: web.Request) -> dict[str, str]:
    """The POST's form fields. ``fields`` may come in the body too (the official SDKs
    send every parameter there): it chooses what the write returns, as in the query."""
    if request.method != "POST":
        return {}
    form = await _read_form(request)
    if "fields" in form:
        request[BODY_FIELDS] = form.pop("fields")
    return form


async def _read_form(request: web.Request) -> dict[str, str]:
    kind = media_type(request.headers.get("Content-Type", ""))
    if kind not in ("application/x-www-form-urlencoded", ""):
        if kind.startswith("multipart/"):
            data = await request.post()
            return {k: v for k, v in data.items() if isinstance(v, str)}
        raise ApiError(400, "invalid_parameter", "send the fields form-encoded")
    try:
        body = (await request.read()).decode("utf-8")
        return dict(urllib.parse.parse_qsl(body, keep_blank_values=True, strict_parsing=False))
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, "invalid_parameter", "the form does not parse") from None


def _json(data: Mapping[str, Any], status: int = 200) -> web.Response:
    return web.json_response(dict(data), status=status)


def _fields(request: web.Request) -> str | None:
    return request.query.get("fields", request.get(BODY_FIELDS))


# --- OAuth and accounts --------------------------------------------------------------------


@routes.post(f"/oauth/token{_SLASH}")
async def oauth_token(request: web.Request) -> web.Response:
    status, body = _b(request).grant(await _form(request))
    return _json(body, status)


@routes.get(f"/oauth/authorize{_SLASH}")
async def oauth_authorize(request: web.Request) -> web.StreamResponse:
    """The authorization server's page, approved at once as ``username`` (default the
    demo user): a redirect to ``redirect_uri`` with ``code`` and ``state``."""
    q = request.query
    status, target, code = _b(request).authorize_code(
        client_id=q.get("client_id", ""),
        redirect_uri=q.get("redirect_uri", ""),
        scopes=q.get("scope", "").split(),
        username=q.get("username", "demo"),
        response_type=q.get("response_type", ""),
        code_challenge=q.get("code_challenge"),
        challenge_method=q.get("code_challenge_method", "plain"),
    )
    if status != 302:
        return _json({"error": "invalid_request", "error_description": target}, status)
    state = q.get("state")
    sep = "&" if "?" in target else "?"
    extra = f"&state={urllib.parse.quote(state, safe='')}" if state is not None else ""
    raise web.HTTPFound(f"{target}{sep}code={urllib.parse.quote(code)}{extra}")


@routes.get(f"/auth{_SLASH}")
async def auth_info(request: web.Request) -> web.Response:
    token = _auth(request)
    me = _b(request).me(token["owner"], "id,username,screenname")
    return _json({**me, "scope": " ".join(token["scopes"]), "roles": []})


@routes.get(f"/me{_SLASH}")
async def me(request: web.Request) -> web.Response:
    return _json(_b(request).me(_auth(request)["owner"], _fields(request)))


@routes.get(f"/logout{_SLASH}")
@routes.post(f"/logout{_SLASH}")
async def logout(request: web.Request) -> web.Response:
    _b(request).revoke(_auth(request)["owner"])
    return _json({})


# --- uploads -------------------------------------------------------------------------------


@routes.get(f"/file/upload{_SLASH}")
async def file_upload(request: web.Request) -> web.Response:
    return _json(_b(request).new_upload(_auth(request, "manage_videos")["owner"]))


# --- videos --------------------------------------------------------------------------------


def _video_answer(request: web.Request, video: dict[str, Any], viewer: str | None) -> web.Response:
    return _json(_b(request).video_fields(video, viewer, _fields(request)))


FETCH_LIMIT = 4 * 1024**3
"""The largest file the platform fetches itself for ``create_video(url=<public url>)``
(the platform's own limit per video for standard accounts)."""


async def _fetch_public(request: web.Request, owner: str, url: str) -> None:
    """``url=`` names a public http(s) file, not one uploaded here: the platform fetches
    it itself (streamed to disk, at most ``FETCH_LIMIT`` bytes) before the create."""
    backend = _b(request)
    if not url.startswith(("http://", "https://")) or url.startswith(backend.upload_base):
        return
    key = url.split("#", 1)[0]
    if backend.store.get("file", key) is not None:
        return
    platform = request.app[PLATFORM]
    loop = asyncio.get_running_loop()
    fd, path = tempfile.mkstemp(prefix="fetched-", dir=platform.files_dir)
    size = 0
    try:
        async with aiohttp.ClientSession() as session, session.get(key) as resp:
            if resp.status != 200:
                raise ApiError(
                    400,
                    "invalid_parameter",
                    f"`url': fetching it answered HTTP {resp.status}",
                    param="url",
                )
            with os.fdopen(fd, "wb") as out:
                async for piece in resp.content.iter_chunked(1 << 20):
                    size += len(piece)
                    if size > FETCH_LIMIT:
                        raise ApiError(
                            400,
                            "invalid_parameter",
                            "`url': the file is larger than allowed",
                            param="url",
                        )
                    await loop.run_in_executor(None, out.write, piece)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        await loop.run_in_executor(None, _remove, path)
        raise ApiError(
            400, "invalid_parameter", f"`url': cannot fetch it ({type(exc).__name__})", param="url"
        ) from None
    except ApiError:
        await loop.run_in_executor(None, _remove, path)
        raise
    backend.store.put(
        "file",
        key,
        {"id": key, "path": path, "name": key.rsplit("/", 1)[-1], "owner": owner, "size": size},
    )


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


@routes.post(f"/me/videos{_SLASH}")
@routes.post(f"/videos{_SLASH}")
async def create_video(request: web.Request) -> web.Response:
    form = await _form(request)
    owner = _auth(request, "manage_videos")["owner"]
    await _fetch_public(request, owner, form.get("url", ""))
    return _video_answer(request, _b(request).create_video(owner, form), owner)


@routes.post(f"/user/{{user}}/videos{_SLASH}")
async def create_user_video(request: web.Request) -> web.Response:
    form = await _form(request)
    owner = _auth(request, "manage_videos")["owner"]
    if request.match_info["user"] not in (owner, "me"):
        raise ApiError(403, "access_forbidden", "You can only create videos for yourself.")
    await _fetch_public(request, owner, form.get("url", ""))
    return _video_answer(request, _b(request).create_video(owner, form), owner)


@routes.get(f"/channels{_SLASH}")
async def list_channels(request: web.Request) -> web.Response:
    """The categories a video's ``channel`` takes, paged like every list (public)."""
    items = [{"id": slug, "name": slug.capitalize(), "description": ""} for slug in CHANNELS]
    return _json(page_of(sorted(items, key=lambda c: c["id"]), request.query, dict))


@routes.get(f"/me/videos{_SLASH}")
async def list_my_videos(request: web.Request) -> web.Response:
    backend, owner = _b(request), _auth(request)["owner"]
    videos = backend.my_videos(owner, request.query)
    return _json(
        page_of(videos, request.query, lambda v: backend.video_fields(v, owner, _fields(request)))
    )


@routes.get(f"/videos{_SLASH}")
async def list_public_videos(request: web.Request) -> web.Response:
    backend, viewer = _b(request), _viewer(request)
    videos = backend.public_videos(request.query)
    return _json(
        page_of(videos, request.query, lambda v: backend.video_fields(v, viewer, _fields(request)))
    )


@routes.get(f"/video/{_ID}{_SLASH}")
async def read_video(request: web.Request) -> web.Response:
    viewer = _viewer(request)
    return _video_answer(
        request, _b(request).visible_video(viewer, request.match_info["id"]), viewer
    )


@routes.post(f"/video/{_ID}{_SLASH}")
async def write_video(request: web.Request) -> web.Response:
    form = await _form(request)
    owner = _auth(request, "manage_videos" if form.get("mode") == "live" else None)["owner"]
    video = _b(request).update_video(owner, request.match_info["id"], form)
    return _video_answer(request, video, owner)


@routes.delete(f"/video/{_ID}{_SLASH}")
async def delete_video(request: web.Request) -> web.Response:
    _b(request).delete_video(_auth(request, "manage_videos")["owner"], request.match_info["id"])
    return _json({})


# --- subtitles -----------------------------------------------------------------------------


def _subtitle_fields(request: web.Request, subtitle: dict[str, Any]) -> dict[str, Any]:
    return select(subtitle, _fields(request), ("id",), SUBTITLE_FIELDS)


@routes.post(f"/video/{_ID}/subtitles{_SLASH}")
async def create_subtitle(request: web.Request) -> web.Response:
    form = await _form(request)
    owner = _auth(request, "manage_subtitles")["owner"]
    subtitle = _b(request).create_subtitle(owner, request.match_info["id"], form)
    return _json(_subtitle_fields(request, subtitle))


@routes.get(f"/video/{_ID}/subtitles{_SLASH}")
async def list_subtitles(request: web.Request) -> web.Response:
    items = _b(request).subtitles(_viewer(request), request.match_info["id"])
    return _json(page_of(items, request.query, lambda s: _subtitle_fields(request, s)))


@routes.get(f"/subtitle/{_ID}{_SLASH}")
async def read_subtitle(request: web.Request) -> web.Response:
    subtitle = _b(request).subtitle(_viewer(request), request.match_info["id"])
    return _json(_subtitle_fields(request, subtitle))


@routes.delete(f"/subtitle/{_ID}{_SLASH}")
async def delete_subtitle(request: web.Request) -> web.Response:
    owner = _auth(request, "manage_subtitles")["owner"]
    _b(request).delete_subtitle(owner, request.match_info["id"])
    return _json({})
