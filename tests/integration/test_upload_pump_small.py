"""A small upload body: the file read per attempt (a second upload sends what the file
holds then; on both paths, the loop's ``_whole`` and the pump's), and through the pump a
change of size refused with nothing whole sent (the loop's path: test_upload_whole.py).
(A pump path that read a small body whole and sent it in one write was measured, then
taken out: fewer system calls, no CPU time saved, 0.14 M instructions a pipeline more;
benchmarks/README.md. Sending such a body from the loop is what saved the CPU time.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import vidapi_async as va
from vidapi_async._aio import _pump


class Capture:
    """An upload server on 127.0.0.1 that keeps each request's body whole."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.port = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                self.bodies.append(await reader.readexactly(length))
                answer = b'{"url": "http://x/f", "name": "f", "size": 1}'
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def capture() -> AsyncIterator[Capture]:
    cap = Capture()
    server = await asyncio.start_server(cap.serve, "127.0.0.1", 0)
    cap.port = server.sockets[0].getsockname()[1]
    try:
        yield cap
    finally:
        server.close()


def session(cap: Capture) -> va.UploadSession:
    return va.UploadSession(f"http://127.0.0.1:{cap.port}/upload?u=1", "http://x/p")


def body_file(cap_body: bytes) -> bytes:
    """The file's bytes inside a one-part multipart body."""
    return cap_body.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n--", 1)[0]


@pytest.mark.usefixtures("upload_path")
async def test_a_small_file_is_read_again_for_each_attempt(
    capture: Capture, tmp_path: Path
) -> None:
    src = tmp_path / "a.mp4"
    src.write_bytes(b"a" * 1000)
    async with va.Client("t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY) as client:
        await client.upload_file(src, upload_session=session(capture), chunked=False)
        src.write_bytes(b"b" * 1000)  # the same size, other bytes: what a retry must send
        await client.upload_file(src, upload_session=session(capture), chunked=False)
    assert [body_file(b) for b in capture.bodies] == [b"a" * 1000, b"b" * 1000]


@pytest.mark.parametrize("change", [b"grown", b""])
async def test_a_small_file_that_changed_size_is_refused(
    capture: Capture, tmp_path: Path, change: bytes
) -> None:
    src = tmp_path / "a.mp4"
    src.write_bytes(b"x" * 1000)
    region = _pump.FileRegion(path=str(src), file_size=1000, length=1000, head=b"[", tail=b"]")
    if change:
        with open(src, "ab") as f:
            f.write(change)
    else:
        src.write_bytes(b"x" * 999)
    pump = _pump.UploadPump(context=lambda: pytest.fail("no TLS here"), max_threads=1)
    try:
        with pytest.raises(va.FileChangedError):
            await pump.send(
                "POST",
                f"http://127.0.0.1:{capture.port}/upload",
                {},
                region,
                read_size=1 << 20,
                connect_timeout=5,
                idle_timeout=5,
                answer_within=5,
            )
    finally:
        await asyncio.to_thread(pump.close)
    assert capture.bodies == []  # nothing whole reached the server
