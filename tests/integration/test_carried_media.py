"""Issue 39, "Media carried by the client": a batch job's thumbnail and subtitles named
by url are fetched by the client (through the source policy, with the job's
``headers``) and sent to the platform as files, the way video files go: the platform
is handed only its own upload host's urls, never the source's host.

The source host is ``tests/wire.py``'s server (no code shared with the client or the
emulator): what it sees is every request made to it, and who made it."""

from __future__ import annotations

import os
from pathlib import Path

import attrs
import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import stored_bytes
from tests.wire import Reply, Seen, WireServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

CLIP = os.urandom(6000)
JPEG = b"\xff\xd8\xff" + os.urandom(500)
PNG = b"\x89PNG\r\n\x1a\n" + os.urandom(300)
SRT = b"1\n00:00:00,500 --> 00:00:02,000\nHello\n\n"
KEY = "source-key-0123"


def source_host(seen: Seen) -> Reply:
    """Files for whoever shows the key; 403 otherwise."""
    if seen.headers.get("x-source-key") != KEY:
        return Reply(403, b"no key")
    files = {"/clip.mp4": CLIP, "/thumb.jpg": JPEG, "/thumb2.png": PNG, "/en.srt": SRT}
    return Reply(200, files[seen.path]) if seen.path in files else Reply(404, b"")


def job(media: str, thumbnail: str, **more: object) -> va.UploadJob:
    """A url job whose video and thumbnail come from ``media`` and ``thumbnail``."""
    return va.UploadJob(
        url=f"{media}/clip.mp4",
        headers={"X-Source-Key": KEY},
        title="carried",
        channel="news",
        thumbnail=thumbnail,
        **more,  # type: ignore[arg-type]
    )


async def test_thumbnails_and_subtitles_by_url_are_carried_through_the_client(
    emulator: Emulator, tmp_path: Path
) -> None:
    async with WireServer(source_host) as src, client_for(emulator) as client:
        host = src.url.split("//", 1)[1]
        subtitles = [va.SubtitleSpec("en", url=f"{src.url}/en.srt")]
        first = job(src.url, f"{src.url}/thumb.jpg", subtitles=subtitles)
        journal = tmp_path / "j.sqlite"
        async with va.BatchUploader(client, journal=journal) as batch:
            [result] = [r async for r in batch.run([first])]
        assert result.status is va.JobStatus.DONE, result.error
        # a re-run with another thumbnail: the update carries it too
        moved = job(src.url, f"{src.url}/thumb2.png", subtitles=subtitles)
        async with va.BatchUploader(client, journal=journal) as batch:
            [again] = [r async for r in batch.run([moved])]
        assert again.status is va.JobStatus.UPDATED, again.error
    [video] = emulator.videos()
    assert video["thumbnail_url"].startswith(emulator.upload_base + "/")
    assert stored_bytes(emulator, video["thumbnail_url"]) == PNG
    [sub] = emulator.state.children("subtitle", video["id"])
    assert sub["url"].startswith(emulator.upload_base + "/")
    assert stored_bytes(emulator, sub["url"]) == SRT
    # The platform holds only its own upload host's urls (above), and no request it
    # received names the source's host.
    assert all(host not in repr(request) for request in emulator.requests)
    # The source saw the client's own fetches, each with the job's headers.
    assert sorted(s.path for s in src.seen) == sorted(
        ["/clip.mp4", "/thumb.jpg", "/en.srt", "/thumb2.png"]
    )
    assert all(s.headers["x-source-key"] == KEY for s in src.seen)
    assert all(s.headers["user-agent"].startswith("vidapi") for s in src.seen)


def carrying(media: str, where: str, what: str, name: str) -> va.UploadJob:
    """A url job whose ``what`` (thumbnail or subtitles) is ``where/name``."""
    if what == "thumbnail":
        return job(media, f"{where}/{name}")
    subtitles = [va.SubtitleSpec("en", url=f"{where}/{name}")]
    return job(media, f"{media}/thumb.jpg", subtitles=subtitles)


@pytest.mark.parametrize("what", ["thumbnail", "subtitles"])
async def test_a_refused_carried_url_fails_the_job_before_anything_is_sent(
    emulator: Emulator, tmp_path: Path, what: str
) -> None:
    """Issue 38, second attack #2: the thumbnail's and subtitles' urls are judged by the
    source policy before the job's video file is fetched or sent, not after its video
    was published."""
    async with WireServer(source_host) as good, WireServer(source_host, host="127.0.0.2") as inner:
        policy = va.SourcePolicy(deny=["127.0.0.2/32"])
        async with client_for(emulator, source_policy=policy) as client:
            refused = carrying(
                good.url, inner.url, what, "thumb.jpg" if what == "thumbnail" else "en.srt"
            )
            async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
                [result] = [r async for r in batch.run([refused])]
    assert result.status is va.JobStatus.FAILED
    assert isinstance(result.error, va.SourceError) and "SourcePolicy.deny" in str(result.error)
    assert result.failed_at == what
    assert inner.seen == []
    assert good.seen == []  # not even the video's file was fetched
    assert emulator.videos() == []


@pytest.mark.parametrize("what", ["thumbnail", "subtitles"])
async def test_a_missing_carried_file_fails_the_job_before_its_video_exists(
    emulator: Emulator, tmp_path: Path, what: str
) -> None:
    """A thumbnail or subtitle the source answers 404 for fails the job at that step
    (not at ``live``), before the video is created: no video published without it; a
    re-run, once the file is there, makes the one video."""
    async with WireServer(source_host) as src, client_for(emulator) as client:
        journal = tmp_path / "j.sqlite"
        async with va.BatchUploader(client, journal=journal) as batch:
            [result] = [r async for r in batch.run([carrying(src.url, src.url, what, "gone")])]
        assert result.status is va.JobStatus.FAILED
        assert isinstance(result.error, va.SourceError) and "404" in str(result.error)
        assert result.failed_at == what
        assert emulator.videos() == []
        name = "thumb.jpg" if what == "thumbnail" else "en.srt"
        fixed = attrs.evolve(carrying(src.url, src.url, what, name), key=result.key)
        async with va.BatchUploader(client, journal=journal) as batch:
            [again] = [r async for r in batch.run([fixed])]
    assert again.status is va.JobStatus.DONE, again.error
    [video] = emulator.videos()
    assert stored_bytes(emulator, video["thumbnail_url"]) == JPEG


async def test_vidapi_batch_says_the_step_a_missing_thumbnail_failed_at(
    emulator: Emulator, tmp_path: Path
) -> None:
    def open_host(seen: Seen) -> Reply:
        return Reply(200, CLIP) if seen.path == "/clip.mp4" else Reply(404, b"")

    async with WireServer(open_host) as src:
        manifest = tmp_path / "m.csv"
        manifest.write_text(
            f"url,title,channel,thumbnail\n{src.url}/clip.mp4,t,news,{src.url}/gone.jpg\n"
        )
        env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
        code, out, err = await vidapi(
            "batch", str(manifest), "--journal", str(tmp_path / "j.sqlite"), env=env
        )
    assert code == 6, (out, err)
    assert "at thumbnail" in out + err, (out, err)
    assert emulator.videos() == []


async def test_an_update_whose_new_thumbnail_is_missing_sends_nothing(
    emulator: Emulator, tmp_path: Path
) -> None:
    """A done job run again with a new title and a new thumbnail that cannot be had:
    the update fails whole, its title not sent without its thumbnail."""
    async with WireServer(source_host) as src, client_for(emulator) as client:
        journal = tmp_path / "j.sqlite"
        first = job(src.url, f"{src.url}/thumb.jpg")
        async with va.BatchUploader(client, journal=journal) as batch:
            [done] = [r async for r in batch.run([first])]
        assert done.status is va.JobStatus.DONE, done.error
        edited = attrs.evolve(first, title="edited", thumbnail=f"{src.url}/gone.png")
        async with va.BatchUploader(client, journal=journal) as batch:
            [result] = [r async for r in batch.run([edited])]
    assert result.status is va.JobStatus.FAILED
    assert isinstance(result.error, va.SourceError) and "404" in str(result.error)
    [video] = emulator.videos()
    assert video["title"] == "carried"
