"""The dialect module and the emulator's v2 agree: the module's requests, sent as they
are by a bare aiohttp loop (what ``Client(api="v2")`` will do through its transport),
are taken by the emulator, and its answers decode into the existing models and errors.
Each side is tested on its own elsewhere (tests/unit/test_v2_dialect.py, by hand-written
values; tests/integration/test_emulator_v2.py, by raw HTTP)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp
import pytest
import yarl

import vidapi_async as va
from vidapi_async._auth.api_key import ApiKey
from vidapi_async._convert import structure
from vidapi_async._protocol import Request, origin
from vidapi_async._protocol import _v2 as v2
from vidapi_async.emulator import Emulator


class Bare:
    """The smallest transport: a Request sent as it says, the answer decoded by v2."""

    def __init__(self, s: aiohttp.ClientSession, base: str, token: str) -> None:
        self.s, self.origin, self.token = s, origin(base), token

    async def __call__(self, request: Request) -> Mapping[str, Any]:
        url = yarl.URL(request.url, encoded=request.exact_url)
        async with self.s.request(
            request.method,
            url,
            headers=request.headers(self.token, self.origin),
            data=request.payload(),
        ) as r:
            body = await r.read()
            return v2.decode_api_response(
                request, r.status, dict(r.headers), body, secrets=request.secret_values()
            )


async def bare(
    s: aiohttp.ClientSession,
    base: str,
    key: str = "demo-api-key",
    secret: str = "demo-api-secret",  # noqa: S107 - the emulator's public demo key
    **kw: Any,
) -> Bare:
    """A ``Bare`` sender with a token that ``ApiKey`` got from the emulator."""

    async def post_form(url: str, fields: tuple[tuple[str, str], ...]) -> Mapping[str, Any]:
        async with s.post(url, data=dict(fields)) as r:
            return dict(await r.json())

    token = await ApiKey(key, secret, **kw).get_token(post_form, v2.token_url_for(base))
    return Bare(s, base, token.token)


async def test_upload_create_list_patch_delete_through_the_dialect(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        send = await bare(s, base)
        profile = v2.choose_profile(await send(v2.me(base)), None)
        session = v2.upload_session_from(await send(v2.upload_session(base)), "w")
        form = aiohttp.FormData()
        form.add_field("file", b"bytes" * 100, filename="m.mp4")
        async with s.post(yarl.URL(session["upload_url"], encoded=True), data=form) as r:
            file_url = (await r.json())["url"]
        metadata = {
            "title": "Via the dialect",
            "channel": "music",
            "is_created_for_kids": False,
            "password": "pw-123",
            "publish_date": 1780315200,
            "geoblocking": ("deny", "us"),
        }
        created = await send(v2.create_video(base, profile, file_url, metadata))
        video = structure(v2.video_from(created), va.Video, what="create")
        fields = ["id", "title", "channel", "password_protected", "owner", "status"]
        read = await send(v2.get_video(base, video.id, [*fields, "publish_date", "geoblocking"]))
        mapping = v2.video_from(read)
        assert mapping["publish_date"] == 1780315200
        assert mapping["geoblocking"] == ["deny", "us"]
        again = structure(mapping, va.Video, what="get")
        assert (again.title, again.channel, again.password_protected) == (
            "Via the dialect",
            "music",
            True,
        )
        assert again.owner == profile and again.status in ("processing", "ready")
        current = v2.visibility_from(await send(v2.get_video(base, video.id, ["private"])), "g")
        assert current == "password"
        removed = v2.update_video(base, video.id, {"password": None}, current)
        assert removed is not None and await send(removed) == {}
        page = await send(v2.list_videos(base, profile, fields, page_size=1))
        items, nxt = v2.page_items(page, "list")
        assert nxt is None
        assert [
            structure(v2.video_from(i), va.Video, what="l").password_protected for i in items
        ] == [False]
        too_long = v2.update_video(base, video.id, {"description": "d" * 3001})
        assert too_long is not None
        with pytest.raises(va.InvalidParameterError) as bad:  # v2 takes 3000 at most
            await send(too_long)
        assert bad.value.status == 400 and bad.value.correlation_id
        assert await send(v2.delete_video(base, video.id)) == {}
        with pytest.raises(va.NotFoundError) as info:
            await send(v2.get_video(base, video.id, ["id"]))
        assert info.value.correlation_id and info.value.correlation_id in str(info.value)


async def test_a_missing_scope_is_insufficient_scope_with_the_emulators_answer(
    emulator: Emulator,
) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        send = await bare(
            s, base, "demo-readonly-key", "demo-readonly-secret", scopes=["video.read"]
        )
        with pytest.raises(va.InsufficientScopeError) as info:
            await send(v2.upload_session(base))
        assert info.value.scope == "video.manage" and info.value.status == 403


async def test_playlists_and_players_through_the_dialect(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        scopes = ["account.read", "manage_playlists", "manage_players"]
        send = await bare(s, base, scopes=scopes)
        profile = v2.choose_profile(await send(v2.me(base)), None)
        made = await send(v2.create_playlist(base, profile, "Mix", private=True))
        playlist = structure(v2.playlist_from(made), va.Playlist, what="create")
        assert (playlist.name, playlist.private) == ("Mix", True)
        assert await send(v2.playlist_request(base, "PATCH", playlist.id, private=False)) == {}
        read = await send(v2.playlist_request(base, "GET", playlist.id))
        assert structure(v2.playlist_from(read), va.Playlist, what="get").private is False
        assert await send(v2.playlist_request(base, "DELETE", playlist.id)) == {}
        player = structure(
            v2.player_from(await send(v2.create_player(base, profile, "Main"))), va.Player, what="c"
        )
        assert player.label == "Main"
        assert await send(v2.player_request(base, "PATCH", player.id, {"label": "New"})) == {}
        again = await send(v2.player_request(base, "GET", player.id))
        assert structure(v2.player_from(again), va.Player, what="g").label == "New"
        assert await send(v2.player_request(base, "DELETE", player.id)) == {}
