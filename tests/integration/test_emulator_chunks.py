"""The emulator takes chunk POSTs as the official SDKs send them: ``Expect:
100-continue`` (the body only after the server's ``100 Continue``) and either
``filename="NAME"`` (the Python SDK) or ``filename*=UTF-8''NAME`` (the PHP SDK).
Spoken with raw sockets, so that nothing of aiohttp's client hides what goes out."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.parse

import pytest

from tests.conftest import stored_bytes
from vidapi_async.emulator import Emulator


async def _new_upload(emulator: Emulator) -> str:
    reader, writer = await asyncio.open_connection(*_host_port(emulator.base_url))
    writer.write(
        b"GET /file/upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        + f"Authorization: Bearer {emulator.token}\r\n\r\n".encode()
    )
    answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    return str(json.loads(answer.split(b"\r\n\r\n", 1)[1])["upload_url"])


def _host_port(url: str) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


async def _post_chunk(
    url: str, disposition: str, body: bytes, first: int, total: int
) -> tuple[bytes, bytes]:
    """Send one chunk with ``Expect: 100-continue``; the interim answer and the final."""
    parts = urllib.parse.urlsplit(url)
    reader, writer = await asyncio.open_connection(*_host_port(url))
    head = (
        f"POST {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        "Content-Type: application/octet-stream\r\n"
        f"Content-Disposition: {disposition}\r\n"
        f"Content-Range: bytes {first}-{first + len(body) - 1}/{total}\r\n"
        f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode("ascii"))
    await writer.drain()
    interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    writer.write(body)
    final = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    await writer.wait_closed()
    return interim, final


@pytest.mark.parametrize(
    ("disposition", "name"),
    [
        ('attachment; filename="plain clip.mp4"', "plain clip"),
        ("attachment; filename*=UTF-8''%C3%A9t%C3%A9%20%E2%98%80.mp4", "été ☀"),
    ],
    ids=["python-sdk-filename", "php-sdk-filename-star"],
)
async def test_chunks_with_expect_continue_and_either_filename(
    emulator: Emulator, disposition: str, name: str
) -> None:
    url = await _new_upload(emulator)
    data = os.urandom(3000)
    interim, final = await _post_chunk(url, disposition, data[:1000], 0, 3000)
    assert interim.startswith(b"HTTP/1.1 100 Continue")
    assert final.startswith(b"HTTP/1.1 202")
    interim, final = await _post_chunk(url, disposition, data[1000:], 1000, 3000)
    assert interim.startswith(b"HTTP/1.1 100 Continue")
    assert final.startswith(b"HTTP/1.1 200")
    descriptor = json.loads(final.split(b"\r\n\r\n", 1)[1])
    assert descriptor["name"] == name
    assert stored_bytes(emulator, descriptor["url"]) == data
