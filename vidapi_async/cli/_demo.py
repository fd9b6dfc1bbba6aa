"""``vidapi demo``: the whole mission against an in-process emulator, step by step."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from importlib import resources
from typing import TYPE_CHECKING

from .. import embed
from ..emulator import Emulator
from ..testing import client_for
from ._progress import output_console, upload_with_bar
from ._serve import stops_on_sigterm

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["run_demo"]

SRT = """1
00:00:00,500 --> 00:00:02,000
Hello from vidapi_async

2
00:00:02,200 --> 00:00:03,900
This subtitle was uploaded, then attached
"""


def _make_video(folder: str) -> str:
    """A small real video: a fresh 4 s WebM (test pattern and tone) made by ffmpeg when
    it is installed, else the same kind of clip bundled with the package."""
    path = os.path.join(folder, "vidapi-demo.webm")
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is not None:
        made = subprocess.run(  # noqa: S603 - fixed arguments, our own output file
            [
                ffmpeg,
                "-v",
                "error",
                "-y",
                "-f",
                "lavfi",
                "-i",
                "testsrc=size=320x180:rate=15:duration=4",
                "-f",
                "lavfi",
                "-i",
                "sine=frequency=440:duration=4",
                "-c:v",
                "libvpx",
                "-b:v",
                "120k",
                "-c:a",
                "libvorbis",
                "-ac",
                "1",
                "-shortest",
                path,
            ],
            capture_output=True,
            timeout=120,
            check=False,
        )
        if made.returncode == 0:
            return path
    with resources.as_file(
        resources.files("vidapi_async.emulator").joinpath("sample.webm")
    ) as sample:
        shutil.copyfile(sample, path)
    return path


async def run_demo(console: Console, *, serve: bool, ports: tuple[int, int] = (0, 0)) -> int:
    async with stops_on_sigterm(console):
        await _demo(console, serve=serve, ports=ports)
    return 0


async def _demo(console: Console, *, serve: bool, ports: tuple[int, int]) -> None:
    """Every step's result (ids, addresses, the embed code) on stdout, where ``| grep``
    finds it; the upload's bar and "Ctrl-C to stop" on ``console`` (stderr)."""
    out = output_console()
    step = 0

    def say(text: str) -> None:
        nonlocal step
        step += 1
        out.print(f"[bold cyan]{step:>2}.[/bold cyan] {text}", highlight=False, soft_wrap=True)

    with tempfile.TemporaryDirectory(prefix="vidapi-demo-") as folder:
        async with Emulator(port=ports[0], upload_port=ports[1]) as emu:
            out.print(
                f"Emulator API at {emu.base_url}, uploads at {emu.upload_base}\n",
                highlight=False,
                soft_wrap=True,
            )
            async with client_for(emu) as client:
                video_path = await asyncio.to_thread(_make_video, folder)
                say(f"made a small real video file: {video_path}")
                session = await client.uploads.get_session()
                say("got an upload address (GET /file/upload)")
                uploaded = await upload_with_bar(
                    client, video_path, console, upload_session=session
                )
                say(f"uploaded it: {uploaded.size} bytes, format {uploaded.format}")
                video = await client.create_video(
                    url=uploaded.url, title="vidapi demo", channel="tech", published=True
                )
                say(f"created video {video.id} ({video.title!r} in {video.channel})")
                srt = os.path.join(folder, "en.srt")
                await asyncio.to_thread(_write, srt, SRT)
                subtitle = await client.subtitles.upload(video.id, srt, language="en")
                say(f"attached subtitle {subtitle.id} ({subtitle.language}, {subtitle.format})")
                await client.set_password(video.id, "demo-only-password")
                read = await client.get_video(video.id, ["password_protected"])
                say(f"protected it with a password: password_protected = {read.password_protected}")
                await client.set_password(video.id, None)
                read = await client.get_video(video.id, ["password_protected"])
                say(f"removed the password: password_protected = {read.password_protected}")
                live = await client.create_live_stream(title="vidapi demo live", channel="tech")
                say(f"created live stream {live.id} (mode = {live.mode}, on air = {live.onair})")
                params = {"autoplay": True, "mute": True}
                url = embed.iframe_url(video.id, params, embed_url=emu.embed_url)
                say(f"embed URL: {url}")
                out.print(
                    embed.iframe_html(video.id, params, embed_url=emu.embed_url),
                    highlight=False,
                    soft_wrap=True,
                )
                out.print(
                    embed.sdk_html(video.id, params, sdk_url=emu.sdk_url),
                    highlight=False,
                    soft_wrap=True,
                )
            out.print("\n[green]every step done[/green]")
            if serve:
                out.print(f"Open {url} in a browser to play it.", highlight=False, soft_wrap=True)
                console.print("Ctrl-C to stop.")
                await asyncio.Event().wait()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
