"""upload_from_url: a remote file streamed through to the platform.

The source is ``tests/wire.py``'s scripted server (no code shared with the client); the
platform is the emulator. Checked: the bytes stored are the source's, credentials go to
the source only and the API's token never does, a broken source is retried from its
first byte, errors are typed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import stored_bytes
from tests.wire import Reply, Seen, WireServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

DATA = os.urandom(700_000)


async def test_streams_a_source_through_with_its_credentials_kept_apart(
    emulator: Emulator,
) -> None:
    def source(seen: Seen) -> Reply:
        return Reply(200, DATA, {"Content-Type": "video/mp4"}, segment=65536, pause=0.001)

    async with WireServer(source) as src, client_for(emulator) as client:
        uploaded = await client.upload_from_url(
            f"{src.url}/media/clip%20one.mp4?sig=abc", headers={"X-Source-Key": "s3cr3t"}
        )
    assert stored_bytes(emulator, uploaded.url) == DATA
    [get] = src.seen
    assert get.headers.get("x-source-key") == "s3cr3t"
    assert "authorization" not in get.headers  # the API's token stays with the API
    assert get.headers["user-agent"].startswith("vidapi-async/")
    for request in emulator.requests:
        assert "x-source-key" not in {k.lower() for k in request.headers}
    assert [f["name"] for f in emulator.state.all("file")] == ["clip one.mp4"]


async def test_a_source_without_a_length_is_spooled(emulator: Emulator) -> None:
    raw = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + DATA

    async with WireServer(lambda seen: Reply(raw=raw)) as src, client_for(emulator) as client:
        uploaded = await client.upload_from_url(f"{src.url}/x.mp4", filename="named.mp4")
    assert stored_bytes(emulator, uploaded.url) == DATA
    assert [f["name"] for f in emulator.state.all("file")] == ["named.mp4"]


async def test_a_source_cut_mid_body_is_asked_again_from_the_start(emulator: Emulator) -> None:
    def source(seen: Seen) -> Reply:
        if len(src.seen) == 1:
            return Reply(200, DATA, cut_after=100_000)
        return Reply(200, DATA)

    async with (
        WireServer(source) as src,
        client_for(emulator, retry=va.RetryPolicy(max_attempts=3, base_delay=0.01)) as client,
    ):
        uploaded = await client.upload_from_url(f"{src.url}/x.mp4")
    assert stored_bytes(emulator, uploaded.url) == DATA
    assert len(src.seen) == 2


async def test_source_errors_are_typed_and_credentials_never_follow_a_redirect(
    emulator: Emulator,
) -> None:
    def source(seen: Seen) -> Reply:
        if seen.path == "/gone":
            return Reply(404, b"no")
        return Reply(302, b"", {"Location": "http://elsewhere.invalid/x"})

    async with WireServer(source) as src, client_for(emulator, retry=va.NO_RETRY) as client:
        with pytest.raises(va.SourceError, match="HTTP 404") as info:
            await client.upload_from_url(f"{src.url}/gone")
        assert info.value.status == 404
        with pytest.raises(va.SourceError, match="redirected"):
            await client.upload_from_url(f"{src.url}/moved", headers={"Authorization": "k"})
        with pytest.raises(va.InvalidArgumentError, match="url"):
            await client.upload_from_url("ftp://example.com/x")
        with pytest.raises(va.InvalidArgumentError, match="headers"):
            await client.upload_from_url(f"{src.url}/x", headers=[("a", "b")])  # type: ignore[arg-type]
    assert list(emulator.state.all("file")) == []


async def test_a_batch_of_url_jobs_streams_each_and_a_rerun_skips_them(
    emulator: Emulator, tmp_path: Path
) -> None:
    bodies = {f"/v{i}.mp4": os.urandom(20_000 + i) for i in range(4)}

    def source(seen: Seen) -> Reply:
        return Reply(200, bodies[seen.path])

    async with WireServer(source) as src, client_for(emulator) as client:
        manifest = tmp_path / "m.csv"
        rows = "".join(f"{src.url}{p}?sig=x,{p[1:]}\n" for p in bodies)
        manifest.write_text("url,title\n" + rows, encoding="utf-8")
        journal = tmp_path / "j.sqlite"
        for run in (1, 2):
            jobs = va.batch.jobs_from_manifest(str(manifest), channel="news")
            async with va.BatchUploader(client, concurrency=2, journal=journal) as batch:
                results = [r async for r in batch.run(jobs)]
            expected = va.JobStatus.DONE if run == 1 else va.JobStatus.SKIPPED
            assert [r.status for r in results] == [expected] * 4
    videos = emulator.videos()
    assert sorted(v["title"] for v in videos) == sorted(p[1:] for p in bodies)
    for video in videos:
        assert stored_bytes(emulator, video["url"]) == bodies["/" + video["title"]]
    assert len(src.seen) == 4  # the re-run asked no source again


def test_a_job_has_a_path_or_a_url() -> None:
    with pytest.raises(va.InvalidArgumentError, match="exactly one of path= and url="):
        va.UploadJob(title="t", channel="news")
    with pytest.raises(va.InvalidArgumentError, match="exactly one of path= and url="):
        va.UploadJob(path="a.mp4", url="https://h/a.mp4", title="t", channel="news")
    job = va.UploadJob(url="https://h/a.mp4?sig=secret", title="t", channel="news")
    assert "secret" not in repr(job)
    assert job.where == "https://h/a.mp4"


async def test_only_an_explicit_create_lets_the_platform_fetch_a_public_url(
    emulator: Emulator,
) -> None:
    def source(seen: Seen) -> Reply:
        return Reply(200, DATA) if seen.path == "/public.mp4" else Reply(404, b"")

    async with WireServer(source) as src, client_for(emulator, retry=va.NO_RETRY) as client:
        video = await client.create_video(
            url=f"{src.url}/public.mp4", title="fetched", channel="news"
        )
        assert stored_bytes(emulator, f"{src.url}/public.mp4") == DATA
        assert video.title == "fetched"
        with pytest.raises(va.BadRequestError, match="HTTP 404"):
            await client.create_video(url=f"{src.url}/missing.mp4", title="t", channel="news")
    assert [s.path for s in src.seen] == ["/public.mp4", "/missing.mp4"]
    assert "authorization" not in src.seen[0].headers  # the platform fetched it, not us
