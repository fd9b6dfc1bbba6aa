"""The API host's handlers for playlists and players: parse, call ``_library``, answer.

Scopes as the platform documents them: ``manage_playlists`` for playlist writes,
``manage_players`` for everything about players (their settings are the owner's).
"""

from __future__ import annotations

from aiohttp import web

from ._api import _ID, _SLASH, _auth, _b, _fields, _form, _json, _viewer
from ._backend import page_of
from ._library import Library
from ._webhooks import write_webhook

__all__ = ["routes"]

routes = web.RouteTableDef()


def _lib(request: web.Request) -> Library:
    return Library(_b(request))


# --- playlists -----------------------------------------------------------------------------


@routes.get(f"/me/playlists{_SLASH}")
async def my_playlists(request: web.Request) -> web.Response:
    lib, owner = _lib(request), _auth(request)["owner"]
    fields = _fields(request)
    return _json(
        page_of(lib.my_playlists(owner), request.query, lambda p: lib.playlist_fields(p, fields))
    )


@routes.post(f"/me/playlists{_SLASH}")
async def create_playlist(request: web.Request) -> web.Response:
    form = await _form(request)
    lib, owner = _lib(request), _auth(request, "manage_playlists")["owner"]
    return _json(lib.playlist_fields(lib.create_playlist(owner, form), _fields(request)))


@routes.get(f"/playlist/{_ID}{_SLASH}")
async def read_playlist(request: web.Request) -> web.Response:
    lib = _lib(request)
    playlist = lib.visible_playlist(_viewer(request), request.match_info["id"])
    return _json(lib.playlist_fields(playlist, _fields(request)))


@routes.post(f"/playlist/{_ID}{_SLASH}")
async def write_playlist(request: web.Request) -> web.Response:
    form = await _form(request)
    lib, owner = _lib(request), _auth(request, "manage_playlists")["owner"]
    playlist = lib.update_playlist(owner, request.match_info["id"], form)
    return _json(lib.playlist_fields(playlist, _fields(request)))


@routes.delete(f"/playlist/{_ID}{_SLASH}")
async def delete_playlist(request: web.Request) -> web.Response:
    _lib(request).delete_playlist(
        _auth(request, "manage_playlists")["owner"], request.match_info["id"]
    )
    return _json({})


@routes.get(f"/playlist/{_ID}/videos{_SLASH}")
async def playlist_videos(request: web.Request) -> web.Response:
    backend, viewer = _b(request), _viewer(request)
    videos = _lib(request).playlist_videos(viewer, request.match_info["id"])
    fields = _fields(request)
    return _json(page_of(videos, request.query, lambda v: backend.video_fields(v, viewer, fields)))


@routes.post("/playlist/{id:[A-Za-z0-9]+}/videos/{video:[A-Za-z0-9]+}" + _SLASH)
async def add_playlist_video(request: web.Request) -> web.Response:
    await _form(request)
    owner = _auth(request, "manage_playlists")["owner"]
    _lib(request).add_video(owner, request.match_info["id"], request.match_info["video"])
    return _json({})


@routes.delete("/playlist/{id:[A-Za-z0-9]+}/videos/{video:[A-Za-z0-9]+}" + _SLASH)
async def remove_playlist_video(request: web.Request) -> web.Response:
    owner = _auth(request, "manage_playlists")["owner"]
    _lib(request).remove_video(owner, request.match_info["id"], request.match_info["video"])
    return _json({})


# --- players -------------------------------------------------------------------------------


@routes.get(f"/me/players{_SLASH}")
async def my_players(request: web.Request) -> web.Response:
    lib, owner = _lib(request), _auth(request, "manage_players")["owner"]
    fields = _fields(request)
    return _json(
        page_of(lib.my_players(owner), request.query, lambda p: lib.player_fields(p, fields))
    )


@routes.post(f"/me/players{_SLASH}")
async def create_player(request: web.Request) -> web.Response:
    form = await _form(request)
    lib, owner = _lib(request), _auth(request, "manage_players")["owner"]
    return _json(lib.player_fields(lib.create_player(owner, form), _fields(request)))


@routes.get(f"/player/{_ID}{_SLASH}")
async def read_player(request: web.Request) -> web.Response:
    lib, owner = _lib(request), _auth(request, "manage_players")["owner"]
    return _json(
        lib.player_fields(lib.owned_player(owner, request.match_info["id"]), _fields(request))
    )


@routes.post(f"/player/{_ID}{_SLASH}")
async def write_player(request: web.Request) -> web.Response:
    form = await _form(request)
    lib, owner = _lib(request), _auth(request, "manage_players")["owner"]
    player = lib.update_player(owner, request.match_info["id"], form)
    return _json(lib.player_fields(player, _fields(request)))


@routes.delete(f"/player/{_ID}{_SLASH}")
async def delete_player(request: web.Request) -> web.Response:
    _lib(request).delete_player(_auth(request, "manage_players")["owner"], request.match_info["id"])
    return _json({})


# --- the account's webhook -----------------------------------------------------------------


@routes.post(f"/me{_SLASH}")
async def write_me(request: web.Request) -> web.Response:
    """``webhook_url``/``webhook_events``/``webhook_secret`` on the user object (scope
    ``manage_videos``, as the platform documents)."""
    form = await _form(request)
    backend, owner = _b(request), _auth(request, "manage_videos")["owner"]
    write_webhook(backend, owner, form)
    return _json(backend.me(owner, _fields(request)))
