"""Mistakes a new user makes with uploads (a fresh user's report, issue 43), each refused
with a typed error that says what to do, before anything is sent: a progress callback
that is ``async def`` (called, never awaited: it would never run) or not callable; a web
address or a path under ``~`` given as a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def later(*args: Any) -> None:  # an async def callback: never awaited
    pass


class AsyncCallable:
    async def __call__(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("callback", [later, AsyncCallable(), "not callable"])
async def test_an_upload_refuses_a_progress_callback_it_could_not_call(
    emulator: Emulator, tmp_path: Path, callback: Any
) -> None:
    src = make_file(tmp_path / "m.mp4", 1000)
    async with client_for(emulator) as client:
        before = len(emulator.requests)
        with pytest.raises(va.InvalidArgumentError, match="progress") as info:
            await client.upload_file(src, progress=callback)
        with pytest.raises(va.InvalidArgumentError, match="progress"):
            await client.upload_video(src, title="t", channel="news", progress=callback)
        with pytest.raises(va.InvalidArgumentError, match="progress"):
            await client.uploads.from_url("http://127.0.0.1:9/a.mp4", progress=callback)
        assert len(emulator.requests) == before  # nothing sent
    if callback is later:
        assert "async" in str(info.value)


async def test_a_batch_refuses_an_async_progress_callback(emulator: Emulator) -> None:
    async with client_for(emulator) as client:
        with pytest.raises(va.InvalidArgumentError, match="progress"):
            va.BatchUploader(client, progress=later)


@pytest.mark.parametrize(
    ("path", "hint"),
    [
        ("https://example.com/a.mp4", "uploads.from_url"),
        ("http://example.com/a.mp4", "create_video(url="),
        ("~/nothing-here.mp4", "expanduser"),
    ],
)
async def test_a_missing_file_that_looks_like_a_url_or_home_says_what_to_do(
    emulator: Emulator, path: str, hint: str
) -> None:
    """Two mistakes a new user makes (a fresh user's report, issue 43): a web address given
    as a file, and ``~`` (not expanded). The error says so, and nothing is sent."""
    async with client_for(emulator) as client:
        with pytest.raises(va.FileError, match="no such file") as info:
            await client.upload_file(path)
        assert len(emulator.requests) == 0
    assert hint in str(info.value)


async def test_a_batch_job_s_missing_subtitle_is_named_as_its_subtitle(
    emulator: Emulator, tmp_path: Path
) -> None:
    """The batches guide attaches ``p.with_suffix(".srt")`` to every video: a video without
    one fails, and its error says that the missing file is the job's subtitle."""
    video = make_file(tmp_path / "clip2.mp4", 1000)
    srt = va.SubtitleSpec("fr", path=video.with_suffix(".srt"))
    job = va.UploadJob(path=video, title="t", channel="news", subtitles=[srt])
    async with client_for(emulator) as client, va.BatchUploader(client) as batch:
        [result] = [r async for r in batch.run([job])]
    assert isinstance(result.error, va.FileError)
    assert "no such file" in str(result.error)
    assert "the job's fr subtitle" in str(result.error)
    assert result.error.path == str(video.with_suffix(".srt"))
