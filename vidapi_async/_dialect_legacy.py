"""The legacy API as a ``Dialect`` (``_dialect``): form-encoded POSTs to ``/me/...``,
``/video/<id>`` and the like, ``fields=`` on every answer, paging on ``has_more``;
requests built by the sans-io ``_protocol``, sent through the client's requester."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from . import _protocol as wire
from . import _validate as check
from ._account import WEBHOOK_FIELDS, webhook_of
from ._auth import TokenProvider
from ._convert import structure
from ._errors import InvalidArgumentError, UnexpectedResponseError, UsageError
from ._fields import LIVE_FIELDS, VIDEO_FIELDS
from ._models import Player, Playlist, UploadSession, User, Video, Webhook
from ._observe import VIDEO_ID, describe
from ._pages import iter_pages
from ._players import PLAYER_FIELDS, PLAYER_SCOPE, player_form
from ._playlists import PLAYLIST_FIELDS, PLAYLIST_SCOPE
from ._raw import raw_request
from ._service import form_of
from ._video_metadata import extra_form
from ._videos import create_request, post_video, read_video, with_tag

if TYPE_CHECKING:
    from ._dialect import ReadVideo
    from ._requester import Requester

__all__ = ["Legacy"]

T = TypeVar("T")

DEFAULT_BASE_URL: Final = "https://api.dailymotion.com"


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


class Legacy:
    """The legacy Data API (``Client(api="legacy")``, the default)."""

    name = "legacy"
    default_base_url = DEFAULT_BASE_URL
    refused: Mapping[str, str] = {
        "raw.patch": "the legacy API updates with POST: use post()",
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

    async def ready_to_create(self, requester: Requester, given: Mapping[str, object]) -> None:
        return None  # the form was checked as it was built

    async def create_video_request(
        self,
        requester: Requester,
        url: str,
        form: list[tuple[str, str]],
        given: Mapping[str, object],
        extra: Mapping[str, str] | None,
        dedupe_tag: str | None,
        password: str | None,
    ) -> wire.Request:
        # extra may not name a field the call sets itself: sent twice, the server picks
        sets = [("url", url), ("password", ""), *form, *([("tags", "")] if dedupe_tag else [])]
        pairs = [("url", url), *form, *extra_form(extra, sets)]
        if password is not None:
            pairs.append(("password", check.password(password) or ""))
        if dedupe_tag is not None:
            pairs = with_tag(pairs, dedupe_tag)
        return create_request(requester, pairs)

    def video_from(self, data: Mapping[str, Any]) -> Mapping[str, Any]:
        return data

    def video_request(
        self, requester: Requester, video_id: str, names: str, scope: str | None
    ) -> wire.Request:
        return wire.api_request(
            requester.base_url, "GET", f"/video/{video_id}", query=[("fields", names)], scope=scope
        )

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
        form: list[tuple[str, str]],
        given: Mapping[str, object],
        extra: Mapping[str, str] | None,
        returning: Iterable[str],
        read: ReadVideo,
    ) -> Video:
        form = form + extra_form(extra, form)
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

    # --- live streams --------------------------------------------------------------------

    async def create_live_stream(
        self,
        requester: Requester,
        form: list[tuple[str, str]],
        times: Sequence[tuple[str, int]],
        metadata: Mapping[str, object],
    ) -> Video:
        pairs = [*form, ("mode", "live"), *((name, str(value)) for name, value in times)]
        request = create_request(requester, pairs, fields=LIVE_FIELDS, scope="manage_videos")
        video = structure(await requester.call(request), Video, what=request.what)
        describe(requester, VIDEO_ID, video.id)
        return video

    async def get_live_stream(self, requester: Requester, video_id: str | Video) -> Video:
        return await read_video(requester, video_id, LIVE_FIELDS, "manage_videos")

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

    async def raw_pages(
        self,
        requester: Requester,
        path: str,
        params: Mapping[str, object],
        fields: Iterable[str] | str | None,
        limit: int,
        max_items: int | None,
    ) -> AsyncIterator[dict[str, Any]]:
        raw_request(requester.base_url, "GET", path, params=params, fields=fields)  # checked now

        def page_request(page: int) -> wire.Request:
            query = {**params, "page": page, "limit": limit}
            return raw_request(requester.base_url, "GET", path, params=query, fields=fields)

        async for _, item in iter_pages(requester.call, page_request, max_items=max_items):
            yield dict(item)
