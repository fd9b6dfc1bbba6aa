"""The migrating guide's manifests and program, run against the emulator."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

import vidapi_async as va
from vidapi_async.batch import jobs_from_source
from vidapi_async.emulator import Emulator

from .conftest import make_file
from .test_docs import doc_block, run_fragment
from .test_migrate_feed import serving

SRT = "1\n00:00:00,500 --> 00:00:02,000\nHello\n\n"
IMAGES = "https://images.example.com"
"""Where the guide's manifests name an image by url: served here by the test (the
client fetches it and carries it to the platform)."""


def folder_with_files(tmp_path: Path) -> Path:
    make_file(tmp_path / "a.mp4", 5000)
    make_file(tmp_path / "b.mp4", 6000)
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    (tmp_path / "a.srt").write_text(SRT, encoding="utf-8")
    for image in ("a.jpg", "b.jpg"):
        (tmp_path / image).write_bytes(b"\xff\xd8\xff" + b"\0" * 16)
    return tmp_path


@contextlib.asynccontextmanager
async def media_of(folder: Path) -> AsyncIterator[str]:
    """The files of ``folder`` served over http://127.0.0.1: its address."""

    async def serve(request: web.Request) -> web.FileResponse:
        return web.FileResponse(folder / request.match_info["name"])

    async with serving(serve) as host:
        yield host


def landed(emulator: Emulator) -> dict[str, dict[str, object]]:
    return {str(v["title"]): v for v in emulator.videos()}


@pytest.mark.parametrize(("block", "name"), [("csv", "library.csv"), ("jsonl", "library.jsonl")])
async def test_the_guides_manifests_land_as_written(
    client: va.Client, emulator: Emulator, tmp_path: Path, block: str, name: str
) -> None:
    folder = folder_with_files(tmp_path)
    text = doc_block("migrate-csv") if block == "csv" else doc_block("migrate-jsonl")
    async with media_of(folder) as host:
        (folder / name).write_text(text.replace(IMAGES, host), encoding="utf-8")
        async with va.BatchUploader(client, journal=folder / "j.sqlite") as batch:
            jobs = jobs_from_source(str(folder / name), channel=None)
            results = [r async for r in batch.run(jobs)]
    assert all(r.status is va.JobStatus.DONE for r in results), [r.error for r in results]
    videos = landed(emulator)
    dawn, dusk = videos["Harbour at dawn"], videos["Harbour at dusk"]
    assert dawn["description"] == "Shot in 2019.\nSecond line."
    assert dawn["geoblocking"] == ["deny", "fr"] and dusk["private"] is True
    playlists = {p["name"]: len(p["videos"]) for p in emulator.state.all("playlist")}
    assert playlists == {"Best of": 1, "Harbours": 2}


async def test_the_guides_feed_lands_as_written(
    client: va.Client, emulator: Emulator, tmp_path: Path
) -> None:
    folder = folder_with_files(tmp_path)
    async with media_of(folder) as host:
        feed = folder / "library.xml"
        feed.write_text(doc_block("migrate-rss").replace("MEDIA", host), encoding="utf-8")
        async with va.BatchUploader(client) as batch:
            [result] = [r async for r in batch.run(jobs_from_source(str(feed), channel="news"))]
    assert result.status is va.JobStatus.DONE, result.error
    [video] = emulator.videos()
    assert (video["title"], video["channel"], video["tags"][:2]) == (
        "Harbour at dawn",
        "travel",
        ["boats", "harbour"],
    )


async def test_the_guides_program_runs(
    client: va.Client,
    emulator: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = folder_with_files(tmp_path)
    monkeypatch.chdir(folder)
    async with media_of(folder) as host:
        text = doc_block("migrate-csv").replace(IMAGES, host)
        (folder / "library.csv").write_text(text, encoding="utf-8")
        await run_fragment(doc_block("migrate-python"), client=client)
    out = capsys.readouterr().out
    assert out.startswith("create 2, update 0, skip 0\n") and out.count(" done x") == 2
    assert len((folder / "mapping.csv").read_text().splitlines()) == 3
    assert os.path.exists(folder / "migration.sqlite")
