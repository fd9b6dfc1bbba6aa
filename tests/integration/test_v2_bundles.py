"""API v2 keys given a bundle (``bundle.user``, ``bundle.publisher``) or a legacy scope
(``manage_videos``): what the bundle or the scope covers works, the profile lookup
(``GET /me``, scope ``account.read``) among it, against the emulator's v2 (its own
code and tables)."""

from __future__ import annotations

import pytest

import vidapi_async as va
from vidapi_async.emulator import Emulator
from vidapi_async.testing import DEMO_API_KEY, client_for

VIDEO = b"\x00\x00\x00\x18ftypmp42" + b"bundle-bytes" * 300


@pytest.mark.parametrize("scopes", [["bundle.user"], ["bundle.publisher"], ["manage_videos"]])
async def test_uploads_me_and_live_with_a_bundle_or_manage_videos(
    emulator: Emulator, scopes: list[str]
) -> None:
    auth = va.ApiKey(*DEMO_API_KEY, scopes=scopes)
    async with client_for(emulator, api="v2", auth=auth) as client:
        video = await client.upload_video(VIDEO, title="B", channel="news", filename="b.mp4")
        assert (await client.get_video(video.id)).id == video.id
        me = await client.me()
        assert me.id
        live = await client.create_live_stream(title="L", channel="news")
        assert (await client.get_live_stream(live.id)).mode == "live"


async def test_a_publisher_bundle_reads_its_players(emulator: Emulator) -> None:
    auth = va.ApiKey(*DEMO_API_KEY, scopes=["bundle.publisher"])
    async with client_for(emulator, api="v2", auth=auth) as client:
        player = await client.players.create(label="Site")
        assert (await client.players.get(player.id)).label == "Site"
