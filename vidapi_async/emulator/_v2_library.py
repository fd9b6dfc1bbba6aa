"""API v2's playlists and players, from the same ``Library`` as the legacy ones: a
playlist made in one dialect is read in the other. JSON bodies, 201 on create, 204 on
PATCH and DELETE, v2's names (``playlist_id``/``title``/``visibility``,
``player_id``/``name``).

UNCONFIRMED choices (spec api-v2 §4): the playlist title's JSON name
(``PLAYLIST_TITLE``), the body field naming a video to add (``PLAYLIST_VIDEO``), and the
read/update/delete paths ``/v2/playlists/{id}`` and ``/v2/players/{id}``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ._failure import ApiError
from ._library import Library
from ._v2 import _auth, _b, _body, _invalid, _json, _my_profile, iso_of, select_fields

__all__ = ["routes"]

routes = web.RouteTableDef()

PLAYLIST_TITLE = "title"
"""The playlist title's JSON name (UNCONFIRMED: ``name`` or ``title``)."""
PLAYLIST_VIDEO = "video_id"
"""The body field naming the video to add (UNCONFIRMED)."""
_PLAYLIST_DEFAULT = ("playlist_id", PLAYLIST_TITLE, "visibility")
_PLAYER_DEFAULT = ("player_id", "name")


def _lib(request: web.Request) -> Library:
    return Library(_b(request))


def _playlist_form(body: dict[str, Any], *, creating: bool) -> dict[str, str]:
    unknown = sorted(set(body) - {PLAYLIST_TITLE, "description", "visibility"})
    if unknown:
        raise _invalid(unknown[0], f"{unknown[0][:40]} is not a writable field")
    if creating:
        for name in (PLAYLIST_TITLE, "visibility"):
            if name not in body:
                raise ApiError(400, "missing_required_parameter", f"{name} is required", param=name)
    form: dict[str, str] = {}
    if PLAYLIST_TITLE in body:
        title = body[PLAYLIST_TITLE]
        if not isinstance(title, str) or not 1 <= len(title.strip()) <= 50:
            raise _invalid(PLAYLIST_TITLE, f"{PLAYLIST_TITLE} is 1 to 50 characters")
        form["name"] = title
    if "description" in body:
        text = body["description"]
        if not isinstance(text, str) or len(text) > 2000:
            raise _invalid("description", "description is at most 2000 characters")
        form["description"] = text
    if "visibility" in body:
        if body["visibility"] not in ("public", "private"):
            raise _invalid("visibility", "visibility is public or private")
        form["private"] = "true" if body["visibility"] == "private" else "false"
    return form


def v2_playlist(lib: Library, playlist: dict[str, Any]) -> dict[str, Any]:
    legacy = lib.playlist_fields(playlist, "videos_total")
    return {
        "playlist_id": playlist["id"],
        PLAYLIST_TITLE: playlist.get("name"),
        "description": playlist.get("description"),
        "visibility": "private" if playlist.get("private") else "public",
        "profile": {"profile_id": playlist["owner"]},
        "created_at": iso_of(playlist.get("created_time")),
        "videos_total": legacy["videos_total"],
    }


@routes.post("/v2/profiles/{profile}/playlists")
async def create_playlist(request: web.Request) -> web.Response:
    body = await _body(request)
    owner = _auth(request, "playlist.manage")["owner"]
    if _my_profile(request, owner) != owner:
        raise _invalid("profile_id", "playlists live on the user's own profile here")
    lib = _lib(request)
    playlist = lib.create_playlist(owner, _playlist_form(body, creating=True))
    fields = request.query.get("fields") or ",".join(_PLAYLIST_DEFAULT)
    return _json(select_fields(v2_playlist(lib, playlist), fields), 201)


@routes.get("/v2/playlists/{id}")
async def read_playlist(request: web.Request) -> web.Response:
    owner = _auth(request, "playlist.read")["owner"]
    lib = _lib(request)
    playlist = lib.visible_playlist(owner, request.match_info["id"])
    fields = request.query.get("fields") or ",".join(_PLAYLIST_DEFAULT)
    return _json(select_fields(v2_playlist(lib, playlist), fields))


@routes.patch("/v2/playlists/{id}")
async def write_playlist(request: web.Request) -> web.Response:
    body = await _body(request)
    owner = _auth(request, "playlist.manage")["owner"]
    _lib(request).update_playlist(
        owner, request.match_info["id"], _playlist_form(body, creating=False)
    )
    return web.Response(status=204)


@routes.delete("/v2/playlists/{id}")
async def delete_playlist(request: web.Request) -> web.Response:
    owner = _auth(request, "playlist.manage")["owner"]
    _lib(request).delete_playlist(owner, request.match_info["id"])
    return web.Response(status=204)


@routes.post("/v2/playlists/{id}/videos")
async def add_video(request: web.Request) -> web.Response:
    body = await _body(request)
    owner = _auth(request, "playlist.manage")["owner"]
    video_id = body.get(PLAYLIST_VIDEO)
    if not isinstance(video_id, str) or not video_id:
        raise ApiError(
            400, "missing_required_parameter", f"{PLAYLIST_VIDEO} is required", param=PLAYLIST_VIDEO
        )
    playlist_id = request.match_info["id"]
    _lib(request).add_video(owner, playlist_id, video_id)
    return _json({"playlist_id": playlist_id, "video_id": video_id}, 201)


# --- players ------------------------------------------------------------------------------


def v2_player(player: dict[str, Any]) -> dict[str, Any]:
    return {
        "player_id": player["id"],
        "name": player.get("label"),
        "profile": {"profile_id": player["owner"]},
        "created_at": iso_of(player.get("created_time")),
    }


def _player_form(body: dict[str, Any]) -> dict[str, str]:
    unknown = sorted(set(body) - {"name"})
    if unknown:
        raise _invalid(unknown[0], f"{unknown[0][:40]} is not a player setting here")
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _invalid("name", "name must be a non-empty string")
    return {"label": name}


@routes.post("/v2/profiles/{profile}/players")
async def create_player(request: web.Request) -> web.Response:
    body = await _body(request)
    owner = _auth(request, "player.manage")["owner"]
    if _my_profile(request, owner) != owner:
        raise _invalid("profile_id", "players live on the user's own profile here")
    if "name" not in body:
        raise ApiError(400, "missing_required_parameter", "name is required", param="name")
    player = _lib(request).create_player(owner, _player_form(body))
    fields = request.query.get("fields") or ",".join(_PLAYER_DEFAULT)
    return _json(select_fields(v2_player(player), fields), 201)


@routes.get("/v2/players/{id}")
async def read_player(request: web.Request) -> web.Response:
    owner = _auth(request, "player.read")["owner"]
    player = _lib(request).owned_player(owner, request.match_info["id"])
    fields = request.query.get("fields") or ",".join(_PLAYER_DEFAULT)
    return _json(select_fields(v2_player(player), fields))


@routes.patch("/v2/players/{id}")
async def write_player(request: web.Request) -> web.Response:
    body = await _body(request)
    owner = _auth(request, "player.manage")["owner"]
    _lib(request).update_player(owner, request.match_info["id"], _player_form(body))
    return web.Response(status=204)


@routes.delete("/v2/players/{id}")
async def delete_player(request: web.Request) -> web.Response:
    owner = _auth(request, "player.manage")["owner"]
    _lib(request).delete_player(owner, request.match_info["id"])
    return web.Response(status=204)
