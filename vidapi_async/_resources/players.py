"""``client.players``: the player configurations whose ids are the Player IDs of the
current embeds (``vidapi_async.embed.player_iframe_url(player, video)``). Everything
about players needs scope ``manage_players``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from .. import _validate as check
from .._dialects.operations import Operation
from .._errors import InvalidArgumentError
from .._models import Player
from .._observe import operation
from .._protocol._legacy import player_form
from .fields import PLAYER_FIELDS, PLAYER_SCOPE
from .service import Service

__all__ = ["Players"]


def _id(value: object) -> str:
    return check.video_id(value.id if isinstance(value, Player) else value, "player_id")


class Players(Service):
    """The caller's players. Settings travel as given, in the platform's form
    conventions (``autostart="off"``, ``mute=True``, ``color="#ff0000"``); the server
    judges which settings exist. Ids may be text or the ``Player`` itself."""

    @operation("players.create")
    async def create(self, /, *, label: str, **settings: str | bool | int) -> Player:
        """``POST /me/players``: a new player; its ``id`` is the Player ID to embed."""
        label = check.text(label, "label", blank=False)
        player_form({"label": label, **settings})
        return await self._dialect.create_player(self._requester, label, settings)

    @operation("players.get")
    async def get(self, player_id: str | Player, fields: Iterable[str] = PLAYER_FIELDS) -> Player:
        """``GET /player/<id>``: a player's settings (v2: ``GET /players/{id}``, whole)."""
        return await self._dialect.get_player(self._requester, _id(player_id), fields)

    @operation("players.update")
    async def update(self, /, player_id: str | Player, **settings: str | bool | int) -> Player:
        """``POST /player/<id>``: change settings (``label`` among them)."""
        if not settings:
            raise InvalidArgumentError("settings", "give at least one setting to write")
        if "label" in settings:
            check.text(settings["label"], "label", blank=False)
        return await self._dialect.update_player(self._requester, _id(player_id), settings)

    @operation("players.delete")
    async def delete(self, player_id: str | Player) -> None:
        """``DELETE /player/<id>``: embeds using its id stop working."""
        await self._dialect.delete_player(self._requester, _id(player_id))

    def mine(self, fields: Iterable[str] = PLAYER_FIELDS) -> AsyncIterator[Player]:
        """``GET /me/players``, page by page: the caller's players, oldest first."""
        self._dialect.refuse(Operation.PLAYERS_MINE)
        return self._list("/me/players", Player, fields, scope=PLAYER_SCOPE)
