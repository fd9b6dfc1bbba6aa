"""The legacy API as a ``Dialect`` (``_dialects.dialect``): form-encoded POSTs to ``/me/...``,
``/video/<id>`` and the like, ``fields=`` on every answer, paging on ``has_more``;
requests built by the sans-io ``_protocol``, sent through the client's requester."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .. import _protocol as wire
from .. import _validate as check
from .._auth.providers import TokenProvider
from .._convert import structure, webhook_of
from .._errors import InvalidArgumentError, UnexpectedResponseError, UsageError
from .._models import Player, Playlist, UploadSession, User, Video, Webhook
from .._observe import VIDEO_ID, describe
from .._protocol import _legacy as legacy
from .._protocol._legacy import DEFAULT_BASE_URL, form_of, metadata_form, player_form
from .._resources.fields import (
    LIVE_FIELDS,
    PLAYER_FIELDS,
    PLAYER_SCOPE,
    PLAYLIST_FIELDS,
    PLAYLIST_SCOPE,
    VIDEO_FIELDS,
    WEBHOOK_FIELDS,
)
from .._resources.pages import iter_pages
from .._resources.video_metadata import extra_form
from .operations import Operation, Refusals

if TYPE_CHECKING:
    from .._requester import Requester
    from .._resources.video_metadata import VideoMetadata
    from .dialect import ReadVideo

__all__ = ["DEFAULT_BASE_URL", "Legacy", "post_video"]

T = TypeVar("T")


async def _send(
    requester: Requester,
    method: str,
    path: str,
    cls: type[T],
    *,
    fields: Iterable[str] | None = None,
    form: Iterable[tuple[str, str]] | None = None,
    idempotent: bool = True,
    scope: str | None = None,
) -> T:
    query = [] if fields is None else [("fields", check.fields_value(fields))]
    request = requester.api(
        method, path, query=query, form=form, scope=scope, idempotent=idempotent
    )
    return structure(await requester.call(request), cls, what=request.what)


async def post_video(
    requester: Requester,
    video_id: str | Video,
    form: list[tuple[str, str]],
    returning: Iterable[str],
    scope: str | None = None,
) -> Video:
    """``POST /video/<id>`` with ``form``; the video with the ``returning`` fields."""
    video_id = check.video_id(video_id)
    describe(requester, VIDEO_ID, video_id)
    request = legacy.post_video(requester.base_url, video_id, form, returning, scope)
    return structure({"id": video_id, **await requester.call(request)}, Video, what=request.what)


class Legacy(Refusals):
    """The legacy Data API (``Client(api="legacy")``, the default)."""

    name = "legacy"
    default_base_url = DEFAULT_BASE_URL
    refused: Mapping[Operation, str] = {
        Operation.RAW_PATCH: "the legacy API updates with POST: use post()",
    }

    def __init__(self, profile_id: str | None = None) -> None:
        if profile_id is not None:
            raise UsageError("profile_id= goes with api='v2' (the legacy API has no profiles)")
        self.decode = wire.decode_api_response
        """An answer's JSON object, or the typed error (read when the client is built)."""

    # --- the client and the requester ----------------------------------------------------

    def token_scopes(self, scopes: Iterable[str]) -> Iterable[str]:
        return scopes

    def check_auth(self, auth: TokenProvider) -> None:
        return None

    def token_url(self, base_url: str) -> str:
        return f"{base_url}/oauth/token"

    # --- videos --------------------------------------------------------------------------

    async def ready_to_create(self, requester: Requester, metadata: VideoMetadata) -> None:
        return None  # the metadata was checked as it was built

    async def create_video_request(
        self,
        requester: Requester,
        url: str,
        metadata: VideoMetadata,
        extra: Mapping[str, str] | None,
        dedupe_tag: str | None,
        password: str | None,
    ) -> wire.Request:
        form = metadata_form(metadata.values)
        # extra may not name a field the call sets itself: sent twice, the server picks
        sets = [("url", url), ("password", ""), *form, *([("tags", "")] if dedupe_tag else [])]
        pairs = [("url", url), *form, *extra_form(extra, sets)]
        if password is not None:
            pairs.append(("password", check.password(password) or ""))
        if dedupe_tag is not None:
            pairs = legacy.with_tag(pairs, dedupe_tag)
        return legacy.create_video(requester.base_url, pairs)

    def video_from(self, data: Mapping[str, Any]) -> Mapping[str, Any]:
        return data

    def video_request(
        self, requester: Requester, video_id: str, names: str, scope: str | None
    ) -> wire.Request:
        return legacy.get_video(requester.base_url, video_id, names, scope)

    def delete_video_request(self, requester: Requester, video_id: str) -> wire.Request:
        return requester.api("DELETE", f"/video/{video_id}", scope="manage_videos")

    async def videos(
        self, requester: Requester, fields: Sequence[str], page_size: int
    ) -> AsyncIterator[Video]:
        names = ",".join(fields if "id" in fields else ["id", *fields])  # as get has it

        def page_request(page: int) -> wire.Request:
            query = [("fields", names), ("sort", "old"), ("page", str(page))]
            return requester.api("GET", "/me/videos", query=[*query, ("limit", str(page_size))])

        # The shared page loop: an empty page ends it; a repeated page is an error.
        async for request, item in iter_pages(requester.call, page_request):
            yield structure(item, Video, what=request.what)

    async def videos_by_tag(self, requester: Requester, tag: str) -> list[Video]:
        request = requester.api(
            "GET",
            "/me/videos",
            query=[
                ("tags", tag),
                ("fields", ",".join(VIDEO_FIELDS)),
                ("sort", "old"),
                ("limit", "100"),
            ],
        )
        data = await requester.call(request)
        items = data.get("list")
        return [
            structure(item, Video, what=request.what)
            for item in (items if isinstance(items, list) else [])
        ]

    async def update_video(
        self,
        requester: Requester,
        video_id: str | Video,
        metadata: VideoMetadata,
        extra: Mapping[str, str] | None,
        returning: Iterable[str],
        read: ReadVideo,
    ) -> Video:
        form = metadata_form(metadata.values)
        form += extra_form(extra, form)
        if any(key == "password" for key, _ in form):
            raise InvalidArgumentError("extra", "use set_password() for the password")
        if not form:
            raise InvalidArgumentError("update_video", "give at least one field to write")
        return await post_video(requester, video_id, form, returning)

    async def set_password(
        self, requester: Requester, video_id: str | Video, password: str | None, read: ReadVideo
    ) -> Video:
        return await post_video(
            requester, video_id, [("password", password or "")], ("id", "password_protected")
        )

    async def set_thumbnail(self, requester: Requester, video_id: str, url: str) -> Video:
        """``thumbnail_url`` written on the video."""
        return await post_video(
            requester, video_id, [("thumbnail_url", url)], ("id", "thumbnail_url"), "manage_videos"
        )

    # --- live streams --------------------------------------------------------------------

    async def create_live_stream(
        self, requester: Requester, metadata: VideoMetadata, times: Sequence[tuple[str, int]]
    ) -> Video:
        pairs = [
            *metadata_form(metadata.values),
            ("mode", "live"),
            *((name, str(value)) for name, value in times),
        ]
        request = legacy.create_video(
            requester.base_url, pairs, fields=LIVE_FIELDS, scope="manage_videos"
        )
        video = structure(await requester.call(request), Video, what=request.what)
        describe(requester, VIDEO_ID, video.id)
        return video

    async def make_live(self, requester: Requester, video_id: str | Video) -> Video:
        """A video turned live (``mode=live``)."""
        return await post_video(
            requester, video_id, [("mode", "live")], LIVE_FIELDS, "manage_videos"
        )

    async def get_live_stream(self, requester: Requester, video_id: str | Video) -> Video:
        vid = check.video_id(video_id)
        describe(requester, VIDEO_ID, vid)
        names = check.fields_value(LIVE_FIELDS)
        request = legacy.get_video(requester.base_url, vid, names, "manage_videos")
        return structure({"id": vid, **await requester.call(request)}, Video, what=request.what)

    # --- uploads, the account ------------------------------------------------------------

    async def upload_session(self, requester: Requester) -> UploadSession:
        request = requester.api("GET", "/file/upload", scope="manage_videos")
        return structure(await requester.call(request), UploadSession, what=request.what)

    async def me(self, requester: Requester, names: str) -> User:
        request = requester.api("GET", "/me", query=[("fields", names)])
        return structure(await requester.call(request), User, what=request.what)

    async def set_webhook(
        self, requester: Requester, url: str, events: Sequence[str], secret: str | None
    ) -> Webhook:
        form = [("webhook_url", url), ("webhook_events", wire.form_value(list(events)))]
        if secret is not None:
            form.append(("webhook_secret", check.text(secret, "secret", blank=False)))
        found = webhook_of(await self._write_me(requester, form), "POST /me")
        if found is None:
            raise UnexpectedResponseError("POST /me: the webhook was not kept", status=200)
        return found

    async def get_webhook(self, requester: Requester) -> Webhook | None:
        request = requester.api("GET", "/me", query=[("fields", WEBHOOK_FIELDS)])
        return webhook_of(await requester.call(request), request.what)

    async def remove_webhook(self, requester: Requester) -> None:
        await self._write_me(requester, [("webhook_url", wire.form_value(None))])

    @staticmethod
    async def _write_me(requester: Requester, form: list[tuple[str, str]]) -> Mapping[str, Any]:
        request = requester.api(
            "POST", "/me", query=[("fields", WEBHOOK_FIELDS)], form=form, scope="manage_videos"
        )
        return await requester.call(request)

    # --- playlists, players, raw listings ------------------------------------------------

    async def create_playlist(self, requester: Requester, values: Mapping[str, object]) -> Playlist:
        return await _send(
            requester,
            "POST",
            "/me/playlists",
            Playlist,
            fields=PLAYLIST_FIELDS,
            form=form_of(values, "playlist"),
            idempotent=False,
            scope=PLAYLIST_SCOPE,
        )

    async def get_playlist(
        self, requester: Requester, playlist_id: str, fields: Iterable[str]
    ) -> Playlist:
        return await _send(requester, "GET", f"/playlist/{playlist_id}", Playlist, fields=fields)

    async def update_playlist(
        self, requester: Requester, playlist_id: str, values: Mapping[str, object]
    ) -> Playlist:
        return await _send(
            requester,
            "POST",
            f"/playlist/{playlist_id}",
            Playlist,
            fields=PLAYLIST_FIELDS,
            form=form_of(values, "fields"),
            scope=PLAYLIST_SCOPE,
        )

    async def delete_playlist(self, requester: Requester, playlist_id: str) -> None:
        await requester.call(
            requester.api("DELETE", f"/playlist/{playlist_id}", scope=PLAYLIST_SCOPE)
        )

    async def add_playlist_video(
        self, requester: Requester, playlist_id: str, video_id: str
    ) -> None:
        path = f"/playlist/{playlist_id}/videos/{video_id}"
        await requester.call(requester.api("POST", path, form=[], scope=PLAYLIST_SCOPE))

    async def create_player(
        self, requester: Requester, label: str, settings: Mapping[str, str | bool | int]
    ) -> Player:
        return await _send(
            requester,
            "POST",
            "/me/players",
            Player,
            fields=PLAYER_FIELDS,
            form=player_form({"label": label, **settings}),
            idempotent=False,
            scope=PLAYER_SCOPE,
        )

    async def get_player(
        self, requester: Requester, player_id: str, fields: Iterable[str]
    ) -> Player:
        return await _send(
            requester, "GET", f"/player/{player_id}", Player, fields=fields, scope=PLAYER_SCOPE
        )

    async def update_player(
        self, requester: Requester, player_id: str, settings: Mapping[str, str | bool | int]
    ) -> Player:
        return await _send(
            requester,
            "POST",
            f"/player/{player_id}",
            Player,
            fields=PLAYER_FIELDS,
            form=player_form(settings),
            scope=PLAYER_SCOPE,
        )

    async def delete_player(self, requester: Requester, player_id: str) -> None:
        await requester.call(requester.api("DELETE", f"/player/{player_id}", scope=PLAYER_SCOPE))

    raw_request = staticmethod(legacy.raw_request)
    """A raw call's request (``client.get/post/delete``): ``data`` form-encoded."""

    async def raw_pages(
        self,
        requester: Requester,
        path: str,
        params: Mapping[str, object],
        fields: Iterable[str] | str | None,
        limit: int,
        max_items: int | None,
    ) -> AsyncIterator[dict[str, Any]]:
        self.raw_request(requester.base_url, "GET", path, params=params, fields=fields)  # checked

        def page_request(page: int) -> wire.Request:
            query = {**params, "page": page, "limit": limit}
            return self.raw_request(requester.base_url, "GET", path, params=query, fields=fields)

        async for _, item in iter_pages(requester.call, page_request, max_items=max_items):
            yield dict(item)
