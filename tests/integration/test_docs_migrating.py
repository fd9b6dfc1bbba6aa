"""The migrating guide's manifests and program, run against the emulator."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_docs import doc_block, run_fragment
from tests.integration.test_migrate_feed import serving
from vidapi_async.batch import jobs_from_source
from vidapi_async.emulator import Emulator

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


def files_of(folder: Path) -> Callable[[web.Request], Awaitable[web.FileResponse]]:
    """A request handler serving ``folder``'s files by name."""

    async def serve(request: web.Request) -> web.FileResponse:
        return web.FileResponse(folder / request.match_info["name"])

    return serve


@contextlib.asynccontextmanager
async def media_of(folder: Path) -> AsyncIterator[str]:
    """The files of ``folder`` served over http://127.0.0.1: its address."""
    async with serving(files_of(folder)) as host:
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


async def test_the_guides_published_feed_migrates_its_first_largest_rendition(
    client: va.Client, emulator: Emulator, tmp_path: Path
) -> None:
    folder = folder_with_files(tmp_path)
    (folder / "a.jpg").write_bytes(b"\xff\xd8\xff" + b"\0" * 32)
    serve = files_of(folder)

    async with serving(serve) as host:
        feed = folder / "library.xml"
        feed.write_text(doc_block("migrate-rss-published").replace("MEDIA", host), encoding="utf-8")
        left: list[va.LeftOut] = []
        async with va.BatchUploader(client) as batch:
            jobs = jobs_from_source(str(feed), channel="news", left_out=left.append)
            [result] = [r async for r in batch.run(jobs)]
    assert result.status is va.JobStatus.DONE, result.error
    assert result.key == "https://www.dailymotion.com/video/x21kjg_harbour"
    [video] = emulator.videos()
    assert (video["title"], video["channel"]) == ("Harbour at dawn", "travel")
    assert video["description"] == "Shot in 2019 & kept.\n\nAuthor: old"  # paragraphs
    stored = emulator.state.get("file", video["url"])
    assert (
        stored is not None and Path(stored["path"]).read_bytes() == (folder / "a.mp4").read_bytes()
    )
    assert [x.reason for x in left] == ["elements not used: author, pubDate, media:credit"]


async def test_the_guides_kaltura_csv_migrates_through_its_map(
    client: va.Client, emulator: Emulator, tmp_path: Path
) -> None:
    folder = folder_with_files(tmp_path)
    (folder / "a.jpg").write_bytes(b"\xff\xd8\xff" + b"\0" * 32)
    serve = files_of(folder)

    columns = {"title": "title", "description": "description", "tags": "tags", "url": "url"}
    columns["thumbnail"] = "thumbnailUrl"
    async with serving(serve) as host:
        path = folder / "kaltura.csv"
        path.write_text(doc_block("migrate-kaltura").replace("MEDIA", host), encoding="utf-8")
        left: list[va.LeftOut] = []
        jobs = jobs_from_source(
            str(path), channel="travel", columns=columns, list_separator=",", left_out=left.append
        )
        async with va.BatchUploader(client) as batch:
            [result] = [r async for r in batch.run(jobs)]
    assert result.status is va.JobStatus.DONE, result.error
    [video] = emulator.videos()
    assert (video["title"], video["description"]) == ("Harbour at dawn", "Shot in 2019, at dawn")
    assert video["tags"][:2] == ["boats", "harbour"]
    assert [(x.where.rsplit("/", 1)[-1], x.status) for x in left] == [
        ("kaltura.csv", "ignored"),
        ("kaltura.csv line 4", "failed"),
    ]
    assert left[1].reason.startswith("url: ftp:// is not taken")
