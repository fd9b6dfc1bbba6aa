"""Upload from anything: bytes, file objects (seekable or not), async iterables.

Checked at the emulator, over real HTTP: the bytes it stored are the source's, the
name it saw is the source's (or ``upload``), and a source of the wrong size is never
stored."""

from __future__ import annotations

import asyncio
import io
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import stored_bytes
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

DATA = os.urandom(300_000)


def names(emu: Emulator) -> list[str]:
    return [f["name"] for f in emu.state.all("file")]


async def chunks(data: bytes, piece: int = 7000) -> AsyncIterator[bytes]:
    for i in range(0, len(data), piece):
        await asyncio.sleep(0)
        yield data[i : i + piece]


def pipe_with(data: bytes) -> tuple[io.BufferedReader, threading.Thread]:
    """A non-seekable source: the read end of a pipe a thread writes ``data`` into."""
    r, w = os.pipe()

    def feed() -> None:
        with os.fdopen(w, "wb") as out:
            out.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    return os.fdopen(r, "rb"), writer


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview"])
async def test_bytes_like_sources(emulator: Emulator, kind: str) -> None:
    source = {"bytes": DATA, "bytearray": bytearray(DATA), "memoryview": memoryview(DATA)}[kind]
    async with client_for(emulator) as client:
        uploaded = await client.upload_file(source)
    assert stored_bytes(emulator, uploaded.url) == DATA
    assert names(emulator) == ["upload"]


async def test_a_seekable_file_object_from_where_it_stands(
    emulator: Emulator, tmp_path: Path
) -> None:
    path = tmp_path / "clip.mp4"
    path.write_bytes(b"HEADER" + DATA)
    async with client_for(emulator) as client:
        with open(path, "rb") as f:
            f.seek(6)
            uploaded = await client.upload_file(f)
        from_memory = await client.upload_file(io.BytesIO(DATA), filename="mem.mp4")
    assert stored_bytes(emulator, uploaded.url) == DATA
    assert stored_bytes(emulator, from_memory.url) == DATA
    assert sorted(names(emulator)) == ["clip.mp4", "mem.mp4"]


async def test_a_seekable_source_is_read_again_on_a_retry(tmp_path: Path) -> None:
    faults = Faults(reset_rate=1.0, paths=("/upload",), seed=1)
    async with Emulator(faults=faults) as emu:
        async with client_for(emu, retry=va.RetryPolicy(max_attempts=3, base_delay=0.5)) as client:
            source = io.BytesIO(DATA)
            task = asyncio.create_task(client.upload_file(source))
            while not [r for r in emu.requests if r.host == "upload"]:  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            emu.faults.reset_rate = 0.0  # the first attempt was cut; the next ones pass
            uploaded = await task
        assert stored_bytes(emu, uploaded.url) == DATA
        assert len([r for r in emu.requests if r.host == "upload"]) >= 2


async def test_a_pipe_streams_through_with_size_and_is_spooled_without(
    emulator: Emulator,
) -> None:
    async with client_for(emulator) as client:
        f, writer = pipe_with(DATA)
        with f:
            streamed = await client.upload_file(f, size=len(DATA))
        await asyncio.to_thread(writer.join)
        f, writer = pipe_with(DATA)
        with f:
            spooled = await client.upload_file(f)
        await asyncio.to_thread(writer.join)
    assert stored_bytes(emulator, streamed.url) == DATA
    assert stored_bytes(emulator, spooled.url) == DATA


async def test_async_iterables_with_and_without_a_size(emulator: Emulator) -> None:
    async with client_for(emulator) as client:
        streamed = await client.upload_file(chunks(DATA), size=len(DATA), filename="a.mp4")
        spooled = await client.upload_file(chunks(DATA))
        forced = await client.upload_file(
            chunks(DATA), size=len(DATA), chunked=True, range_size=65536
        )
    assert stored_bytes(emulator, streamed.url) == DATA
    assert stored_bytes(emulator, spooled.url) == DATA
    assert stored_bytes(emulator, forced.url) == DATA


@pytest.mark.parametrize("delta", [-1000, 1])
async def test_a_source_of_the_wrong_size_is_never_stored(emulator: Emulator, delta: int) -> None:
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        with pytest.raises(va.FileChangedError, match="source") as info:
            await client.upload_file(chunks(DATA), size=len(DATA) - delta)
    assert info.value.expected == len(DATA) - delta
    await asyncio.sleep(0.05)
    assert list(emulator.state.all("file")) == []


async def test_a_one_pass_source_that_failed_says_it_cannot_be_retried() -> None:
    async with Emulator(faults=Faults(reset_rate=1.0, paths=("/upload",))) as emu:
        async with client_for(emu, retry=va.RetryPolicy(max_attempts=3, base_delay=0.01)) as client:
            with pytest.raises(va.NotRewindableError, match="cannot be read again"):
                await client.upload_file(chunks(DATA), size=len(DATA))


async def test_cancelling_while_the_source_stalls_returns_at_once(emulator: Emulator) -> None:
    stalled = asyncio.Event()

    async def stalling() -> AsyncIterator[bytes]:
        yield DATA[:1000]
        stalled.set()
        await asyncio.Event().wait()  # never yields again
        yield b""

    async with client_for(emulator) as client:
        task = asyncio.create_task(client.upload_file(stalling(), size=len(DATA)))
        await stalled.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)


@pytest.mark.parametrize(
    ("source", "size", "match"),
    [
        (io.StringIO("text"), None, "binary mode"),
        (b"", None, "empty"),
        (12345, None, "expected a path, bytes"),
        (b"abc", 4, "not 4"),
        (b"abc", 0, "size"),
    ],
)
async def test_bad_sources_are_refused_before_anything_is_sent(
    client: va.Client, source: object, size: int | None, match: str
) -> None:
    with pytest.raises(va.InvalidArgumentError, match=match):
        await client.upload_file(source, size=size)  # type: ignore[arg-type]


async def test_path_keyword_still_works_and_size_goes_with_streams(
    emulator: Emulator, tmp_path: Path
) -> None:
    path = tmp_path / "p.mp4"
    path.write_bytes(DATA)
    async with client_for(emulator) as client:
        uploaded = await client.upload_file(path=path)
        with pytest.raises(va.InvalidArgumentError, match="size"):
            await client.upload_file(path, size=10)
        with pytest.raises(va.UsageError, match="once"):
            await client.upload_file(path, path=path)
    assert stored_bytes(emulator, uploaded.url) == DATA


async def test_an_abort_between_two_chunks_is_not_missed() -> None:
    """The upload thread asks the loop for chunk after chunk; a cancellation that lands
    between two asks must stop the next one (it waited for ever on a stalled source)."""
    from vidapi_async._transfer.sources import AsyncIterStream

    async def stalling() -> AsyncIterator[bytes]:
        yield b"a" * 10
        await asyncio.Event().wait()
        yield b""

    stream = AsyncIterStream(stalling(), "s", asyncio.get_running_loop())
    view = memoryview(bytearray(10))
    assert await asyncio.to_thread(stream.readinto, view) == 10
    stream.abort()  # nothing is pending now: the next ask must not be made
    with pytest.raises(ConnectionAbortedError):
        await asyncio.wait_for(asyncio.to_thread(stream.readinto, view), 5)


async def test_a_pipe_numbered_above_selects_limit_is_read(emulator: Emulator) -> None:
    """A web backend holds many descriptors: a pipe numbered 1024 or more is past
    ``select()``'s limit, which failed the upload with a ValueError."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if max(soft, hard if hard != resource.RLIM_INFINITY else 4096) < 1600:
        pytest.skip("this process may not hold 1,600 descriptors")
    if soft < 1600:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1600, hard))
    r, w = os.pipe()

    def feed() -> None:  # half, a pause (the reader waits on the pipe), the rest
        with os.fdopen(w, "wb") as out:
            out.write(DATA[:1000])
            out.flush()
            time.sleep(0.3)
            out.write(DATA[1000:])

    writer = threading.Thread(target=feed)
    try:
        low = os.fdopen(r, "rb")
        writer.start()
        with low, os.fdopen(os.dup2(low.fileno(), 1500), "rb") as high:
            async with client_for(emulator) as client:
                uploaded = await client.upload_file(high, filename="high.mp4")
        writer.join()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert stored_bytes(emulator, uploaded.url) == DATA
