"""The recipes of docs/recipes/, each run as the complete program it is, against the
emulator (pointed at it through VIDAPI_BASE_URL and VIDAPI_TOKEN, as `vidapi serve`
prints them), and checked from outside: what the emulator stored, what a browser or a
source server sees."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp

import vidapi_async as va
from vidapi_async.emulator import Emulator

from .conftest import make_file, stored_bytes
from .test_docs import doc_block, emulator_env


@asynccontextmanager
async def serving(code: str, cwd: Path, env: dict[str, str]) -> AsyncIterator[str]:
    """Run a program that serves until SIGTERM; its 'listening on URL' address. It must
    then exit 0."""
    (cwd / "program.py").write_text(code, encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "program.py",
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        found = re.match(r"listening on (http://\S+)", line)
        if found is None:
            proc.kill()
            raise AssertionError(line + (await proc.stderr.read()).decode())
        yield found.group(1)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()


async def test_web_upload_streams_a_browser_upload_and_answers_the_embed(
    emulator: Emulator, tmp_path: Path
) -> None:
    movie = make_file(tmp_path / "holiday.mp4", 300_000)
    env = {**emulator_env(emulator), "PORT": "0"}
    async with (
        serving(doc_block("web-upload"), tmp_path, env) as address,
        aiohttp.ClientSession() as browser,
    ):
        async with browser.get(address) as page:
            assert 'enctype="multipart/form-data"' in await page.text()
        form = aiohttp.FormData()
        form.add_field("title", "Holiday <3")
        form.add_field("file", movie.read_bytes(), filename="holiday.mp4")
        async with browser.post(f"{address}/upload", data=form) as answer:
            assert answer.status == 200, await answer.text()
            text = await answer.text()
        form = aiohttp.FormData()
        form.add_field("title", "   ")
        form.add_field("file", b"x", filename="x.mp4")
        async with browser.post(f"{address}/upload", data=form) as refused:
            assert refused.status == 400
            assert "title" in await refused.text()
    [video] = emulator.videos()
    assert video["title"] == "Holiday <3"
    assert "<p>Holiday &lt;3</p>" in text
    assert f'src="{emulator.embed_url}/embed/video/{video["id"]}"' in text
    assert stored_bytes(emulator, video["url"]) == movie.read_bytes()


async def test_webhook_receiver_publishes_once_encoding_is_done(
    emulator: Emulator, client: va.Client, video_file: Path, tmp_path: Path
) -> None:
    env = {**emulator_env(emulator), "PORT": "0", "WEBHOOK_SECRET": "s" * 32}
    async with serving(doc_block("webhook-publish"), tmp_path, env):
        hook = await client.get_webhook()
        assert hook is not None and hook.url.startswith("http://127.0.0.1:")
        video = await client.upload_video(
            video_file, title="later", channel="news", published=False
        )
        assert emulator.videos()[0]["published"] is False
        for _ in range(600):  # until the receiver has published it, or 60 s
            if emulator.videos()[0]["published"]:
                break
            await asyncio.sleep(0.1)
    assert emulator.videos()[0]["published"] is True
    assert emulator.videos()[0]["id"] == video.id
    delivered = [d for d in emulator.webhook_deliveries if d["status"] == 204]
    assert delivered, emulator.webhook_deliveries
    assert await client.get_webhook() is None  # removed on SIGTERM
