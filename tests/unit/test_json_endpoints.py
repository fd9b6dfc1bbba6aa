"""JSON-endpoint logic against aioresponses (with the aiohttp 3.14 shim): no server."""

from __future__ import annotations

import re

import pytest
from yarl import URL

import vidapi_async as va
from tests.conftest import Mocked

API = "https://api.example.com"


async def test_create_video_sends_the_form_and_decodes_the_video(mocked: Mocked) -> None:
    mocked.post(
        re.compile(rf"{API}/me/videos\?fields=.*"),
        payload={"id": "x26ezrb", "title": "t", "channel": "creation", "owner": "x1fz4ii"},
    )
    async with va.Client(access_token="tok", base_url=API, retry=va.NO_RETRY) as client:
        video = await client.create_video(
            url="http://upload-01.example/files/a.mp4#e30", title="t", channel="creation"
        )
    assert video == va.Video(
        id="x26ezrb", title="t", channel="creation", owner="x1fz4ii", fields=video.fields
    )
    [(key, calls)] = mocked.requests.items()
    assert key[0] == "POST"
    sent = calls[0].kwargs
    assert sent["headers"]["Authorization"] == "Bearer tok"
    assert sent["data"] == (
        b"url=http%3A%2F%2Fupload-01.example%2Ffiles%2Fa.mp4%23e30&title=t&channel=creation"
        b"&published=true&is_created_for_kids=false"
    )


async def test_password_removal_sends_an_empty_value(mocked: Mocked) -> None:
    mocked.post(re.compile(rf"{API}/video/x1\?.*"), payload={"password_protected": False})
    async with va.Client(access_token="tok", base_url=API, retry=va.NO_RETRY) as client:
        video = await client.set_password("x1", None)
    assert video.password_protected is False
    [calls] = mocked.requests.values()
    assert calls[0].kwargs["data"] == b"password="


async def test_a_shaped_but_wrong_success_is_unexpected(mocked: Mocked) -> None:
    mocked.get(f"{API}/file/upload", payload={"upload_url": 5, "progress_url": "x"})
    async with va.Client(access_token="tok", base_url=API, retry=va.NO_RETRY) as client:
        with pytest.raises(va.UnexpectedResponseError, match="upload_url"):
            await client.get_upload_session()


async def test_503_with_retry_after(mocked: Mocked) -> None:
    mocked.get(
        f"{API}/file/upload",
        status=503,
        headers={"Retry-After": "12"},
        payload={"error": {"code": 503, "message": "maintenance", "type": "server_error"}},
    )
    async with va.Client(access_token="tok", base_url=API, retry=va.NO_RETRY) as client:
        with pytest.raises(va.ServerError) as info:
            await client.get_upload_session()
    assert info.value.retry_after == 12.0
    assert "maintenance" in str(info.value)


async def test_refresh_token_grant_is_used_and_rotated(mocked: Mocked) -> None:
    mocked.post(
        f"{API}/oauth/token",
        payload={
            "access_token": "a1",
            "expires_in": 36000,
            "refresh_token": "r2",
            "scope": "manage_videos",
        },
    )
    mocked.get(
        f"{API}/file/upload", payload={"upload_url": "https://u/x", "progress_url": "https://u/p"}
    )
    auth = va.OAuth.refresh_token("cid", "csecret", refresh_token="r1")
    async with va.Client(auth=auth, base_url=API) as client:
        await client.get_upload_session()
        token = await client.access_token()
    assert token.token == "a1" and token.refresh_token == "r2"
    assert "r2" not in repr(token)
    calls = mocked.requests[("POST", URL(f"{API}/oauth/token"))]
    assert b"grant_type=refresh_token&refresh_token=r1" in calls[0].kwargs["data"]
