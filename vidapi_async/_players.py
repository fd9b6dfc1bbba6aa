"""``client.players``: the player configurations whose ids are the Player IDs of the
current embeds (``vidapi_async.embed.player_iframe_url(player, video)``). Everything
about players needs scope ``manage_players``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Final

from . import _validate as check
from ._errors import InvalidArgumentError
from ._models import Player
from ._observe import operation
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
        """``GET /player/<id>``: a player's settings."""
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
        request = self._requester.api("DELETE", f"/player/{_id(player_id)}", scope=_SCOPE)
        await self._requester.call(request)

    def mine(self, fields: Iterable[str] = PLAYER_FIELDS) -> AsyncIterator[Player]:
        """``GET /me/players``, page by page: the caller's players, oldest first."""
        return self._list("/me/players", Player, fields, scope=_SCOPE)
