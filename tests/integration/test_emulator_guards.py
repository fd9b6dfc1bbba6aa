"""The emulator left running (issue 18, item 14): headers are capped per request (431)
and the request log in bytes; connections that never finish their headers are closed;
``vidapi serve --port 0`` gives the upload server a real free port."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator


async def raw_request(url: str, head: bytes) -> bytes:
    host, port = url.split("://", 1)[1].rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(head)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 30)  # to the server's close
    finally:
        writer.close()


async def test_headers_beyond_64_kib_get_431_and_stay_out_of_the_log() -> None:
    async with Emulator() as emu:
        big = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 8000) for i in range(10))  # ~80 KiB
        answer = await raw_request(
            emu.base_url, b"GET /me HTTP/1.1\r\nHost: x\r\n" + big + b"Connection: close\r\n\r\n"
        )
        assert answer.startswith(b"HTTP/1.1 431 ")
        logged = [r for r in emu.requests if r.path == "/me"]
        assert logged and sum(len(k) + len(v) for k, v in logged[-1].headers.items()) < 65536


async def test_the_request_log_is_capped_in_bytes() -> None:
    async with Emulator(log_bytes=200_000) as emu:
        pad = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 7000) for i in range(8))  # ~56 KiB
        for _ in range(20):  # ~1.1 MB of headers in all
            await raw_request(
                emu.base_url,
                b"GET /me HTTP/1.1\r\nHost: x\r\n" + pad + b"Connection: close\r\n\r\n",
            )
        kept = emu.requests
        size = sum(len(k) + len(v) for r in kept for k, v in r.headers.items())
        assert 0 < size <= 200_000
        assert 0 < len(kept) < 20  # the oldest went first


async def test_a_connection_that_never_finishes_its_headers_is_closed() -> None:
    async with Emulator(header_timeout=0.5) as emu:
        host, port = emu.base_url.split("://", 1)[1].rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"GET /me HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        await writer.drain()
        try:
            assert await asyncio.wait_for(reader.read(), 20) == b""  # closed by the server
        finally:
            writer.close()


async def test_serve_port_0_gives_the_upload_server_a_free_port(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vidapi_async.cli",
        "serve",
        "--port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,  # the addresses on stdout, then Ctrl-C on stderr
    )
    try:
        assert proc.stdout is not None
        banner = b""
        while b"Ctrl-C" not in banner:
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert line, "vidapi serve exited early: " + banner.decode()
            banner += line
        api = re.search(rb"API:\s+(\S+)", banner)
        uploads = re.search(rb"Uploads:\s+http://127\.0\.0\.1:(\d+)", banner)
        assert api and uploads
        assert int(uploads.group(1)) > 1024
        async with va.Client(
            access_token="demo-token", base_url=api.group(1).decode(), retry=va.NO_RETRY
        ) as client:
            video = await client.upload_video(
                make_file(tmp_path / "a.mp4", 5000), title="t", channel="news"
            )
        assert video.id
    finally:
        proc.terminate()
        await proc.communicate()


async def test_the_request_log_masks_secret_headers_whatever_their_case() -> None:
    async with Emulator() as emu:
        host, port = emu.base_url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            b"GET /me HTTP/1.1\r\nHost: x\r\nauthorization: Bearer lower-token-1\r\n"
            b"x-emulator-control: " + emu.control_secret.encode() + b"\r\n"
            b"X-EMULATOR-CONTROL: upper-secret-2\r\nConnection: close\r\n\r\n"
        )
        await writer.drain()
        await reader.read()
        writer.close()
        await writer.wait_closed()
        logged = [r for r in emu.requests if r.path == "/me"]
    assert logged
    text = repr(logged)
    for secret in ("lower-token-1", emu.control_secret, "upper-secret-2"):
        assert secret not in text


async def test_a_start_that_fails_halfway_leaves_nothing_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API's port is taken: the start fails once the folder, its TLS key and the API
    server exist. All of it is closed and removed then, not left until the object is
    collected (``async with`` never calls ``__aexit__`` for a failed ``__aenter__``)."""
    import socket
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        emulator = Emulator(port=0, upload_port=port, tls=True)
        with pytest.raises(OSError, match="address already in use"):
            async with emulator:
                pass
    assert list(tmp_path.iterdir()) == []
    assert emulator.platform is None
