"""The platform's rules for playlists and players (Player IDs of the embeds), apart from
HTTP, beside ``_backend``'s for videos: ownership (another account's object is a 403,
a missing one a 404), writable fields, defaults, and who may read what.

Playlists hold video ids in order; a video deleted later simply drops out of its
playlists' listings. A private playlist is readable by its owner only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import attrs

from ._backend import Backend, _forbidden, _invalid, _not_found, _require, parse_bool, select
from ._state import new_id

__all__ = [
    "PLAYER_DEFAULT_FIELDS",
    "PLAYER_FIELDS",
    "PLAYLIST_DEFAULT_FIELDS",
    "PLAYLIST_FIELDS",
    "Library",
]

PLAYLIST_FIELDS = frozenset(
    "id name description private owner created_time videos_total item_type".split()
)
PLAYLIST_DEFAULT_FIELDS = ("id", "name", "owner")
PLAYLIST_WRITABLE = frozenset({"name", "description", "private"})

PLAYER_SETTINGS = {
    # name -> kind: what a player's settings are and how their form values read.
    "label": "text",
    "autostart": ("on", "off", "firstTimeViewable"),
    "aspect_ratio": ("16:9", "4:3", "1:1", "3:4", "9:16", "inherit"),
    "color": "color",
    "enable_sharing": "bool",
    "enable_autonext": "bool",
    "enable_ads": "bool",
    "mute": "bool",
}
PLAYER_FIELDS = frozenset({"id", "owner", "created_time", "item_type", *PLAYER_SETTINGS})
PLAYER_DEFAULT_FIELDS = ("id", "label")


@attrs.define
class Library:
    """Playlists and players of the emulated platform, kept in the backend's store."""

    backend: Backend

    # --- playlists -------------------------------------------------------------------------

    def _playlist(self, playlist_id: str) -> dict[str, Any]:
        playlist = self.backend.store.get("playlist", playlist_id)
        if playlist is None:
            raise _not_found("playlist", playlist_id)
        return playlist

    def owned_playlist(self, owner: str, playlist_id: str) -> dict[str, Any]:
        playlist = self._playlist(playlist_id)
        if playlist["owner"] != owner:
            raise _forbidden("You are not the owner of this playlist.")
        return playlist

    def visible_playlist(self, viewer: str | None, playlist_id: str) -> dict[str, Any]:
        playlist = self._playlist(playlist_id)
        if playlist["owner"] != viewer and playlist.get("private"):
            raise _forbidden("This playlist is private.", reason="private")
        return playlist

    def create_playlist(self, owner: str, form: Mapping[str, str]) -> dict[str, Any]:
        playlist: dict[str, Any] = {
            "id": new_id(),
            "owner": owner,
            "name": _require(form, "name"),
            "description": "",
            "private": False,
            "created_time": int(time.time()),
            "item_type": "playlist",
            "videos": [],
        }
        self._write_playlist(playlist, form)
        while self.backend.store.get("playlist", playlist["id"]) is not None:
            playlist["id"] = new_id()
        return self.backend.store.put("playlist", playlist["id"], playlist)

    def update_playlist(
        self, owner: str, playlist_id: str, form: Mapping[str, str]
    ) -> dict[str, Any]:
        playlist = self.owned_playlist(owner, playlist_id)
        self._write_playlist(playlist, form)
        return self.backend.store.put("playlist", playlist["id"], playlist)

    def _write_playlist(self, playlist: dict[str, Any], form: Mapping[str, str]) -> None:
        for name, value in form.items():
            if name not in PLAYLIST_WRITABLE:
                raise _invalid(name, f"`{name[:40]}' is not a writable field")
            if name == "private":
                playlist["private"] = parse_bool(name, value)
            elif name == "name":
                if not value.strip():
                    raise _invalid(name, "`name' must not be empty")
                playlist["name"] = value
            else:
                playlist[name] = value

    def delete_playlist(self, owner: str, playlist_id: str) -> None:
        self.backend.store.delete("playlist", self.owned_playlist(owner, playlist_id)["id"])

    def playlist_fields(self, playlist: Mapping[str, Any], fields: str | None) -> dict[str, Any]:
        readable = {**playlist, "videos_total": len(self._present(playlist))}
        return select(readable, fields, PLAYLIST_DEFAULT_FIELDS, PLAYLIST_FIELDS)

    def my_playlists(self, owner: str) -> list[dict[str, Any]]:
        return list(self.backend.store.owned("playlist", owner))

    def _present(self, playlist: Mapping[str, Any]) -> list[str]:
        store = self.backend.store
        return [v for v in playlist["videos"] if store.get("video", v) is not None]

    def playlist_videos(self, viewer: str | None, playlist_id: str) -> list[dict[str, Any]]:
        """The playlist's videos that ``viewer`` may read, in the playlist's order."""
        playlist = self.visible_playlist(viewer, playlist_id)
        out = []
        for video_id in self._present(playlist):
            video = self.backend.video(video_id)
            if video["owner"] == viewer or (video.get("published") and not video.get("private")):
                out.append(video)
        return out

    def add_video(self, owner: str, playlist_id: str, video_id: str) -> None:
        playlist = self.owned_playlist(owner, playlist_id)
        self.backend.visible_video(owner, video_id)  # one's own, or a public one
        if video_id not in playlist["videos"]:
            playlist["videos"].append(video_id)
            self.backend.store.put("playlist", playlist["id"], playlist)

    def remove_video(self, owner: str, playlist_id: str, video_id: str) -> None:
        playlist = self.owned_playlist(owner, playlist_id)
        if video_id not in playlist["videos"]:
            raise _not_found("video", video_id)
        playlist["videos"].remove(video_id)
        self.backend.store.put("playlist", playlist["id"], playlist)

    # --- players ---------------------------------------------------------------------------

    def owned_player(self, owner: str, player_id: str) -> dict[str, Any]:
        player = self.backend.store.get("player", player_id)
        if player is None:
            raise _not_found("player", player_id)
        if player["owner"] != owner:
            raise _forbidden("You are not the owner of this player.")
        return player

    def create_player(self, owner: str, form: Mapping[str, str]) -> dict[str, Any]:
        _require(form, "label")
        player: dict[str, Any] = {
            "id": new_id(),
            "owner": owner,
            "created_time": int(time.time()),
            "item_type": "player",
            "autostart": "firstTimeViewable",
            "aspect_ratio": "16:9",
            "color": "#00aaff",
            "enable_sharing": True,
            "enable_autonext": True,
            "enable_ads": True,
            "mute": False,
        }
        self._write_player(player, form)
        while self.backend.store.get("player", player["id"]) is not None:
            player["id"] = new_id()
        return self.backend.store.put("player", player["id"], player)

    def update_player(self, owner: str, player_id: str, form: Mapping[str, str]) -> dict[str, Any]:
        player = self.owned_player(owner, player_id)
        self._write_player(player, form)
        return self.backend.store.put("player", player["id"], player)

    def _write_player(self, player: dict[str, Any], form: Mapping[str, str]) -> None:
        for name, value in form.items():
            kind = PLAYER_SETTINGS.get(name)
            if kind is None:
                raise _invalid(name, f"`{name[:40]}' is not a player setting")
            if kind == "bool":
                player[name] = parse_bool(name, value)
            elif kind == "color":
                digits = value.removeprefix("#")
                if len(digits) != 6 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise _invalid(name, "`color' must be #RRGGBB")
                player[name] = "#" + digits.lower()
            elif isinstance(kind, tuple):
                if value not in kind:
                    raise _invalid(name, f"`{name}' must be one of {', '.join(kind)}")
                player[name] = value
            else:
                if not value.strip():
                    raise _invalid(name, f"`{name}' must not be empty")
                player[name] = value

    def delete_player(self, owner: str, player_id: str) -> None:
        self.backend.store.delete("player", self.owned_player(owner, player_id)["id"])

    def my_players(self, owner: str) -> list[dict[str, Any]]:
        return list(self.backend.store.owned("player", owner))

    @staticmethod
    def player_fields(player: Mapping[str, Any], fields: str | None) -> dict[str, Any]:
        return select(player, fields, PLAYER_DEFAULT_FIELDS, PLAYER_FIELDS)
