"""A small upload on plain HTTP goes from the event loop (``_aio._whole``): the file read
whole in one trip to the pump's thread, the request sent and its answer read on the
loop. The pump's promises, each checked on this path against a server on 127.0.0.1 that
shares no code with the client (raw asyncio streams, here and in ``tests/wire.py``):
which path a request takes, the bytes on the wire (target byte for byte, exact
Content-Length), answers in segments and chunked, the cap, a cancel or the client's
close mid-answer, a progress callback's error stopping the body before it is whole, a
refused connection, a file that changed. The keep-alive, 100-continue, trickled-answer
and read-per-attempt tests run on both paths (the ``upload_path`` fixture)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_upload_wire import parse_multipart
from vidapi_async._aio import _pump, _transport, _whole

ANSWER = b'{"url": "http://x/f.mp4#s", "name": "f", "size": "1"}'


class Raw:
    """An upload server on raw asyncio streams: it keeps every byte each connection
    sent (``received``, one entry a connection) and answers as ``answer`` says, once a
    request's head and its Content-Length of body have come."""

    def __init__(self, answer: Callable[[bytes], Any] | None = None) -> None:
        self.received: list[bytearray] = []
        self.answer = answer or (lambda body: _ok(ANSWER))
        self.closed = asyncio.Event()
        self.requests = asyncio.Event()
        self.port = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got = bytearray()
        self.received.append(got)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                got += head
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length)
                got += body
                self.requests.set()
                reply = self.answer(body)
                if reply is None:  # never answer: wait for the client to go
                    got += await reader.read()
                    return
                for piece in reply:
                    writer.write(piece)
                    await writer.drain()
        except asyncio.IncompleteReadError as partial:
            got += partial.partial
        except ConnectionError:
            pass
        finally:
            self.closed.set()
            writer.close()


def _ok(body: bytes) -> list[bytes]:
    return [
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    ]


@pytest.fixture
async def raw() -> AsyncIterator[Raw]:
    server_side = Raw()
    server = await asyncio.start_server(server_side.serve, "127.0.0.1", 0)
    server_side.port = server.sockets[0].getsockname()[1]
    try:
        yield server_side
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
def paths(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many uploads each path sent (the loop's ``send_whole``, the pump's ``send``)."""
    counts = {"loop": 0, "pump": 0}
    whole, pumped = _whole.send_whole, _pump.UploadPump.send

    async def on_loop(*args: Any, **kwargs: Any) -> Any:
        counts["loop"] += 1
        assert threading.current_thread() is threading.main_thread()
        return await whole(*args, **kwargs)

    async def in_pump(*args: Any, **kwargs: Any) -> Any:
        counts["pump"] += 1
        return await pumped(*args, **kwargs)

    monkeypatch.setattr(_transport, "send_whole", on_loop)
    monkeypatch.setattr(_pump.UploadPump, "send", in_pump)
    return counts


def address(srv: Raw, query: str = "uuid=a%2Fb&seal=%7Es+1%20x") -> va.UploadSession:
    return va.UploadSession(f"http://127.0.0.1:{srv.port}/up%6Coad?{query}", "http://x/p")


def client(**options: Any) -> va.Client:
    return va.Client("t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY, **options)


async def upload_small(raw: Raw, tmp_path: Path) -> va.UploadedFile:
    async with client() as c:
        return await c.upload_file(make_file(tmp_path / "m.mp4", 100), upload_session=address(raw))


def split_request(data: bytes) -> tuple[bytes, dict[str, str], bytes]:
    """(request line, headers with lowercased names, body) of one request."""
    head, _, body = data.partition(b"\r\n\r\n")
    line, *fields = head.split(b"\r\n")
    headers = {}
    for field in fields:
        name, _, value = field.decode("ascii").partition(":")
        headers[name.strip().lower()] = value.strip()
    return line, headers, body


async def test_a_small_file_goes_from_the_loop_exact_on_the_wire(
    raw: Raw, paths: dict[str, int], tmp_path: Path
) -> None:
    sizes = [1, 70_000, _whole.WHOLE_BODY]
    files = [make_file(tmp_path / f"s{n}.mp4", n) for n in sizes]
    async with client() as c:
        for f in files:
            assert (await c.upload_file(f, upload_session=address(raw))).url == "http://x/f.mp4#s"
    assert paths == {"loop": len(sizes), "pump": 0}
    assert len(raw.received) == 1  # one connection carried them all
    stream = bytes(raw.received[0])
    for f in files:
        line, headers, rest = split_request(stream)
        length = int(headers["content-length"])
        body, stream = rest[:length], rest[length:]
        assert line == b"POST /up%6Coad?uuid=a%2Fb&seal=%7Es+1%20x HTTP/1.1"  # as given
        assert headers["host"] == f"127.0.0.1:{raw.port}"
        assert headers["connection"] == "keep-alive"
        assert "authorization" not in headers  # the token never goes to the upload host
        ((part_headers, data),) = parse_multipart(headers["content-type"], body)
        assert data == f.read_bytes()
        assert f.name in part_headers["Content-Disposition"]
    assert stream == b""  # nothing past the last declared length


async def test_a_file_past_the_small_size_or_read_size_goes_through_the_pump(
    raw: Raw, paths: dict[str, int], tmp_path: Path
) -> None:
    big = make_file(tmp_path / "big.mp4", _whole.WHOLE_BODY + 1)
    small = make_file(tmp_path / "small.mp4", 5000)
    async with client() as c:
        await c.upload_file(big, upload_session=address(raw))
        await c.upload_file(small, upload_session=address(raw), read_size=4096)
    assert paths == {"loop": 0, "pump": 2}


@pytest.mark.parametrize(
    "answer",
    [
        [ANSWER[:1], ANSWER[1:]],  # the body in two segments
        [b"HTTP/1.1 200 OK\r\n", b"Content-Length: 53\r\n\r\n" + ANSWER],  # the head too
    ],
    ids=["body-split", "head-split"],
)
async def test_an_answer_in_segments_is_read_whole(
    raw: Raw, paths: dict[str, int], tmp_path: Path, answer: list[bytes]
) -> None:
    assert len(ANSWER) == 53
    if answer[0].startswith(b"HTTP"):
        raw.answer = lambda body: answer
    else:
        head = b"HTTP/1.1 200 OK\r\nContent-Length: 53\r\n\r\n"
        raw.answer = lambda body: [head + answer[0], answer[1]]
    assert (await upload_small(raw, tmp_path)).url == "http://x/f.mp4#s"
    assert paths["loop"] == 1


async def test_a_chunked_answer_in_one_byte_segments_is_read_whole(
    raw: Raw, paths: dict[str, int], tmp_path: Path
) -> None:
    framed = b"%x\r\n%s\r\n0\r\n\r\n" % (len(ANSWER), ANSWER)
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    raw.answer = lambda body: [head, *(framed[i : i + 1] for i in range(len(framed)))]
    assert (await upload_small(raw, tmp_path)).url == "http://x/f.mp4#s"
    assert paths["loop"] == 1


async def test_an_answer_past_the_cap_is_refused(
    raw: Raw, paths: dict[str, int], tmp_path: Path
) -> None:
    size = _pump.MAX_ANSWER_BYTES + 1
    raw.answer = lambda body: [f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n".encode(), b"{"]
    async with client() as c:
        with pytest.raises(va.UnexpectedResponseError, match="response larger than"):
            await c.upload_file(make_file(tmp_path / "m.mp4", 100), upload_session=address(raw))
    assert paths["loop"] == 1


async def test_cancelling_a_small_upload_closes_its_connection(
    raw: Raw, paths: dict[str, int], tmp_path: Path
) -> None:
    raw.answer = lambda body: None  # the request read whole, never answered
    async with client() as c:
        task = asyncio.create_task(
            c.upload_file(make_file(tmp_path / "m.mp4", 100), upload_session=address(raw))
        )
        await asyncio.wait_for(raw.requests.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(raw.closed.wait(), 5)  # the server saw the connection end
    assert paths["loop"] == 1


async def test_closing_the_client_stops_a_small_upload_waiting_for_its_answer(
    raw: Raw, paths: dict[str, int], tmp_path: Path
) -> None:
    raw.answer = lambda body: None
    c = client()
    task = asyncio.create_task(
        c.upload_file(make_file(tmp_path / "m.mp4", 100), upload_session=address(raw))
    )
    await asyncio.wait_for(raw.requests.wait(), 5)
    await asyncio.wait_for(c.close(), 5)
    with pytest.raises(va.ClientClosedError):
        await asyncio.wait_for(task, 5)
    assert paths["loop"] == 1


async def test_a_progress_error_stops_the_body_before_it_is_whole(
    raw: Raw, paths: dict[str, int], tmp_path: Path
) -> None:
    """The callback runs once the file's bytes are sent and before the multipart's
    closing boundary: its error leaves the server a body it cannot complete."""

    class Stop(Exception):
        pass

    seen: list[tuple[int, int]] = []

    def explode(sent: int, total: int) -> None:
        seen.append((sent, total))
        raise Stop("mine")

    src = make_file(tmp_path / "m.mp4", 1000)
    async with client() as c:
        with pytest.raises(Stop):
            await c.upload_file(src, upload_session=address(raw), progress=explode)
        await asyncio.wait_for(raw.closed.wait(), 5)
    assert seen == [(1000, 1000)]
    assert not raw.requests.is_set()  # no request came whole
    _, headers, body = split_request(bytes(raw.received[0]))
    assert len(body) < int(headers["content-length"])
    assert src.read_bytes() in body
    assert paths["loop"] == 1


async def test_progress_is_told_once_the_file_is_sent(
    raw: Raw, paths: dict[str, int], tmp_path: Path
) -> None:
    seen: list[tuple[int, int]] = []
    async with client() as c:
        await c.upload_file(
            make_file(tmp_path / "m.mp4", 1000),
            upload_session=address(raw),
            progress=lambda sent, total: seen.append((sent, total)),
        )
    assert seen == [(1000, 1000)]
    assert paths["loop"] == 1


async def test_a_refused_connection_is_a_connect_error(
    paths: dict[str, int], tmp_path: Path
) -> None:
    with contextlib.closing(__import__("socket").socket()) as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]  # bound, not listening: refused
        session = va.UploadSession(f"http://127.0.0.1:{port}/upload", "http://x/p")
        async with client() as c:
            with pytest.raises(
                va.ConnectError, match="cannot connect: ConnectionRefusedError"
            ) as info:
                await c.upload_file(make_file(tmp_path / "m.mp4", 10), upload_session=session)
    # as the pump says it (the system's words for the error), not asyncio's own text
    assert str(info.value).startswith("cannot connect: ConnectionRefusedError: Connection refused")
    assert paths["loop"] == 1


async def test_a_name_is_looked_up(raw: Raw, paths: dict[str, int], tmp_path: Path) -> None:
    session = va.UploadSession(f"http://localhost:{raw.port}/upload", "http://x/p")
    async with client() as c:
        await c.upload_file(make_file(tmp_path / "m.mp4", 10), upload_session=session)
    _, headers, _ = split_request(bytes(raw.received[0]))
    assert headers["host"] == f"localhost:{raw.port}"
    assert paths["loop"] == 1


async def send_directly(raw: Raw, region: _pump.FileRegion, headers: dict[str, str]) -> Any:
    """``send_whole`` on a pump of its own, closed after."""
    pump = _pump.UploadPump(context=lambda: pytest.fail("no TLS here"), max_threads=1)
    try:
        return await _whole.send_whole(
            pump,
            "POST",
            f"http://127.0.0.1:{raw.port}/upload",
            headers,
            region,
            connect_timeout=5,
            idle_timeout=5,
            answer_within=5,
        )
    finally:
        await asyncio.to_thread(pump.close)


@pytest.mark.parametrize("change", ["grown", "shrunk", "grown-unseen"])
async def test_a_file_that_changed_size_is_refused_and_nothing_sent(
    raw: Raw, tmp_path: Path, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``grown-unseen``: the file grew after its size was looked at (``fstat`` says the
    old size): the byte read past the region's end tells."""
    src = tmp_path / "a.mp4"
    src.write_bytes(b"x" * 1000)
    region = _pump.FileRegion(path=str(src), file_size=1000, length=1000, head=b"[", tail=b"]")
    src.write_bytes(b"x" * (999 if change == "shrunk" else 1001))
    if change == "grown-unseen":
        real = os.fstat
        monkeypatch.setattr(
            _pump.os, "fstat", lambda fd: os.stat_result((0,) * 6 + (1000,) + real(fd)[7:])
        )
    with pytest.raises(va.FileChangedError):
        await send_directly(raw, region, {})
    assert raw.received == []  # not even connected


async def test_a_header_http_cannot_carry_is_refused_before_anything_is_read(
    raw: Raw, tmp_path: Path
) -> None:
    region = _pump.FileRegion(path=str(tmp_path / "absent.mp4"), file_size=1, length=1)
    with pytest.raises(va.InvalidRequestError) as info:
        await send_directly(raw, region, {"X-Bad": "a\r\nInjected: yes"})
    assert "Injected" not in str(info.value)
    assert raw.received == []


# --- attacks on the loop path (att44) ---------------------------------------------------


async def test_closing_the_client_while_the_file_is_read_stops_a_small_upload(
    raw: Raw, paths: dict[str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client closed while the file is read in the pump's thread: nothing may be
    sent after, the upload ends in ``ClientClosedError`` (as on the pump's path, whose
    queued job is aborted by the close)."""
    reading, go = threading.Event(), threading.Event()
    real = _whole.read_whole

    def slow(region: _pump.FileRegion) -> bytes:
        reading.set()
        go.wait(5)
        return real(region)

    monkeypatch.setattr(_whole, "read_whole", slow)
    c = client()
    task = asyncio.create_task(
        c.upload_file(make_file(tmp_path / "m.mp4", 100), upload_session=address(raw))
    )
    assert await asyncio.to_thread(reading.wait, 5)
    pump = c._transport._pump
    assert pump is not None
    closing = asyncio.create_task(c.close())
    try:
        for _ in range(500):  # the close under way: the pump says closed, its threads joined
            if pump.closed:
                break
            await asyncio.sleep(0.01)
        assert pump.closed
    finally:
        go.set()
    await asyncio.wait_for(closing, 5)
    with pytest.raises(va.ClientClosedError):
        await asyncio.wait_for(task, 5)
    assert raw.received == []  # not even connected
    assert paths["loop"] == 1


async def test_an_authority_ends_at_a_fragment_whatever_follows_it(
    raw: Raw, upload_path: str, tmp_path: Path
) -> None:
    """``http://a:1#@b:2/x`` names host ``a`` port 1 (RFC 3986: the authority ends at
    ``/``, ``?`` or ``#``), as the url's checks (``urlsplit``) and its shown form read
    it: the upload must not go to ``b``."""
    other = Raw()
    server = await asyncio.start_server(other.serve, "127.0.0.1", 0)
    other.port = server.sockets[0].getsockname()[1]
    try:
        url = f"http://127.0.0.1:{raw.port}#@127.0.0.1:{other.port}/upload"
        async with client() as c:
            await c.upload_file(
                make_file(tmp_path / "m.mp4", 100),
                upload_session=va.UploadSession(url, "http://x/p"),
            )
        assert other.received == []
        line, headers, _ = split_request(bytes(raw.received[0]))
        assert line == b"POST / HTTP/1.1"
        assert headers["host"] == f"127.0.0.1:{raw.port}"
    finally:
        server.close()
        await server.wait_closed()


async def test_a_file_gone_before_its_read_is_a_typed_error(raw: Raw, tmp_path: Path) -> None:
    """The file removed (or made unreadable) after the upload was planned: the library's
    ``FileChangedError``, not a bare ``OSError`` from the read trip."""
    region = _pump.FileRegion(path=str(tmp_path / "gone.mp4"), file_size=10, length=10)
    with pytest.raises(va.FileChangedError):
        await send_directly(raw, region, {})
    assert raw.received == []


async def test_small_uploads_at_once_keep_to_the_pump_s_connection_bound(
    upload_path: str, tmp_path: Path
) -> None:
    """``connection_limit=4``: the pump has 4 threads, so at most 4 uploads talk to the
    upload host at once; the loop's small uploads must keep to the same bound (8
    uploads started together, the server holding its answers until a fifth request
    comes or a moment passed)."""
    in_flight, most = 0, 0
    release = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal in_flight, most
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                in_flight += 1
                most = max(most, in_flight)
                if in_flight > 4:
                    release.set()
                else:
                    asyncio.get_running_loop().call_later(0.3, release.set)
                await release.wait()
                in_flight -= 1
                writer.write(_ok(ANSWER)[0])
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    files = [make_file(tmp_path / f"c{i}.mp4", 100 + i) for i in range(8)]
    try:
        async with client(connection_limit=4) as c:
            await asyncio.gather(
                *(
                    c.upload_file(
                        f,
                        upload_session=va.UploadSession(
                            f"http://127.0.0.1:{port}/upload", "http://x/p"
                        ),
                    )
                    for f in files
                )
            )
    finally:
        server.close()
        await server.wait_closed()
    assert most <= 4


async def test_small_files_are_read_by_a_few_threads_not_one_per_upload(
    raw: Raw, paths: dict[str, int], tmp_path: Path
) -> None:
    files = [make_file(tmp_path / f"r{i}.mp4", 1000 + i) for i in range(16)]
    async with client() as c:
        await asyncio.gather(*(c.upload_file(f, upload_session=address(raw)) for f in files))
        readers = [t for t in threading.enumerate() if t.name.startswith("vidapi-read_")]
        uploaders = [t for t in threading.enumerate() if t.name.startswith("vidapi-upload_")]
    assert 1 <= len(readers) <= _pump.READERS
    assert uploaders == []  # no pump thread was needed
    assert paths == {"loop": 16, "pump": 0}
