"""The emulator as a faithful platform: raw HTTP against it, no client library."""

from __future__ import annotations

import asyncio
import hashlib
import html
import json
import re
import shutil
import socket
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yarl

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

AUTH = {"Authorization": "Bearer demo-token"}


async def upload_urls(emu: Emulator, s: aiohttp.ClientSession) -> dict[str, yarl.URL]:
    """The addresses, to be sent exactly as returned (yarl would re-encode ``%2F``)."""
    async with s.get(f"{emu.base_url}/file/upload", headers=AUTH) as r:
        assert r.status == 200
        return {k: yarl.URL(v, encoded=True) for k, v in (await r.json()).items()}


async def post_range(
    s: aiohttp.ClientSession, url: yarl.URL, data: bytes, first: int, total: int
) -> aiohttp.ClientResponse:
    headers = {
        "Content-Type": "application/octet-stream",
        "Content-Disposition": 'attachment; filename="clip.mp4"',
        "Content-Range": f"bytes {first}-{first + len(data) - 1}/{total}",
    }
    async with s.post(url, data=data, headers=headers) as r:
        await r.read()
        return r


async def test_chunked_protocol_out_of_order_and_asking_what_is_held(emulator: Emulator) -> None:
    data = bytes(range(256)) * 4096  # 1 MiB
    total = len(data)
    parts = [(i, data[i : i + 262144]) for i in range(0, total, 262144)]
    async with aiohttp.ClientSession() as s:
        urls = await upload_urls(emulator, s)
        url = urls["upload_url"]
        r = await post_range(s, url, parts[2][1], parts[2][0], total)
        assert r.status == 202
        assert r.headers["Range"] == f"524288-786431/{total}"
        r = await post_range(s, url, parts[0][1], 0, total)
        assert r.headers["Range"] == f"0-262143,524288-786431/{total}"
        async with s.get(urls["progress_url"]) as p:
            assert await p.json() == {"state": "uploading", "size": total, "received": 524288}
        # a fresh client asks what the server holds: an empty body, Content-Range */TOTAL
        async with s.post(url, data=b"", headers={"Content-Range": f"bytes */{total}"}) as r:
            assert r.status == 202
            assert r.headers["Range"] == f"0-262143,524288-786431/{total}"
        r = await post_range(s, url, parts[3][1], parts[3][0], total)
        assert r.status == 202
        async with s.post(
            url,
            data=parts[1][1],
            headers={
                "Content-Range": f"bytes 262144-524287/{total}",
                "Content-Disposition": 'attachment; filename="clip.mp4"',
            },
        ) as r:
            assert r.status == 200
            descriptor = await r.json()
    assert descriptor["size"] == str(total)
    assert descriptor["hash"] == hashlib.sha1(data).hexdigest()  # noqa: S324
    assert descriptor["name"] == "clip"
    stored = emulator.state.get("file", descriptor["url"].split("#")[0])
    assert stored is not None
    assert Path(stored["path"]).read_bytes() == data


async def test_chunked_transfer_encoding_is_refused(emulator: Emulator) -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"x" * 10

    async with aiohttp.ClientSession() as s:
        urls = await upload_urls(emulator, s)
        async with s.post(urls["upload_url"], data=body()) as r:
            assert r.status == 411
            assert "Content-Length" in (await r.json())["error"]["message"]


async def test_the_seal_is_verified(emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as s:
        urls = await upload_urls(emulator, s)
        forged = str(urls["upload_url"]).rsplit("seal=", 1)[0] + "seal=0000"
        form = aiohttp.FormData()
        form.add_field("file", b"data", filename="a.mp4")
        async with s.post(forged, data=form) as r:
            assert r.status == 403


async def test_every_seal_holds_escapes_and_a_re_encoded_address_is_refused(
    emulator: Emulator,
) -> None:
    async with aiohttp.ClientSession() as s:
        for _ in range(8):
            url = str((await upload_urls(emulator, s))["upload_url"])
            seal = url.split("seal=", 1)[1]
            assert "%2F" in seal and "%3D" in seal, seal
        reencoded = url.replace("%2F", "/")  # what yarl does to an address by default
        for target in (reencoded, yarl.URL(url)):
            form = aiohttp.FormData()
            form.add_field("file", b"data", filename="a.mp4")
            async with s.post(target, data=form) as r:
                assert r.status == 403
        form = aiohttp.FormData()
        form.add_field("file", b"data", filename="a.mp4")
        async with s.post(yarl.URL(url, encoded=True), data=form) as r:
            assert r.status == 200


async def test_a_multipart_without_file_part_is_missing_file(emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as s:
        urls = await upload_urls(emulator, s)
        form = aiohttp.FormData()
        form.add_field("other", "value")
        async with s.post(urls["upload_url"], data=form) as r:
            assert r.status == 400
            assert await r.json() == {"error": "missing file"}


async def test_state_survives_a_restart_with_a_data_dir(tmp_path: Path, video_file: Path) -> None:
    ports = []
    for _ in range(2):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    data_dir = tmp_path / "emu"
    async with Emulator(port=ports[0], upload_port=ports[1], data_dir=data_dir) as emu:
        async with client_for(emu) as client:
            video = await client.upload_video(video_file, title="kept", channel="news")
            await client.set_password(video.id, "pw")
    async with Emulator(port=ports[0], upload_port=ports[1], data_dir=data_dir) as emu:
        async with client_for(emu) as client:
            again = await client.get_video(video.id, ["title", "password_protected", "embed_url"])
        assert again.title == "kept"
        assert again.password_protected is True
        async with aiohttp.ClientSession() as s:
            async with s.get(str(again.embed_url)) as r:  # the player shows the stored file
                src = re.search(r'<video id="video" src="([^"]+)"', await r.text())
            assert src is not None
            async with s.get(html.unescape(src.group(1))) as r:
                assert await r.read() == video_file.read_bytes()


async def test_quota_exhaustion(video_file: Path) -> None:
    async with (
        Emulator(faults=Faults(videos_per_day=1)) as emu,
        client_for(emu, retry=va.NO_RETRY) as client,
    ):
        await client.upload_video(video_file, title="one", channel="news")
        with pytest.raises(va.ForbiddenError) as info:
            await client.upload_video(video_file, title="two", channel="news")
    assert info.value.reason == "quota_exceeded"


async def test_faults_and_reset_over_http(emulator: Emulator) -> None:
    control = {"X-Emulator-Control": emulator.control_secret}
    faults = f"{emulator.base_url}/_emulator/faults"
    async with aiohttp.ClientSession(headers=control) as s:
        async with s.post(faults, json={"error_rate": 1.0, "error_statuses": [502]}) as r:
            assert (await r.json())["error_rate"] == 1.0
        async with s.get(f"{emulator.base_url}/file/upload", headers=AUTH) as r:
            assert r.status == 502
            assert (await r.json())["error"]["code"] == 502
        async with s.post(f"{emulator.base_url}/_emulator/reset") as r:
            assert r.status == 200
        async with s.get(f"{emulator.base_url}/file/upload", headers=AUTH) as r:
            assert r.status == 200
            seal = str((await r.json())["upload_url"]).split("seal=")[1]
        async with s.get(f"{emulator.base_url}/_emulator/requests") as r:
            log = await r.json()
        assert [e["path"] for e in log] == ["/file/upload", "/_emulator/requests"]
        assert log[0]["headers"]["Authorization"] == "Bearer ***"
        assert log[1]["headers"]["X-Emulator-Control"] == "***"
        assert seal not in json.dumps(log)


@pytest.mark.parametrize(
    "bad",
    [
        {"nonsense": 1},
        {"error_rate": 2},
        {"error_rate": "0.5"},
        {"latency": -1},
        {"latency": 0.1, "segment_bytes": 0},
        {"error_statuses": [200]},
        {"error_rate": 0.5, "methods": "GET"},
        {"videos_per_day": True},
        [1, 2],
    ],
)
async def test_bad_fault_values_are_refused_and_change_nothing(
    emulator: Emulator, bad: object
) -> None:
    before = emulator.faults.as_dict()
    control = {"X-Emulator-Control": emulator.control_secret}
    async with aiohttp.ClientSession(headers=control) as s:
        async with s.post(f"{emulator.base_url}/_emulator/faults", json=bad) as r:
            assert r.status == 400
            assert (await r.json())["error"]["type"] == "invalid_parameter"
    assert emulator.faults.as_dict() == before


async def test_the_control_endpoints_need_the_secret(emulator: Emulator) -> None:
    emulator.faults.latency = 0.01
    async with aiohttp.ClientSession() as s:
        for headers in ({}, {"X-Emulator-Control": "guess"}):
            for method, path in [
                ("POST", "/_emulator/reset"),
                ("POST", "/_emulator/faults"),
                ("GET", "/_emulator/requests"),
                ("GET", "/_emulator/faults"),
                ("GET", "/_emulator/stats"),
            ]:
                async with s.request(
                    method, f"{emulator.base_url}{path}", headers=headers, json={"latency": 0}
                ) as r:
                    assert r.status == 403, (method, path)
                    assert (await r.json())["error"]["code"] == 403
    assert emulator.faults.latency == 0.01  # nothing changed


async def test_errors_use_the_platform_format(emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{emulator.base_url}/me/videos", headers=AUTH, data={"title": "t"}) as r:
            body = await r.json()
        assert r.status == 400
        assert body["error"]["type"] == "missing_required_parameter"
        assert set(body["error"]) >= {"code", "message", "type", "error_data"}
        async with s.get(f"{emulator.base_url}/me/videos") as r:
            assert r.status == 401
            assert "invalid_request" in r.headers["WWW-Authenticate"]


async def test_oauth_grants(emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as s:
        form = {
            "grant_type": "password",
            "client_id": "demo-client",
            "client_secret": "demo-secret",
            "username": "demo",
            "password": "demo-password",
            "scope": "manage_videos userinfo",
        }
        async with s.post(f"{emulator.base_url}/oauth/token", data=form) as r:
            token = await r.json()
        assert token["token_type"] == "Bearer"
        assert token["expires_in"] == 36000
        assert set(token["scope"].split()) == {"manage_videos", "userinfo"}
        async with s.get(
            f"{emulator.base_url}/auth",
            headers={"Authorization": f"Bearer {token['access_token']}"},
        ) as r:
            assert (await r.json())["id"] == token["uid"]
        refresh = {
            "grant_type": "refresh_token",
            "client_id": "demo-client",
            "client_secret": "demo-secret",
            "refresh_token": token["refresh_token"],
        }
        async with s.post(f"{emulator.base_url}/oauth/token", data=refresh) as r:
            assert r.status == 200
        async with s.post(f"{emulator.base_url}/oauth/token", data=refresh) as r:
            assert r.status == 400  # a refresh token is used once
            assert (await r.json())["error"] == "invalid_grant"


async def test_expired_tokens_are_refused() -> None:
    async with Emulator(token_lifetime=-1) as emu:
        auth = va.OAuth.client_credentials(
            "demo-client", "demo-secret", scopes=["manage_videos"], leeway=-10_000
        )
        async with va.Client(auth=auth, base_url=emu.base_url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.InvalidTokenError):
                await client.get_upload_session()


async def test_embed_page_plays_the_file_with_autoplay_and_mute(
    emulator: Emulator, client: va.Client, video_file: Path
) -> None:
    video = await client.upload_video(video_file, title="t<script>", channel="news")
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{emulator.embed_url}/embed/video/{video.id}?autoplay=1&mute=1") as r:
            page = await r.text()
        assert "<video" in page
        assert " autoplay muted" in page
        assert "t&lt;script&gt;" in page
        async with s.get(f"{emulator.embed_url}/embed/video/{video.id}") as r:
            assert " muted" not in (await r.text()).split("<video", 1)[1].split(">", 1)[0]
        async with s.get(emulator.sdk_url) as r:
            script = await r.text()
        assert "DM" in script and "/embed/video/" in script
        async with s.get(f"{emulator.embed_url}/embed/video/xnothere") as r:
            assert r.status == 404


@pytest.mark.skipif(
    shutil.which("ffprobe") is None,
    reason="ffprobe is not installed: run scripts/install-test-system-deps (as root)",
)
async def test_descriptor_facts_come_from_ffprobe(tmp_path: Path) -> None:
    sample = tmp_path / "sample.webm"
    with resources.as_file(resources.files("vidapi_async.emulator") / "sample.webm") as src:
        shutil.copyfile(src, sample)
    async with Emulator() as emu, client_for(emu) as client:  # probes by default
        uploaded = await client.upload_file(sample)
    assert uploaded.dimension == va.Dimension(320, 180)
    assert uploaded.vcodec == "VP8"
    assert uploaded.acodec == "VORBIS"
    assert uploaded.duration is not None and 3.9 < uploaded.duration < 4.1
    assert uploaded.raw["duration"].isdigit()  # milliseconds, as the platform sends it
    assert 3900 < int(uploaded.raw["duration"]) < 4100
    assert uploaded.streamable is True


async def test_descriptor_url_fragment_carries_the_other_fields(
    client: va.Client, video_file: Path
) -> None:
    import base64

    uploaded = await client.upload_file(video_file)
    fragment = uploaded.url.split("#", 1)[1]
    decoded: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(fragment + "=" * (-len(fragment) % 4))
    )
    assert decoded["size"] == str(video_file.stat().st_size)
    assert decoded["hash"] == uploaded.hash


async def test_parallel_chunk_writers_end_with_the_exact_bytes(
    emulator: Emulator, tmp_path: Path
) -> None:
    import asyncio

    src = make_file(tmp_path / "big.bin", 3 * 1024 * 1024 + 5)
    data = src.read_bytes()
    step = 256 * 1024
    async with aiohttp.ClientSession() as s:
        url = (await upload_urls(emulator, s))["upload_url"]
        statuses = await asyncio.gather(
            *(
                post_range(s, url, data[i : i + step], i, len(data))
                for i in range(0, len(data), step)
            )
        )
    assert sorted(r.status for r in statuses).count(200) == 1
    [file] = emulator.state.all("file")
    assert Path(file["path"]).read_bytes() == data


async def test_the_emulator_refuses_unknown_categories(client: va.Client, video_file: Path) -> None:
    uploaded = await client.upload_file(video_file)
    with pytest.raises(va.InvalidParameterError, match="channel"):
        await client.create_video(url=uploaded.url, title="t", channel="notacategory")
    assert (
        await client.create_video(url=uploaded.url, title="t", channel="webcam")
    ).channel == "webcam"


async def test_segment_faults_send_an_answer_in_pieces_with_its_exact_length(
    emulator: Emulator,
) -> None:
    emulator.faults.segment_bytes = 20
    emulator.faults.segment_delay = 0.05
    port = int(emulator.base_url.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            b"GET /me/videos?limit=100 HTTP/1.1\r\nHost: x\r\n"
            b"Authorization: Bearer demo-token\r\nConnection: close\r\n\r\n"
        )
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        first = await reader.read(65536)
        rest = await reader.read()
    finally:
        writer.close()
        await writer.wait_closed()
    assert length > 40
    assert len(first) <= 20  # the first piece alone: the rest came after a pause
    assert len(first) + len(rest) == length
    assert json.loads(first + rest)["list"] == []
