"""The operations an API dialect may not offer, as one enum: the keys of every
dialect's ``refused`` table, of ``UnsupportedOperationError``'s refusals and of
``Client.offers``. A member's value is the operation as users call it (flat,
``"upload_subtitle"``, or namespaced, ``"playlists.mine"``, where no flat alias has
it), which is what a refusal names. ``Refusals`` is what a dialect mixes in to refuse
them itself."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from .._errors import UnsupportedOperationError

__all__ = ["Operation", "Refusals"]


class Operation(StrEnum):
    """An operation one dialect offers and another may not."""

    UPLOAD_SUBTITLE = "upload_subtitle"
    CREATE_SUBTITLE = "create_subtitle"
    LIST_SUBTITLES = "list_subtitles"
    DELETE_SUBTITLE = "delete_subtitle"
    SET_THUMBNAIL = "set_thumbnail"
    MAKE_LIVE = "make_live"
    GET_AUTH_INFO = "get_auth_info"
    CATEGORIES = "categories"
    PLAYLISTS_REMOVE_VIDEO = "playlists.remove_video"
    PLAYLISTS_MINE = "playlists.mine"
    PLAYLISTS_VIDEOS = "playlists.videos"
    PLAYERS_MINE = "players.mine"
    RAW_PATCH = "raw.patch"

    @classmethod
    def named(cls, name: str) -> Operation | None:
        """The operation called ``name``, or ``None`` for one every dialect offers."""
        return cls._value2member_map_.get(name)  # type: ignore[return-value]


class Refusals:
    """A dialect's own refusal of the operations it lacks (its ``refused`` table)."""

    name: str
    refused: Mapping[Operation, str]

    def refuse(self, operation: Operation) -> None:
        """``UnsupportedOperationError`` when this dialect does not offer ``operation``
        (before anything is sent)."""
        if operation in self.refused:
            raise self.refusal(operation)

    def refusal(self, operation: Operation) -> UnsupportedOperationError:
        """The error refusing ``operation``, one this dialect does not offer."""
        return UnsupportedOperationError(operation.value, self.name, self.refused[operation])

    def offers(self, operation: Operation) -> bool:
        """Whether this dialect offers ``operation``."""
        return operation not in self.refused
