"""API v2 refuses before anything is sent what it cannot do: an upload's metadata v2 has
no field for, and a ``profile_id`` the key does not reach (checked once against
``GET /me``), both before the upload session; seen at tests/wire.py's scripted server."""

from __future__ import annotations

import datetime as dt

import pytest

import vidapi_async as va
from tests.integration.test_v2_client_wire import KEY, SECRET, v2_server
from tests.wire import WireServer

WHEN = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    "metadata",
    [{"expiry_date": WHEN}, {"thumbnail_url": "https://img.example/t.jpg"}],
    ids=["expiry_date", "thumbnail_url"],
)
async def test_an_upload_with_metadata_v2_cannot_carry_sends_nothing(
    metadata: dict[str, object],
) -> None:
    url: list[str] = []
    async with WireServer(v2_server(url)) as srv:
        url.append(srv.url)
        auth = va.ApiKey(KEY, SECRET)
        async with va.Client(auth=auth, api="v2", base_url=f"{srv.url}/v2") as client:
            with pytest.raises(va.UnsupportedOperationError) as caught:
                await client.upload_video(
                    b"movie!!", title="Hi", channel="news", filename="m.mp4", **metadata
                )
    assert next(iter(metadata)) in str(caught.value)
    paths = [s.path for s in srv.seen]
    assert "/v2/files/upload_sessions" not in paths and "/upload" not in paths, paths


def with_profile(srv: WireServer, profile_id: str) -> va.Client:
    auth = va.ApiKey(KEY, SECRET)
    return va.Client(auth=auth, api="v2", base_url=f"{srv.url}/v2", profile_id=profile_id)


async def test_a_profile_the_key_does_not_reach_is_refused_before_the_upload() -> None:
    url: list[str] = []
    async with WireServer(v2_server(url)) as srv:
        url.append(srv.url)
        async with with_profile(srv, "nope") as client:
            with pytest.raises(va.InvalidArgumentError) as caught:
                await client.upload_video(b"movie!!", title="Hi", channel="news", filename="m")
            with pytest.raises(va.InvalidArgumentError):
                await client.videos.mine().__anext__()  # refused again, /me not asked again
    message = str(caught.value)
    assert "nope" in message and "p1 (M)" in message, message
    paths = [s.path for s in srv.seen]
    assert "/v2/files/upload_sessions" not in paths and "/upload" not in paths, paths
    assert paths.count("/v2/me") == 1, paths


async def test_a_profile_the_key_reaches_is_checked_once() -> None:
    url: list[str] = []
    async with WireServer(v2_server(url)) as srv:
        url.append(srv.url)
        async with with_profile(srv, "p1") as client:
            for _ in range(2):
                video = await client.upload_video(b"movie!!", title="Hi", channel="news")
                assert video.id == "x1"
    paths = [s.path for s in srv.seen]
    assert paths.count("/v2/me") == 1 and paths.count("/v2/profiles/p1/videos") == 2, paths
