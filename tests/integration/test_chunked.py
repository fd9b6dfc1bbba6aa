"""The chunked, parallel, resumable upload against the emulator."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import fast_retry, make_file, stored_bytes
from vidapi_async._protocol import ChunkedUpload, regions
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

CHUNK = 256 * 1024


def data_posts(emulator: Emulator, since: int = 0) -> list[tuple[int, int]]:
    """The (first, last) of every range POST that carried bytes, in arrival order,
    from request number ``since`` on."""
    out = []
    for r in emulator.requests[since:]:
        m = re.fullmatch(r"bytes (\d+)-(\d+)/\d+", r.headers.get("Content-Range", ""))
        if r.path == "/upload" and m:
            out.append((int(m.group(1)), int(m.group(2))))
    return out


def test_regions_are_whole_chunks_and_cover_the_file() -> None:
    assert regions(10, 3, 4) == [(0, 4), (4, 8), (8, 10)]
    assert regions(1000, 4, 100) == [(0, 300), (300, 600), (600, 900), (900, 1000)]
    assert regions(5, 8, 100) == [(0, 5)]


def test_held_merges_adjacent_ranges() -> None:
    state = ChunkedUpload(100, "f.mp4", range_size=10, workers=1)
    state.absorb(202, {"Range": "10-19,0-9,30-39/100"}, b"")
    assert state.held == [(0, 19), (30, 39)]
    assert state.covers(5, 15) and not state.covers(15, 35)
    assert state.acknowledged == 30


async def test_parallel_ranges_arrive_out_of_order_and_assemble_exactly(
    emulator: Emulator, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "parallel.mp4", 20 * CHUNK + 99)
    seen: list[int] = []
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        uploaded = await client.upload_file(
            src,
            chunked=True,
            workers=4,
            range_size=CHUNK,
            progress=lambda done, total: seen.append(done),
        )
    assert stored_bytes(emulator, uploaded.url) == src.read_bytes()
    posts = data_posts(emulator)
    assert len(posts) == 21
    assert posts != sorted(posts)  # the workers interleave: not in file order
    assert seen == sorted(seen) and seen[-1] == src.stat().st_size
    assert uploaded.size == src.stat().st_size
    headers = next(r.headers for r in emulator.requests if "Content-Range" in r.headers)
    assert "Authorization" not in headers
    assert headers["Content-Type"] == "application/octet-stream"
    assert headers["Content-Disposition"] == 'attachment; filename="parallel.mp4"'


async def test_a_failed_chunk_is_resent_alone(emulator: Emulator, tmp_path: Path) -> None:
    src = make_file(tmp_path / "lossy.mp4", 16 * CHUNK)
    emulator.faults.update(
        {"error_rate": 0.3, "error_statuses": [502, 503], "paths": ["/upload"], "seed": 7}
    )
    async with client_for(emulator, retry=fast_retry(10)) as client:
        uploaded = await client.upload_file(src, chunked=True, workers=3, range_size=CHUNK)
    assert stored_bytes(emulator, uploaded.url) == src.read_bytes()
    posts = data_posts(emulator)
    resent = {p for p in posts if posts.count(p) > 1}
    assert resent, "the fault injection should have failed some chunks"
    assert set(posts) == {(i, i + CHUNK - 1) for i in range(0, 16 * CHUNK, CHUNK)}


async def test_a_dropped_connection_resumes_from_the_servers_ranges(
    emulator: Emulator, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "dropped.mp4", 12 * CHUNK + 5)
    emulator.faults.update({"reset_rate": 0.25, "paths": ["/upload"], "seed": 11})
    async with client_for(emulator, retry=fast_retry(10)) as client:
        uploaded = await client.upload_file(src, chunked=True, workers=2, range_size=CHUNK)
    assert stored_bytes(emulator, uploaded.url) == src.read_bytes()
    asks = [
        r for r in emulator.requests if r.headers.get("Content-Range", "").startswith("bytes */")
    ]
    assert asks, "after a dropped connection the client asks what the server holds"


async def test_a_new_client_resumes_an_interrupted_upload(
    emulator: Emulator, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "resumed.mp4", 10 * CHUNK)
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        session = await client.get_upload_session()
        # the upload dies part-way: every range POST after the sixth fails
        emulator.faults.update({"paths": ["/upload"], "error_statuses": [500]})
        acknowledged: list[int] = []

        def stop_after_six(done: int, total: int) -> None:
            acknowledged.append(done)
            if len(acknowledged) == 6:
                emulator.faults.error_rate = 1.0

        with pytest.raises(va.UploadRejectedError):
            await client.upload_file(
                src,
                upload_session=session,
                chunked=True,
                workers=1,
                range_size=CHUNK,
                progress=stop_after_six,
            )
    held_before = set(data_posts(emulator)[:6])
    assert acknowledged[-1] == 6 * CHUNK
    emulator.faults.error_rate = 0.0
    before = len(emulator.requests)
    async with client_for(emulator, retry=va.NO_RETRY) as fresh:
        uploaded = await fresh.upload_file(
            src, upload_session=session, chunked=True, workers=3, range_size=CHUNK, resume=True
        )
    assert stored_bytes(emulator, uploaded.url) == src.read_bytes()
    sent_after = set(data_posts(emulator, since=before))
    assert sent_after == {(i, i + CHUNK - 1) for i in range(6 * CHUNK, 10 * CHUNK, CHUNK)}
    assert not (sent_after & held_before), "ranges the server held were sent again"


async def test_resume_needs_the_session_and_chunked(client: va.Client, video_file: Path) -> None:
    with pytest.raises(va.InvalidArgumentError, match="resume"):
        await client.upload_file(video_file, resume=True)


async def test_non_ascii_names_travel_in_filename_star(emulator: Emulator, tmp_path: Path) -> None:
    src = make_file(tmp_path / "Été 東京.mp4", CHUNK + 1)
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        uploaded = await client.upload_file(src, chunked=True, workers=1, range_size=CHUNK)
    assert uploaded.name == "Été 東京"
    disposition = next(
        r.headers["Content-Disposition"]
        for r in emulator.requests
        if "Content-Disposition" in r.headers
    )
    assert "filename*=UTF-8''%C3%89t%C3%A9%20%E6%9D%B1%E4%BA%AC.mp4" in disposition
