"""The API dialect a client speaks: one object, chosen when the ``Client`` is built
(``_client._dialect_for``), that every namespace holds and calls where the two APIs
differ, instead of asking which one it speaks. ``Dialect`` says what a dialect does;
the legacy API (``_dialects.legacy.Legacy``) and API v2 (``_dialects.v2.V2``) are its
two implementations. A third dialect would be a module of its own, and one line in
the client's table. An operation a dialect lacks is refused by the dialect itself
(``refuse``, an ``_dialects.operations.Operation``), typed.

A dialect builds its requests with its sans-io module (``_protocol._legacy`` for the
legacy API, ``_protocol._v2`` for v2), pure functions, and sends them through the
requester it is given; what is async beyond one request (v2's profile lookup, its
read after a PATCH answered 204) is a method taking that requester. A video's
metadata reaches it checked once (``VideoMetadata``), and each dialect encodes it.
The namespaces keep what both dialects share: the checks of the arguments, the
tracing, the models returned.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from .._auth.providers import TokenProvider
    from .._models import Player, Playlist, UploadSession, User, Video, Webhook
    from .._protocol import Request
    from .._requester import Requester
    from .._resources.video_metadata import VideoMetadata
    from .operations import Operation

__all__ = ["DIALECTS", "Dialect", "ReadVideo"]

DIALECTS: Final = ("legacy", "v2")
"""The API dialects a client speaks (``Client(api=...)``), by name; the client maps
each to its implementation (``_dialects.legacy.Legacy``, ``_dialects.v2.V2``)."""

ReadVideo = Callable[[str, Iterable[str]], Awaitable["Video"]]
"""``client.videos.get``, for the dialects that read a video after writing it."""


class Dialect(Protocol):
    """What the namespaces ask of an API dialect. Every method that sends takes the
    client's requester (token, retries, limits, decoding) and returns the same models
    in both dialects, in the legacy API's names."""

    name: str
    """``"legacy"`` or ``"v2"`` (``Client.api``, ``UnsupportedOperationError.dialect``)."""
    default_base_url: str
    """The API's root when ``base_url`` is not given."""
    refused: Mapping[Operation, str]
    """The operations this dialect does not offer, and why."""

    def refuse(self, operation: Operation) -> None:
        """``UnsupportedOperationError`` when this dialect does not offer ``operation``."""
        ...

    def offers(self, operation: Operation) -> bool:
        """Whether this dialect offers ``operation``."""
        ...

    # --- the client and the requester ----------------------------------------------------

    def token_scopes(self, scopes: Iterable[str]) -> Iterable[str]:
        """A static token's scopes (``Client(access_token=, scopes=)``) as checked."""
        ...

    def check_auth(self, auth: TokenProvider) -> None:
        """Refuse, before any request, a token provider this dialect cannot use."""
        ...

    def token_url(self, base_url: str) -> str:
        """The token endpoint for an API root, when the provider names none."""
        ...

    def decode(
        self,
        request: Request,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        *,
        secrets: Iterable[str | None] = (),
    ) -> Mapping[str, Any]:
        """An answer's JSON object, or the typed error for this dialect's error shape."""
        ...

    # --- videos --------------------------------------------------------------------------

    async def ready_to_create(self, requester: Requester, metadata: VideoMetadata) -> None:
        """Before an upload's first request: refuse the create's metadata the dialect
        cannot carry, and learn what the create will need (v2: the profile)."""
        ...

    async def create_video_request(
        self,
        requester: Requester,
        url: str,
        metadata: VideoMetadata,
        extra: Mapping[str, str] | None,
        dedupe_tag: str | None,
        password: str | None,
    ) -> Request:
        """The create of a video from an uploaded file's ``url``, with its checked
        ``metadata`` encoded in this dialect's way."""
        ...

    def video_from(self, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """A video answer as the mapping the ``Video`` model is filled from."""
        ...

    def video_request(
        self, requester: Requester, video_id: str, names: str, scope: str | None
    ) -> Request:
        """The read of a video's fields (``names``: legacy names, comma-joined)."""
        ...

    def delete_video_request(self, requester: Requester, video_id: str) -> Request:
        """The delete of a video."""
        ...

    def videos(
        self, requester: Requester, fields: Sequence[str], page_size: int
    ) -> AsyncIterator[Video]:
        """The caller's videos, oldest first, a page at a time."""
        ...

    async def videos_by_tag(self, requester: Requester, tag: str) -> list[Video]:
        """The caller's videos carrying ``tag``, oldest first."""
        ...

    async def update_video(
        self,
        requester: Requester,
        video_id: str | Video,
        metadata: VideoMetadata,
        extra: Mapping[str, str] | None,
        returning: Iterable[str],
        read: ReadVideo,
    ) -> Video:
        """Write the metadata given, and only that; the video with ``returning``."""
        ...

    async def set_password(
        self, requester: Requester, video_id: str | Video, password: str | None, read: ReadVideo
    ) -> Video:
        """Protect a video (``None``: remove its password); the video with
        ``password_protected``."""
        ...

    async def set_thumbnail(self, requester: Requester, video_id: str, url: str) -> Video:
        """Write ``url`` as the video's thumbnail (refused where not offered)."""
        ...

    # --- live streams --------------------------------------------------------------------

    async def create_live_stream(
        self, requester: Requester, metadata: VideoMetadata, times: Sequence[tuple[str, int]]
    ) -> Video:
        """A new live stream: its checked ``metadata``, ``times`` its
        ``start_time``/``end_time`` given."""
        ...

    async def make_live(self, requester: Requester, video_id: str | Video) -> Video:
        """A video turned into a live stream (refused where not offered)."""
        ...

    async def get_live_stream(self, requester: Requester, video_id: str | Video) -> Video:
        """A live stream's live fields."""
        ...

    # --- uploads, the account ------------------------------------------------------------

    async def upload_session(self, requester: Requester) -> UploadSession:
        """A one-time address to upload one file to."""
        ...

    async def me(self, requester: Requester, names: str) -> User:
        """The account the token belongs to."""
        ...

    async def set_webhook(
        self, requester: Requester, url: str, events: Sequence[str], secret: str | None
    ) -> Webhook:
        """Send the account's events to ``url``; the webhook as kept."""
        ...

    async def get_webhook(self, requester: Requester) -> Webhook | None:
        """The account's webhook, or ``None``."""
        ...

    async def remove_webhook(self, requester: Requester) -> None:
        """Stop the account's events."""
        ...

    # --- playlists, players, raw listings ------------------------------------------------

    async def create_playlist(self, requester: Requester, values: Mapping[str, object]) -> Playlist:
        """A new playlist (``values``: ``name``, ``private``, maybe ``description``)."""
        ...

    async def get_playlist(
        self, requester: Requester, playlist_id: str, fields: Iterable[str]
    ) -> Playlist:
        """A playlist."""
        ...

    async def update_playlist(
        self, requester: Requester, playlist_id: str, values: Mapping[str, object]
    ) -> Playlist:
        """Change what ``values`` holds (checked, at least one)."""
        ...

    async def delete_playlist(self, requester: Requester, playlist_id: str) -> None:
        """Delete a playlist."""
        ...

    async def add_playlist_video(
        self, requester: Requester, playlist_id: str, video_id: str
    ) -> None:
        """Append a video to a playlist."""
        ...

    async def create_player(
        self, requester: Requester, label: str, settings: Mapping[str, str | bool | int]
    ) -> Player:
        """A new player labelled ``label`` with ``settings``."""
        ...

    async def get_player(
        self, requester: Requester, player_id: str, fields: Iterable[str]
    ) -> Player:
        """A player's settings."""
        ...

    async def update_player(
        self, requester: Requester, player_id: str, settings: Mapping[str, str | bool | int]
    ) -> Player:
        """Change a player's settings (checked, at least one)."""
        ...

    async def delete_player(self, requester: Requester, player_id: str) -> None:
        """Delete a player."""
        ...

    def raw_request(
        self,
        base_url: str,
        method: str,
        path: object,
        *,
        params: Mapping[str, object] | None = None,
        data: Mapping[str, object] | None = None,
        fields: Iterable[str] | str | None = None,
        idempotent: bool = True,
    ) -> Request:
        """A raw call's request in this dialect, every argument checked."""
        ...

    def raw_pages(
        self,
        requester: Requester,
        path: str,
        params: Mapping[str, object],
        fields: Iterable[str] | str | None,
        limit: int,
        max_items: int | None,
    ) -> AsyncIterator[dict[str, Any]]:
        """A list endpoint's items, page by page, in this dialect's paging."""
        ...
