"""The emulator as an independent, faithful and safe implementation of the platform,
checked over raw HTTP (aiohttp as a plain client, or raw sockets), not through ours."""

from __future__ import annotations

import ast
import asyncio
import io
import os
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yarl

import vidapi_async as va
from tests.children import default_signals
from tests.conftest import make_file
from vidapi_async.emulator import OTHER_TOKEN, Emulator
from vidapi_async.emulator._formdata import Malformed, parse_disposition
from vidapi_async.testing import client_for

DEMO = {"Authorization": "Bearer demo-token"}
OTHER = {"Authorization": f"Bearer {OTHER_TOKEN}"}
PACKAGE = Path(va.__file__).parent


# --- independent ---------------------------------------------------------------------------


def test_nothing_in_the_emulator_imports_the_client() -> None:
    offenders = []
    for path in sorted((PACKAGE / "emulator").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                outside = node.level >= 2 or (
                    node.level == 0
                    and module.split(".")[0] == "vidapi_async"
                    and not module.startswith("vidapi_async.emulator")
                )
                if outside:
                    offenders.append(f"{path.name}:{node.lineno} from {'.' * node.level}{module}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")
                    if top[0] == "vidapi_async" and top[1:2] != ["emulator"]:
                        offenders.append(f"{path.name}:{node.lineno} import {alias.name}")
    assert offenders == []


@pytest.mark.parametrize(
    ("header", "filename"),
    [
        ('form-data; name="file"; filename="a.mp4"', "a.mp4"),
        # a filename*= inside a quoted filename is part of the name, not a parameter
        (
            'form-data; name="file"; filename="x; filename*=UTF-8\'\'evil.exe"',
            "x; filename*=UTF-8''evil.exe",
        ),
        ("attachment; filename=\"fallback.mp4\"; filename*=UTF-8''%C3%A9t%C3%A9.mp4", "été.mp4"),
        ('form-data; name="file"; filename="q\\"uote.mp4"', 'q"uote.mp4'),
        ("form-data; name=file; filename=plain.mp4", "plain.mp4"),
    ],
)
def test_content_disposition_is_parsed_by_its_grammar(header: str, filename: str) -> None:
    assert parse_disposition(header).filename == filename


@pytest.mark.parametrize(
    "header",
    [
        "attachment; filename*=UTF-8''a%00b.mp4",
        "attachment; filename*=UTF-8''%FF%FE.mp4",
        'form-data; name="file"; filename="unterminated',
        'form-data; name="file"; name="twice"',
        "; filename=x",
    ],
)
def test_bad_content_disposition_is_malformed(header: str) -> None:
    with pytest.raises(Malformed):
        parse_disposition(header)


# --- faithful ------------------------------------------------------------------------------


async def test_me_public_videos_logout_and_trailing_slashes(
    emulator: Emulator, tmp_path: Path
) -> None:
    async with client_for(emulator) as client:
        up = await client.upload_file(make_file(tmp_path / "m.mp4", 1000))
        public = await client.create_video(url=up.url, title="public", channel="news")
        await client.create_video(url=up.url, title="draft", channel="news", published=False)
        await client.create_video(url=up.url, title="secret", channel="news", password="pw1234")
    base = emulator.base_url
    async with aiohttp.ClientSession() as s:
        for path in ("/me", "/me/"):
            async with s.get(
                f"{base}{path}?fields=id,screenname,username,fullname", headers=DEMO
            ) as r:
                assert r.status == 200
                assert await r.json() == {
                    "id": "xdemou",
                    "screenname": "Demo User",
                    "username": "demo",
                    "fullname": "Demo User",
                }
        for headers in ({}, OTHER):  # anyone lists only what is public
            async with s.get(f"{base}/videos/?fields=id,title&limit=10", headers=headers) as r:
                page = await r.json()
            assert r.status == 200
            assert [v["title"] for v in page["list"]] == ["public"]
            assert page["total"] == 1 and page["has_more"] is False and page["page"] == 1
        async with s.get(f"{base}/logout", headers={"Authorization": "Bearer x"}) as r:
            assert r.status == 401
    assert public.id


async def test_unknown_routes_and_methods_answer_in_the_platform_format(
    emulator: Emulator,
) -> None:
    base = emulator.base_url
    async with aiohttp.ClientSession() as s:
        for method, url, status in [
            ("GET", f"{base}/nothing/here", 404),
            ("PUT", f"{base}/me/videos", 405),
            ("PATCH", f"{base}/video/x1", 405),
            ("GET", f"{emulator.upload_base}/nothing", 404),
            ("GET", f"{emulator.upload_base}/upload", 405),
        ]:
            async with s.request(method, url, headers=DEMO) as r:
                assert r.status == status, (method, url)
                assert r.content_type == "application/json"
                assert (await r.json())["error"]["code"] == status


async def test_another_account_is_refused_everywhere(emulator: Emulator, tmp_path: Path) -> None:
    async with client_for(emulator) as demo:
        up = await demo.upload_file(make_file(tmp_path / "m.mp4", 1000))
        private = await demo.create_video(url=up.url, title="p", channel="news", published=False)
        public = await demo.create_video(url=up.url, title="o", channel="news")
        srt = tmp_path / "en.srt"
        srt.write_text("1\n00:00:00,000 --> 00:00:01,000\nHi\n", encoding="utf-8")
        sub = await demo.upload_subtitle(public.id, srt, language="en")
    async with client_for(emulator, access_token=OTHER_TOKEN, retry=va.NO_RETRY) as other:
        refusals = [
            other.get_video(private.id),
            other.get_video(public.id, ["id", "live_publish_url"]),
            other.update_video(public.id, title="mine now"),
            other.set_password(public.id, "hijack1"),
            other.delete_video(public.id),
            other.create_video(url=up.url, title="stolen", channel="news"),  # demo's file
            other.create_subtitle(public.id, language="fr", url="https://x.test/a.srt"),
            other.list_subtitles(private.id),
        ]
        for call in refusals:
            with pytest.raises(va.ForbiddenError):
                await call
        assert (await other.get_video(public.id, ["id", "title"])).title == "o"
        async with aiohttp.ClientSession() as s:
            async with s.delete(f"{emulator.base_url}/subtitle/{sub.id}", headers=OTHER) as r:
                assert r.status == 403
    assert len(emulator.videos()) == 2
    assert emulator.state.get("subtitle", sub.id or "") is not None


async def test_a_new_video_is_processing_then_ready(tmp_path: Path) -> None:
    async with Emulator(encoding_delay=0.6) as emu, client_for(emu) as client:
        up = await client.upload_file(make_file(tmp_path / "m.mp4", 1000))
        video = await client.create_video(url=up.url, title="t", channel="news")
        seen = []
        while True:
            now = await client.get_video(video.id, ["status", "encoding_progress"])
            seen.append((now.status, now.fields["encoding_progress"]))
            if now.status == "ready":
                break
            await asyncio.sleep(0.1)  # polling the emulator, as a user would; not a check
    assert seen[0][0] == "processing" and 0 <= seen[0][1] < 100
    assert seen[-1] == ("ready", 100)
    progress = [p for s, p in seen if s == "processing"]
    assert progress == sorted(progress)


async def test_deleting_a_video_and_a_subtitle(emulator: Emulator, tmp_path: Path) -> None:
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        up = await client.upload_file(make_file(tmp_path / "m.mp4", 1000))
        video = await client.create_video(url=up.url, title="t", channel="news")
        sub = await client.create_subtitle(video.id, language="en", url="https://x.test/en.srt")
        async with aiohttp.ClientSession() as s:
            async with s.delete(f"{emulator.base_url}/subtitle/{sub.id}/", headers=DEMO) as r:
                assert r.status == 200
        assert await client.list_subtitles(video.id) == []
        await client.delete_video(video.id)
        with pytest.raises(va.NotFoundError):
            await client.get_video(video.id)


def test_the_store_finds_by_owner_and_tag_through_its_indexes() -> None:
    from vidapi_async.emulator._state import State

    store = State()
    try:
        plans = [
            " ".join(str(r[-1]) for r in store._db.execute(f"explain query plan {sql}", args))
            for sql, args in [
                (
                    "select data from objects where kind = ? and owner = ? order by created",
                    ("video", "x"),
                ),
                ("select video from tags where owner = ? and tag in (?)", ("x", "t")),
                ("select data from objects where kind = ? and parent = ?", ("subtitle", "x")),
            ]
        ]
    finally:
        store.close()
    assert all("USING INDEX" in plan or "USING COVERING INDEX" in plan for plan in plans), plans


# --- safe to leave running -----------------------------------------------------------------


async def _upload_address(s: aiohttp.ClientSession, emu: Emulator) -> yarl.URL:
    async with s.get(f"{emu.base_url}/file/upload", headers=DEMO) as r:
        return yarl.URL((await r.json())["upload_url"], encoded=True)


def _parts(emu: Emulator) -> list[str]:
    return [n for n in os.listdir(emu._p().files_dir) if n.endswith(".part")]


async def test_hostile_uploads_get_4xx_and_leave_nothing_behind(emulator: Emulator) -> None:
    good = b'--B\r\nContent-Disposition: form-data; name="file"; filename="a.mp4"\r\n\r\ndata\r\n--B--\r\n'
    cases: list[tuple[dict[str, str], bytes]] = [
        ({"Content-Type": "multipart/form-data"}, good),  # no boundary
        ({"Content-Type": "multipart/form-data; boundary=B"}, good[:-8]),  # never closed
        ({"Content-Type": "multipart/form-data; boundary=B"}, b"garbage without any boundary"),
        (
            {"Content-Type": "multipart/form-data; boundary=B"},
            good.replace(b'filename="a.mp4"', b"filename*=UTF-8''a%00.mp4"),
        ),
        (
            {"Content-Type": "multipart/form-data; boundary=B"},
            good.replace(b"Content-Disposition: ", b""),
        ),
        ({"Content-Range": "bytes 0-3/1000000000000000"}, b"data"),
        ({"Content-Range": "bytes 5-3/10"}, b"data"),
        (
            {
                "Content-Range": "bytes 0-3/10",
                "Content-Disposition": "attachment; filename*=UTF-8''%00",
            },
            b"data",
        ),
    ]
    async with aiohttp.ClientSession() as s:
        for headers, body in cases:
            url = await _upload_address(s, emulator)
            async with s.post(url, data=body, headers=headers) as r:
                assert 400 <= r.status < 500, (headers, r.status, await r.text())
                assert "error" in await r.json()
            async with s.get(str(url).replace("/upload?", "/progress?")) as r:
                assert (await r.json())["state"] in ("starting", "error")  # never "finishing"
    assert _parts(emulator) == []


async def test_bad_start_times_are_refused(emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as s:
        for value in ("soon", "１２３", "9" * 40, "-5", "1e9"):
            form = {"title": "l", "channel": "news", "mode": "live", "start_time": value}
            async with s.post(f"{emulator.base_url}/me/videos", headers=DEMO, data=form) as r:
                assert r.status == 400, value
                assert (await r.json())["error"]["error_data"]["param"] == "start_time"
    assert emulator.videos() == []


async def test_two_uploads_to_one_address_at_once_one_wins(emulator: Emulator) -> None:
    size = 3 * 1024 * 1024
    emulator.faults.latency = 0.0

    def body(fill: bytes) -> aiohttp.FormData:
        form = aiohttp.FormData()
        form.add_field("file", io.BytesIO(fill * size), filename=f"{fill.decode()}.mp4")
        return form

    async with aiohttp.ClientSession() as s:
        url = await _upload_address(s, emulator)

        async def post(fill: bytes) -> tuple[int, Any]:
            async with s.post(url, data=body(fill)) as r:
                return r.status, await r.json()

        results = await asyncio.gather(post(b"a"), post(b"b"))
    statuses = sorted(status for status, _ in results)
    assert statuses == [200, 409]
    [winner] = [data for status, data in results if status == 200]
    stored = emulator.state.get("file", winner["url"].split("#")[0])
    data = Path(stored["path"]).read_bytes()
    assert data in (b"a" * size, b"b" * size)  # never a mixed file


async def test_a_body_shorter_than_its_content_length_does_not_hold_the_connection() -> None:
    async with Emulator(body_timeout=0.5) as emu:
        async with aiohttp.ClientSession() as s:
            url = await _upload_address(s, emu)
        port = int(emu.upload_base.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(
                f"POST {url.raw_path_qs} HTTP/1.1\r\nHost: x\r\n".encode()
                + b"Content-Type: application/octet-stream\r\nContent-Range: bytes 0-999/1000\r\n"
                + b"Content-Length: 1000\r\n\r\n"
                + b"x" * 10
            )
            await writer.drain()
            rest = await asyncio.wait_for(reader.read(), 10)  # closed by the server
        finally:
            writer.close()
            await writer.wait_closed()
        assert b"200 OK" not in rest


# --- TLS -----------------------------------------------------------------------------------


async def test_over_tls_the_whole_mission_runs_on_https(tmp_path: Path, srt_file: Path) -> None:
    async with Emulator(tls=True) as emu:
        assert emu.base_url.startswith("https://") and emu.upload_base.startswith("https://")
        assert emu.ca_file is not None and Path(emu.ca_file).is_file()
        async with client_for(emu) as client:
            video = await client.upload_video(
                make_file(tmp_path / "m.mp4", 300_000), title="t", channel="news"
            )
            chunked = await client.upload_file(
                make_file(tmp_path / "c.mp4", 300_000), chunked=True, range_size=65536
            )
            await client.upload_subtitle(video.id, srt_file, language="en")
        assert chunked.url.startswith("https://")
        async with aiohttp.ClientSession() as s:  # no trust: the certificate is refused
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                await s.get(f"{emu.base_url}/me", headers=DEMO)


@pytest.mark.usefixtures("parent_ignores_signals")
async def test_vidapi_serve_tls_prints_its_certificate_and_serves_https(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vidapi_async.cli", "serve", "--tls", "--port", "0",
        "--upload-port", "0", "--control-secret", "s3cret-control",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        preexec_fn=default_signals,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines: dict[str, str] = {}
        while "Ctrl-C to stop." not in lines:
            line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
            assert line, "serve exited early"
            key, _, value = line.partition(":")
            lines[key.strip() if value else line.strip()] = value.strip().split(" ")[0]
        api, ca = lines["API"], lines["CA file"]
        assert api.startswith("https://127.0.0.1:")
        import ssl

        trust = ssl.create_default_context(cafile=ca)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=trust)) as s:
            async with s.get(f"{api}/me?fields=username", headers=DEMO) as r:
                assert (await r.json())["username"] == "demo"
            async with s.get(f"{api}/_emulator/stats") as r:
                assert r.status == 403
            control = {"X-Emulator-Control": "s3cret-control"}
            async with s.get(f"{api}/_emulator/stats", headers=control) as r:
                assert r.status == 200
        # SIGTERM (a process manager's stop) ends it as Ctrl-C does: its folder, with the
        # certificate's private key, goes with it (before: left in the temp folder).
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 30) == 0
        assert not Path(ca).parent.exists()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
