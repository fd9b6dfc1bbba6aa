"""What actually arrives at an upload server: checked on a recording server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

import vidapi_async as va
from tests.conftest import make_file


@pytest.fixture(params=["sendfile", "thread-reads"])
def send_path(request: pytest.FixtureRequest) -> str:
    """Every test here runs over both ways a file body is sent: sendfile(2) on plain
    TCP, and reads in a worker thread (what TLS connections use)."""
    return str(request.param)


@pytest.fixture
def client_options(send_path: str) -> dict[str, Any]:
    return {"base_url": "http://127.0.0.1:9", "sendfile": send_path == "sendfile"}


class Recorder:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        self.requests.append(
            {
                "headers": dict(request.headers),
                "query_string": request.query_string,
                "body": raw,
                "version": request.version,
            }
        )
        return web.json_response({"url": "http://files.example/f.mp4#abc", "size": str(len(raw))})


@pytest.fixture
async def recorder() -> AsyncIterator[tuple[Recorder, str]]:
    rec = Recorder()
    app = web.Application(client_max_size=1 << 30)
    app.router.add_post("/upload", rec.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield rec, str(server.make_url("/upload"))
    finally:
        await server.close()


def parse_multipart(content_type: str, body: bytes) -> list[tuple[dict[str, str], bytes]]:
    boundary = re.search(r"boundary=(\S+)", content_type)
    assert boundary is not None
    sep = b"--" + boundary.group(1).encode()
    assert body.startswith(sep + b"\r\n")
    assert body.endswith(sep + b"--\r\n")
    parts = []
    for chunk in body[len(sep) + 2 : -(len(sep) + 4)].split(b"\r\n" + sep + b"\r\n"):
        head, _, data = chunk.partition(b"\r\n\r\n")
        headers = dict(line.split(": ", 1) for line in head.decode("utf-8").split("\r\n"))
        parts.append((headers, data[:-2] if data.endswith(b"\r\n") else data))
    return parts


async def test_the_body_is_exact_multipart_with_content_length(
    recorder: tuple[Recorder, str],
    tmp_path: Path,
    send_path: str,
    monkeypatch: pytest.MonkeyPatch,
    client_options: dict[str, Any],
) -> None:
    kernel_copies: list[int] = []
    real = socket.socket.sendfile

    def counting(self: socket.socket, *args: Any, **kwargs: Any) -> int:
        got = real(self, *args, **kwargs)
        kernel_copies.append(got)  # in the upload's worker thread
        return got

    monkeypatch.setattr(socket.socket, "sendfile", counting)
    rec, base = recorder
    src = make_file(tmp_path / "clip.mp4", 3 * 1024 * 1024 + 123)
    upload_url = f"{base}?uuid=0f3e&seal=a%2Bb%3D%3D"
    session = va.UploadSession(upload_url=upload_url, progress_url=f"{base}/progress")
    seen: list[tuple[int, int]] = []
    async with va.Client(access_token="tok-secret", **client_options) as client:
        result = await client.upload_file(
            src,
            upload_session=session,
            read_size=256 * 1024,
            progress=lambda sent, total: seen.append((sent, total)),
        )
    assert result.size == int(rec.requests[0]["headers"]["Content-Length"])
    [req] = rec.requests
    headers = req["headers"]
    assert req["query_string"] == "uuid=0f3e&seal=a%2Bb%3D%3D"  # untouched
    assert "Transfer-Encoding" not in headers
    assert int(headers["Content-Length"]) == len(req["body"])
    assert "Authorization" not in headers
    assert "tok-secret" not in json.dumps(headers)
    [(part_headers, data)] = parse_multipart(headers["Content-Type"], req["body"])
    assert part_headers["Content-Disposition"] == 'form-data; name="file"; filename="clip.mp4"'
    assert part_headers["Content-Type"] == "video/mp4"
    assert data == src.read_bytes()
    sizes = [s for s, _ in seen]
    assert sizes == sorted(sizes) and sizes[-1] == src.stat().st_size
    assert {t for _, t in seen} == {src.stat().st_size}
    assert len(seen) == -(-src.stat().st_size // (256 * 1024))
    assert (sum(kernel_copies) == src.stat().st_size) == (send_path == "sendfile")


async def test_non_ascii_file_names_arrive_as_utf8(
    recorder: tuple[Recorder, str], tmp_path: Path, client_options: dict[str, Any]
) -> None:
    rec, base = recorder
    src = make_file(tmp_path / "Été à Zürich 東京.mov", 1000)
    session = va.UploadSession(upload_url=f"{base}?uuid=1&seal=2", progress_url=base)
    async with va.Client(access_token="t", **client_options) as client:
        await client.upload_file(src, upload_session=session)
    [(part_headers, data)] = parse_multipart(
        rec.requests[0]["headers"]["Content-Type"], rec.requests[0]["body"]
    )
    assert 'filename="Été à Zürich 東京.mov"' in part_headers["Content-Disposition"]
    assert data == src.read_bytes()


def _grow(path: Path) -> None:
    with open(path, "ab") as f:
        f.write(b"more")


def _shrink(path: Path) -> None:
    with open(path, "r+b") as f:
        f.truncate(100 * 1024)


@pytest.mark.parametrize(("change", "words"), [(_grow, "grew"), (_shrink, "shrank")])
async def test_a_file_that_changes_size_during_upload_is_an_error(
    recorder: tuple[Recorder, str],
    tmp_path: Path,
    change: Any,
    words: str,
    client_options: dict[str, Any],
) -> None:
    rec, base = recorder
    src = make_file(tmp_path / "changing.mp4", 512 * 1024)

    def change_after_first_chunk(sent: int, total: int) -> None:
        if sent == 64 * 1024:
            change(src)

    session = va.UploadSession(upload_url=f"{base}?uuid=1&seal=2", progress_url=base)
    async with va.Client(access_token="t", **client_options) as client:
        with pytest.raises(va.FileChangedError, match=words) as info:
            await client.upload_file(
                src, upload_session=session, read_size=64 * 1024, progress=change_after_first_chunk
            )
    assert info.value.expected == 512 * 1024
    assert rec.requests == []  # the server never saw a complete (corrupt) body


async def test_the_same_region_can_be_sent_twice(
    recorder: tuple[Recorder, str], tmp_path: Path, send_path: str
) -> None:
    """A body is a description of the file, re-read on every send (retries need it)."""
    from vidapi_async._aio import FileRegion, UploadPump
    from vidapi_async._protocol import multipart_envelope

    rec, base = recorder
    src = make_file(tmp_path / "again.mp4", 200 * 1024)
    head, tail = multipart_envelope("b0undary", "file", "again.mp4")
    region = FileRegion(
        path=str(src), file_size=200 * 1024, length=200 * 1024, head=head, tail=tail
    )
    pump = UploadPump(context=ssl.create_default_context, max_threads=2)
    try:
        for _ in range(2):
            answer = await pump.send(
                "POST",
                f"{base}?uuid=1&seal=2",
                {"Content-Type": "multipart/form-data; boundary=b0undary"},
                region,
                read_size=64 * 1024,
                connect_timeout=5,
                idle_timeout=5,
                answer_within=5,
                sendfile=send_path == "sendfile",
            )
            assert answer.status == 200
    finally:
        pump.close()
    assert rec.requests[0]["body"] == rec.requests[1]["body"]
    assert len(rec.requests[1]["body"]) == len(head) + 200 * 1024 + len(tail)


async def test_an_error_in_the_progress_callback_is_raised_as_is(
    recorder: tuple[Recorder, str], tmp_path: Path, client_options: dict[str, Any]
) -> None:
    rec, base = recorder
    src = make_file(tmp_path / "cb.mp4", 300 * 1024)

    class Stop(Exception):
        pass

    def explode(sent: int, total: int) -> None:
        raise Stop("my callback")

    session = va.UploadSession(upload_url=f"{base}?uuid=1&seal=2", progress_url=base)
    async with va.Client(access_token="t", **client_options) as client:
        with pytest.raises(Stop):  # not a TransportError, and not retried
            await client.upload_file(src, upload_session=session, progress=explode)
    assert rec.requests == []
