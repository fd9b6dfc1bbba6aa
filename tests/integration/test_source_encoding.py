"""A url source that answers with a Content-Encoding it was not asked for (the client asks
for ``identity``): refused with a ``SourceError`` naming the encoding, never decoded, so
a small compressed body cannot expand on the spool disk (a decompression bomb). The
source is the raw-socket wire server; the platform is the emulator."""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import stored_bytes
from tests.integration.test_hostile_sources import spool_dir  # noqa: F401 - the fixture
from tests.wire import Reply, WireServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

BOMB_SIZE = 4_000_000
BOMB = gzip.compress(b"\0" * BOMB_SIZE)
"""4 MB of zeros in a few kilobytes: a bomb of ratio some 1000."""


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip", BOMB),
        ("GZIP", BOMB),
        ("deflate", zlib.compress(b"\0" * BOMB_SIZE)),
        ("identity, gzip", BOMB),
        ("br", b"\x0b\x00\x80"),
        ("x-unknown", b"abc"),
    ],
)
@pytest.mark.parametrize("declared", [True, False], ids=["length", "no-length"])
async def test_an_encoding_not_asked_for_is_refused_not_decoded(
    emulator: Emulator,
    spool_dir: Path,  # noqa: F811 - the fixture imported above
    encoding: str,
    body: bytes,
    declared: bool,
) -> None:
    assert len(BOMB) * 100 < BOMB_SIZE
    if declared:
        reply = Reply(200, body, {"Content-Encoding": encoding})
    else:
        head = f"HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\nConnection: close\r\n\r\n"
        reply = Reply(raw=head.encode() + body)
    async with (
        WireServer(lambda seen: reply) as src,
        client_for(emulator, retry=va.NO_RETRY) as client,
    ):
        with pytest.raises(va.SourceError, match="Content-Encoding") as caught:
            await client.upload_from_url(f"{src.url}/a.mp4")
    assert encoding.lower().split(",")[-1].strip() in str(caught.value).lower()
    assert src.seen[0].headers["accept-encoding"] == "identity"
    assert list(spool_dir.iterdir()) == []
    assert [r for r in emulator.requests if "upload" in r.path] == []


@pytest.mark.parametrize("encoding", [None, "identity", "Identity"])
async def test_an_identity_source_is_stored_as_sent(
    emulator: Emulator, encoding: str | None
) -> None:
    data = os.urandom(50_000)
    headers = {} if encoding is None else {"Content-Encoding": encoding}
    async with (
        WireServer(lambda seen: Reply(200, data, headers)) as src,
        client_for(emulator, retry=va.NO_RETRY) as client,
    ):
        uploaded = await client.upload_from_url(f"{src.url}/a.mp4")
    assert stored_bytes(emulator, uploaded.url) == data


@pytest.mark.parametrize("coding", ["gzip, chunked", "GZIP,chunked", "deflate, chunked"])
async def test_a_transfer_coding_other_than_chunked_is_refused(
    emulator: Emulator,
    spool_dir: Path,  # noqa: F811 - the fixture imported above
    coding: str,
) -> None:
    body = gzip.compress(b"\0" * 100_000)
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    head = f"HTTP/1.1 200 OK\r\nTransfer-Encoding: {coding}\r\nConnection: close\r\n\r\n"
    async with (
        WireServer(lambda seen: Reply(raw=head.encode() + chunked)) as src,
        client_for(emulator, retry=va.NO_RETRY) as client,
    ):
        with pytest.raises(va.SourceError, match="Transfer-Encoding") as caught:
            await client.upload_from_url(f"{src.url}/a.mp4")
    assert coding.split(",")[0].strip().lower() in str(caught.value).lower()
    assert list(spool_dir.iterdir()) == []
    assert [r for r in emulator.requests if "upload" in r.path] == []


async def test_a_chunked_source_is_stored_as_sent(emulator: Emulator) -> None:
    data = os.urandom(50_000)
    chunked = f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n"
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    async with (
        WireServer(lambda seen: Reply(raw=head + chunked)) as src,
        client_for(emulator, retry=va.NO_RETRY) as client,
    ):
        uploaded = await client.upload_from_url(f"{src.url}/a.mp4")
    assert stored_bytes(emulator, uploaded.url) == data
