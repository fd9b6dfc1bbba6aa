"""``client.players``: the player configurations whose ids are the Player IDs of the
current embeds (``vidapi_async.embed.player_iframe_url(player, video)``). Everything
about players needs scope ``manage_players``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Final

from . import _validate as check
from ._convert import structure
from ._errors import InvalidArgumentError
from ._models import Player
from ._observe import operation
from ._protocol import _v2 as v2
from ._service import Service, form_of

__all__ = ["PLAYER_FIELDS", "Players"]

PLAYER_FIELDS: Final = (
    "id",
    "label",
    "owner",
    "autostart",
    "aspect_ratio",
    "color",
    "enable_sharing",
    "enable_autonext",
    "enable_ads",
    "mute",
)
_SCOPE: Final = "manage_players"


def _id(value: object) -> str:
    return check.video_id(value.id if isinstance(value, Player) else value, "player_id")


def _settings(settings: Mapping[str, object]) -> list[tuple[str, str]]:
    for name in settings:
        if not check.is_field_name(name):
            raise InvalidArgumentError(name, "not a setting name")
    return form_of(settings, "settings")


class Players(Service):
    """The caller's players. Settings travel as given, in the platform's form
    conventions (``autostart="off"``, ``mute=True``, ``color="#ff0000"``); the server
    judges which settings exist. Ids may be text or the ``Player`` itself."""

    @operation("players.create")
    async def create(self, /, *, label: str, **settings: str | bool | int) -> Player:
        """``POST /me/players``: a new player; its ``id`` is the Player ID to embed."""
        form = _settings({"label": check.text(label, "label", blank=False), **settings})
        if self._requester.v2:  # v2 creates with a name; other settings by a PATCH
            profile_id = await self._requester.profile_id()
            request = v2.create_player(self._requester.base_url, profile_id, label)
            made = self._player(await self._requester.call(request), request.what)
            return await self.update(made, **settings) if settings else made
        return await self._send(
            "POST",
            "/me/players",
            Player,
            fields=PLAYER_FIELDS,
            form=form,
            idempotent=False,
            scope=_SCOPE,
        )

    @operation("players.get")
    async def get(self, player_id: str | Player, fields: Iterable[str] = PLAYER_FIELDS) -> Player:
        """``GET /player/<id>``: a player's settings (v2: ``GET /players/{id}``, whole)."""
        if self._requester.v2:
            request = v2.player_request(self._requester.base_url, "GET", _id(player_id))
            return self._player(await self._requester.call(request), request.what)
        return await self._send(
            "GET", f"/player/{_id(player_id)}", Player, fields=fields, scope=_SCOPE
        )

    @operation("players.update")
    async def update(self, /, player_id: str | Player, **settings: str | bool | int) -> Player:
        """``POST /player/<id>``: change settings (``label`` among them)."""
        if not settings:
            raise InvalidArgumentError("settings", "give at least one setting to write")
        if "label" in settings:
            check.text(settings["label"], "label", blank=False)
        if self._requester.v2:  # PATCH answers 204 (settings in v2's names; label: name)
            _settings(settings)
            pid = _id(player_id)
            request = v2.player_request(self._requester.base_url, "PATCH", pid, settings)
            await self._requester.call(request)
            return await self.get(pid)
        return await self._send(
            "POST",
            f"/player/{_id(player_id)}",
            Player,
            fields=PLAYER_FIELDS,
            form=_settings(settings),
            scope=_SCOPE,
        )

    @operation("players.delete")
    async def delete(self, player_id: str | Player) -> None:
        """``DELETE /player/<id>``: embeds using its id stop working."""
        if self._requester.v2:
            request = v2.player_request(self._requester.base_url, "DELETE", _id(player_id))
        else:
            request = self._requester.api("DELETE", f"/player/{_id(player_id)}", scope=_SCOPE)
        await self._requester.call(request)

    def mine(self, fields: Iterable[str] = PLAYER_FIELDS) -> AsyncIterator[Player]:
        """``GET /me/players``, page by page: the caller's players, oldest first."""
        self._requester.refuse("players.mine")
        return self._list("/me/players", Player, fields, scope=_SCOPE)

    @staticmethod
    def _player(data: Mapping[str, Any], what: str) -> Player:
        return structure(v2.player_from(data), Player, what=what)
