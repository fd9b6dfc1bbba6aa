"""API v2 as a ``Dialect`` (``_dialects.dialect``): JSON bodies, PATCH answered 204 (then the
object read when the operation returns it), creates under a profile, paging on
``next``. Its requests are built by the sans-io ``_protocol._v2``; what is async
beyond one request lives here: the profile (given, else found once from ``GET /me``)
and the read after a PATCH."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import _validate as check
from .._acting import ACTING_PROFILE
from .._auth.api_key import ApiKey
from .._auth.providers import OAuth, TokenProvider
from .._convert import structure, webhook_of
from .._errors import (
    InsufficientScopeError,
    InvalidArgumentError,
    UnexpectedResponseError,
    UnsupportedOperationError,
)
from .._models import Player, Playlist, UploadSession, User, Video, Webhook
from .._observe import VIDEO_ID, describe
from .._protocol import Request
from .._protocol import _v2 as v2
from .._protocol._legacy import player_form
from .._resources.fields import VIDEO_FIELDS
from .._resources.pages import iter_next_pages
from .operations import Operation, Refusals

if TYPE_CHECKING:
    from .._requester import Requester
    from .._resources.video_metadata import VideoMetadata
    from .dialect import ReadVideo

__all__ = ["V2"]


def _no_extra(operation: str, extra: Mapping[str, str] | None) -> None:
    """API v2 takes typed JSON fields: ``extra=`` (form text) is refused there."""
    if extra:
        raise UnsupportedOperationError(
            f"{operation}(extra=...)", "v2", "extra= is form text; API v2 takes typed JSON fields"
        )


class V2(Refusals):
    """API v2 (``Client(api="v2")``, a preview): the same operations and models."""

    name = v2.DIALECT
    default_base_url = v2.DEFAULT_BASE_URL
    refused: Mapping[Operation, str] = {
        operation: f"{why}; use api='legacy'" for operation, why in v2.UNSUPPORTED.items()
    }

    def __init__(self, profile_id: str | None = None) -> None:
        self._wanted = profile_id
        self._profile: str | InvalidArgumentError | None = None
        """The profile chosen, or the refusal of the choice: learnt once."""
        self._profile_lock = asyncio.Lock()
        self.decode = v2.decode_api_response
        """An answer's JSON object, or the typed error in v2's shape."""

    async def profile_id(self, requester: Requester) -> str:
        """The profile to create under: the one given to the client when ``GET /me``
        lists it, else the only one listed (asked once per client, then kept, before the
        first profile-scoped request); a given one the key does not reach, or several
        without a choice, is an ``InvalidArgumentError`` naming the key's profiles (the
        refusal kept too: ``GET /me`` is not asked again). A given profile is taken
        unverified by a token known to lack ``account.read`` (``GET /me``'s scope).
        A task acting for another profile (a batch job's ``profile``) uses it as given."""
        acting = ACTING_PROFILE.get()
        if acting is not None:
            return acting
        async with self._profile_lock:
            if self._profile is None:
                self._profile = await self._choose_profile(requester)
            chosen = self._profile
        if isinstance(chosen, str):
            return chosen
        raise InvalidArgumentError(chosen.argument, chosen.message)

    async def _profiled(self, requester: Requester, build: Callable[[str], Request]) -> Request:
        """``build``'s request under the profile to use. While the profile is still to
        be learnt, the request's scope is settled first (refused, or asked for), so that
        an operation the token cannot do sends nothing, ``GET /me`` included; once it is
        known, the request's own send checks its scope as any other's."""
        if self._profile is None:
            await requester.ensure_scope(build(self._wanted or "profile"))
        return build(await self.profile_id(requester))

    async def _choose_profile(self, requester: Requester) -> str | InvalidArgumentError:
        try:
            answer = await requester.call(v2.me(requester.base_url))
        except InsufficientScopeError:
            if self._wanted is None:
                raise
            return self._wanted  # a token known to lack account.read: the server judges
        try:
            return v2.choose_profile(answer, self._wanted)
        except InvalidArgumentError as exc:
            return exc

    # --- the client and the requester ----------------------------------------------------

    def token_scopes(self, scopes: Iterable[str]) -> Iterable[str]:
        return v2.expand_scopes(v2.v2_scopes(scopes))

    def check_auth(self, auth: TokenProvider) -> None:
        """API v2 has no password grant, no authorization-code grant yet and no refresh
        token (spec api-v2 §2): a provider of any is refused before any request; so is
        ``OAuth.client_credentials`` with a legacy scope name (``ApiKey`` maps them)."""
        if not isinstance(auth, OAuth) or isinstance(auth, ApiKey):
            return
        grant = dict(getattr(auth, "_grant", ()) or ()).get("grant_type")
        if getattr(auth, "_refresh_token", None) or not grant:
            grant = "refresh_token"
        if grant in ("password", "authorization_code", "refresh_token"):
            raise UnsupportedOperationError(
                f"OAuth.{grant}", "v2", "v2 takes client credentials: auth=va.ApiKey(key, secret)"
            )
        legacy = [name for name in getattr(auth, "_scopes", ()) if "." not in name]
        if legacy:
            raise UnsupportedOperationError(
                f"OAuth.{grant}(scopes={legacy[0][:40]!r})",
                "v2",
                "a legacy scope name; give v2's names (video.manage, ...), or "
                "auth=va.ApiKey(key, secret, scopes=...), which maps legacy ones",
            )

    def token_url(self, base_url: str) -> str:
        return v2.token_url_for(base_url)

    # --- videos --------------------------------------------------------------------------

    async def ready_to_create(self, requester: Requester, metadata: VideoMetadata) -> None:
        """The create's metadata checked as v2 will write it (an argument it has no field
        for is ``UnsupportedOperationError``), then the profile known (and verified):
        both before any request of the upload."""
        v2.check_video_create(metadata.values)
        if self._profile is None:  # the upload's first request's scope, before GET /me
            await requester.ensure_scope(v2.upload_session(requester.base_url))
        await self.profile_id(requester)

    async def create_video_request(
        self,
        requester: Requester,
        url: str,
        metadata: VideoMetadata,
        extra: Mapping[str, str] | None,
        dedupe_tag: str | None,
        password: str | None,
    ) -> Request:
        """``POST /profiles/{profile_id}/videos``, JSON."""
        _no_extra("create_video", extra)
        values = dict(metadata.values)
        if password is not None:
            values["password"] = check.password(password)
        if dedupe_tag is not None:
            tags = values.get("tags")
            tags = [t for t in tags.split(",") if t] if isinstance(tags, str) else tags
            values["tags"] = [*(tags if isinstance(tags, list | tuple) else ()), dedupe_tag]
        return await self._profiled(
            requester, lambda profile: v2.create_video(requester.base_url, profile, url, values)
        )

    def video_from(self, data: Mapping[str, Any]) -> Mapping[str, Any]:
        return v2.video_from(data)

    def video_request(
        self, requester: Requester, video_id: str, names: str, scope: str | None
    ) -> Request:
        return v2.get_video(requester.base_url, video_id, names.split(","))

    def delete_video_request(self, requester: Requester, video_id: str) -> Request:
        return v2.delete_video(requester.base_url, video_id)

    def videos(
        self, requester: Requester, fields: Sequence[str], page_size: int
    ) -> AsyncIterator[Video]:
        return self._videos(requester, fields, page_size=page_size)

    async def videos_by_tag(self, requester: Requester, tag: str) -> list[Video]:
        return [video async for video in self._videos(requester, VIDEO_FIELDS, tag=tag)]

    async def _videos(
        self,
        requester: Requester,
        fields: Iterable[str],
        *,
        page_size: int = v2.PAGE_SIZE_MAX,
        tag: str | None = None,
    ) -> AsyncIterator[Video]:
        """The profile's videos, oldest first, following ``next`` until it is null."""
        request = await self._profiled(
            requester,
            lambda profile: v2.list_videos(
                requester.base_url, profile, fields, page_size=page_size, tag=tag
            ),
        )
        async for page, item in iter_next_pages(requester.call, request):
            yield structure(v2.video_from(item), Video, what=page.what)

    async def update_video(
        self,
        requester: Requester,
        video_id: str | Video,
        metadata: VideoMetadata,
        extra: Mapping[str, str] | None,
        returning: Iterable[str],
        read: ReadVideo,
    ) -> Video:
        _no_extra("update_video", extra)
        if not metadata:
            raise InvalidArgumentError("update_video", "give at least one field to write")
        return await self._patch_video(requester, video_id, metadata.values, returning, read)

    async def set_password(
        self, requester: Requester, video_id: str | Video, password: str | None, read: ReadVideo
    ) -> Video:
        given = {"password": password}
        return await self._patch_video(
            requester, video_id, given, ("id", "password_protected"), read
        )

    @staticmethod
    async def _patch_video(
        requester: Requester,
        video_id: str | Video,
        given: Mapping[str, object],
        returning: Iterable[str],
        read: ReadVideo,
    ) -> Video:
        """``PATCH /videos/{id}`` (answered 204, no body), then the video read with the
        ``returning`` fields. When the new visibility depends on the current one
        (``v2.needs_current``), the video's visibility is read first, so that
        ``published=True``, ``private=False`` or a password removed never lower its
        protection; nothing is sent when they change nothing."""
        vid = check.video_id(video_id)
        describe(requester, VIDEO_ID, vid)
        current = None
        if v2.needs_current(given):
            request = v2.get_video(requester.base_url, vid, ("private",))
            current = v2.visibility_from(await requester.call(request), request.what)
        patch = v2.update_video(requester.base_url, vid, given, current)
        if patch is not None:
            await requester.call(patch)
        return await read(vid, returning)

    async def set_thumbnail(self, requester: Requester, video_id: str, url: str) -> Video:
        raise self.refusal(Operation.SET_THUMBNAIL)

    # --- live streams --------------------------------------------------------------------

    async def create_live_stream(
        self, requester: Requester, metadata: VideoMetadata, times: Sequence[tuple[str, int]]
    ) -> Video:
        """``POST /profiles/{profile_id}/livestreams``: the same ``Video``, live."""
        given: dict[str, object] = {**metadata.values, **dict(times)}
        request = await self._profiled(
            requester, lambda profile: v2.create_livestream(requester.base_url, profile, given)
        )
        data = v2.livestream_from(await requester.call(request))
        video = structure(data, Video, what=request.what)
        describe(requester, VIDEO_ID, video.id)
        return video

    async def make_live(self, requester: Requester, video_id: str | Video) -> Video:
        raise self.refusal(Operation.MAKE_LIVE)

    async def get_live_stream(self, requester: Requester, video_id: str | Video) -> Video:
        vid = check.video_id(video_id)
        describe(requester, VIDEO_ID, vid)
        request = v2.get_livestream(requester.base_url, vid)
        data = v2.livestream_from(await requester.call(request))
        return structure({"id": vid, **data}, Video, what=request.what)

    # --- uploads, the account ------------------------------------------------------------

    async def upload_session(self, requester: Requester) -> UploadSession:
        request = v2.upload_session(requester.base_url)
        # v2's progress_url is documented (spec): one missing is an unexpected answer.
        data = v2.upload_session_from(await requester.call(request), request.what)
        return structure(data, UploadSession, what=request.what)

    async def me(self, requester: Requester, names: str) -> User:
        """``GET /me``: the user and its profiles (v2 takes no fields)."""
        request = v2.me(requester.base_url)
        data = v2.user_from(await requester.call(request))
        return structure(data, User, what=request.what)

    async def set_webhook(
        self, requester: Requester, url: str, events: Sequence[str], secret: str | None
    ) -> Webhook:
        if secret is not None:
            raise UnsupportedOperationError(
                "set_webhook(secret=...)", "v2", "v2 documents no webhook signing secret"
            )
        await self._write_profile(requester, url, events)
        found = await self.get_webhook(requester)
        if found is None:
            raise UnexpectedResponseError("PATCH /profiles: the webhook was not kept", status=204)
        return found

    async def get_webhook(self, requester: Requester) -> Webhook | None:
        """The profile's ``webhook``."""
        request = await self._profiled(
            requester, lambda profile: v2.get_profile(requester.base_url, profile)
        )
        hook = v2.webhook_from(await requester.call(request))
        if hook is None:
            return None
        legacy = {"webhook_url": hook["url"], "webhook_events": hook["events"]}
        return webhook_of(legacy, request.what)

    async def remove_webhook(self, requester: Requester) -> None:
        """The profile's ``webhook`` written null."""
        await self._write_profile(requester, None, ())

    async def _write_profile(
        self, requester: Requester, url: str | None, events: Iterable[str]
    ) -> None:
        request = await self._profiled(
            requester,
            lambda profile: v2.set_webhook(requester.base_url, profile, url, tuple(events)),
        )
        await requester.call(request)

    # --- playlists, players, raw listings ------------------------------------------------

    @staticmethod
    def _playlist(data: Mapping[str, Any], what: str) -> Playlist:
        return structure(v2.playlist_from(data), Playlist, what=what)

    async def create_playlist(self, requester: Requester, values: Mapping[str, object]) -> Playlist:
        request = await self._profiled(
            requester,
            lambda profile: v2.create_playlist(
                requester.base_url,
                profile,
                str(values["name"]),
                description=values.get("description"),  # type: ignore[arg-type]
                private=bool(values["private"]),
            ),
        )
        return self._playlist(await requester.call(request), request.what)

    async def get_playlist(
        self, requester: Requester, playlist_id: str, fields: Iterable[str]
    ) -> Playlist:
        request = v2.playlist_request(requester.base_url, "GET", playlist_id)
        return self._playlist(await requester.call(request), request.what)

    async def update_playlist(
        self, requester: Requester, playlist_id: str, values: Mapping[str, object]
    ) -> Playlist:
        """PATCH answers 204: the playlist is read after."""
        request = v2.playlist_request(
            requester.base_url,
            "PATCH",
            playlist_id,
            name=values.get("name"),  # type: ignore[arg-type]
            description=values.get("description"),  # type: ignore[arg-type]
            private=values.get("private"),  # type: ignore[arg-type]
        )
        await requester.call(request)
        return await self.get_playlist(requester, playlist_id, ())

    async def delete_playlist(self, requester: Requester, playlist_id: str) -> None:
        await requester.call(v2.playlist_request(requester.base_url, "DELETE", playlist_id))

    async def add_playlist_video(
        self, requester: Requester, playlist_id: str, video_id: str
    ) -> None:
        await requester.call(v2.add_playlist_video(requester.base_url, playlist_id, video_id))

    @staticmethod
    def _player(data: Mapping[str, Any], what: str) -> Player:
        return structure(v2.player_from(data), Player, what=what)

    async def create_player(
        self, requester: Requester, label: str, settings: Mapping[str, str | bool | int]
    ) -> Player:
        """v2 creates with a name; other settings by a PATCH."""
        request = await self._profiled(
            requester, lambda profile: v2.create_player(requester.base_url, profile, label)
        )
        made = self._player(await requester.call(request), request.what)
        return await self.update_player(requester, made.id, settings) if settings else made

    async def get_player(
        self, requester: Requester, player_id: str, fields: Iterable[str]
    ) -> Player:
        """``GET /players/{id}``, whole."""
        request = v2.player_request(requester.base_url, "GET", player_id)
        return self._player(await requester.call(request), request.what)

    async def update_player(
        self, requester: Requester, player_id: str, settings: Mapping[str, str | bool | int]
    ) -> Player:
        """PATCH answers 204 (settings in v2's names; label: name), then the player."""
        player_form(settings)
        request = v2.player_request(requester.base_url, "PATCH", player_id, settings)
        await requester.call(request)
        return await self.get_player(requester, player_id, ())

    async def delete_player(self, requester: Requester, player_id: str) -> None:
        await requester.call(v2.player_request(requester.base_url, "DELETE", player_id))

    raw_request = staticmethod(v2.raw_request)
    """A raw call's request (``client.get/post/patch/delete``): ``data`` as JSON."""

    async def raw_pages(
        self,
        requester: Requester,
        path: str,
        params: Mapping[str, object],
        fields: Iterable[str] | str | None,
        limit: int,
        max_items: int | None,
    ) -> AsyncIterator[dict[str, Any]]:
        query = {**params, "page": 1, "page_size": limit}
        request = v2.raw_request(requester.base_url, "GET", path, params=query, fields=fields)
        async for _, item in iter_next_pages(requester.call, request, max_items=max_items):
            yield dict(item)
