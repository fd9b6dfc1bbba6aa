"""A video read in API v2 is a VOD: ``mode`` reads ``"vod"`` (a live stream is v2's
livestream resource, read as ``"live"``). ``mode`` is no v2 field: it is not sent in
``fields=``, it is filled; a v2 field name given (``visibility``) is asked as itself."""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import vidapi_async as va
from tests.integration.test_v2_cli import _env, cli
from tests.integration.test_v2_client_wire import v2_server
from tests.wire import WireServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def test_a_v2_video_reads_mode_vod_and_mode_is_not_asked() -> None:
    url: list[str] = []
    async with WireServer(v2_server(url)) as srv:
        url.append(srv.url)
        base = f"{srv.url}/v2"
        async with va.Client(access_token="t", api="v2", base_url=base) as client:
            video = await client.get_video("x1", ["id", "mode", "visibility"])
            listed = [v async for v in client.videos.mine(["id", "mode"])]
    assert video.mode == "vod" and video.fields["visibility"] == "password"
    assert [v.mode for v in listed] == ["vod"]
    read = next(s for s in srv.seen if s.path == "/v2/videos/x1")
    assert urllib.parse.parse_qs(read.raw_query)["fields"] == ["video_id,visibility"]


async def test_cli_video_fields_in_v2(tmp_path: Path) -> None:
    async with Emulator(probe=False) as emu:
        async with client_for(emu, api="v2") as client:
            token = (await client.access_token()).token
            made = await client.upload_video(
                b"\x00\x00\x00\x18ftypmp42" + os.urandom(3000), title="t", channel="news"
            )
            live = await client.create_live_stream(title="L", channel="news")
            assert (made.mode, live.mode) == ("vod", "live")
        env = {**_env(emu, tmp_path / "none.json"), "VIDAPI_TOKEN": token}
        base = ("--api", "v2", "--base-url", emu.v2_base_url)
        code, out, err = await cli(env, *base, "video", made.id, "--fields", "id,mode,visibility")
    assert code == 0, err
    lines = out.splitlines()
    assert f"id: {made.id}" in lines and "mode: vod" in lines, out
    assert "visibility: public" in lines, out
