"""Uploads one after another reuse their connection to the upload host (keep-alive):
no TCP (and TLS) handshake per file. What that must keep: every body whole and exact on
the wire; a kept connection the server dropped before the request went whole replaced at
once (no failed upload, no retry); a request sent whole never sent again behind the
caller's back (the server may have acted on it: as aiohttp does for a POST, the error is
the caller's and its retries'); a server's ``Keep-Alive: timeout=`` heeded; a server
that says ``Connection: close`` obeyed; nothing left open. Against ``tests/wire.py``'s
server, which shares no code with the client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_upload_wire import parse_multipart
from tests.wire import Reply, Seen, WireServer

UPLOADED = {"url": "http://x/f.mp4#s", "name": "f", "size": "1"}


def session(srv: WireServer, n: int) -> va.UploadSession:
    return va.UploadSession(f"{srv.url}/upload?uuid={n}&seal=s{n}", f"{srv.url}/progress")


def body_file(seen: Seen) -> bytes:
    (_, data), *_ = parse_multipart(seen.headers["content-type"], seen.body)
    return data


async def upload_three(srv: WireServer, tmp_path: Path, **options: object) -> list[Path]:
    files = [make_file(tmp_path / f"k{i}.mp4", 70_000 + i) for i in range(3)]
    async with va.Client("t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY, **options) as c:
        for i, f in enumerate(files):
            assert (await c.upload_file(f, upload_session=session(srv, i))).url == UPLOADED["url"]
    return files


@pytest.mark.usefixtures("upload_path")
async def test_uploads_one_after_another_share_one_connection(tmp_path: Path) -> None:
    async with WireServer(lambda seen: Reply.json(UPLOADED)) as srv:
        files = await upload_three(srv, tmp_path)
    assert srv.connections == 1
    assert [s.conn for s in srv.seen] == [1, 1, 1]
    assert [body_file(s) for s in srv.seen] == [f.read_bytes() for f in files]
    assert {s.headers["connection"] for s in srv.seen} == {"keep-alive"}
    assert [s.raw_query for s in srv.seen] == [f"uuid={i}&seal=s{i}" for i in range(3)]


async def test_a_kept_connection_dropped_while_the_request_goes_is_replaced_at_once(
    tmp_path: Path,
) -> None:
    """The server drops an idle connection just as the next request comes (its keep-alive
    timeout) and never reads that request's body: the client cannot finish sending it, so
    the server cannot have acted on it. It goes again, whole, on a new connection; the
    upload neither fails nor counts as a retry (the client has none here)."""
    files = [make_file(tmp_path / f"d{i}.mp4", (16 << 20) + i) for i in range(2)]
    async with WireServer(
        lambda seen: Reply.json(UPLOADED), hang_up_before_body=lambda n: n == 2
    ) as srv:
        async with va.Client("t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY) as c:
            for i, f in enumerate(files):
                await c.upload_file(f, upload_session=session(srv, i))
    assert srv.heads == 3  # the second request's head came twice
    assert [s.conn for s in srv.seen] == [1, 2]
    assert [body_file(s) for s in srv.seen] == [f.read_bytes() for f in files]
    assert srv.seen[1].raw_query == "uuid=1&seal=s1"


@pytest.mark.usefixtures("upload_path")
async def test_a_request_sent_whole_on_a_kept_connection_is_not_sent_again(
    tmp_path: Path,
) -> None:
    """The server read the whole request, then dropped the connection without a word: it
    may have stored the upload (a single-use address would refuse a second one), so the
    body is not sent again behind the caller's back; with no retries the caller gets the
    connection error, as on a new connection."""

    def handler(seen: Seen) -> Reply:
        if len(srv.seen) == 2:
            return Reply(raw=b"")  # read the request, then hang up without a word
        return Reply.json(UPLOADED)

    files = [make_file(tmp_path / f"w{i}.mp4", 70_000 + i) for i in range(2)]
    async with WireServer(handler) as srv:
        async with va.Client("t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY) as c:
            await c.upload_file(files[0], upload_session=session(srv, 0))
            with pytest.raises(va.ConnectionLostError):
                await c.upload_file(files[1], upload_session=session(srv, 1))
    assert [s.conn for s in srv.seen] == [1, 1]
    assert body_file(srv.seen[1]) == files[1].read_bytes()


@pytest.mark.usefixtures("upload_path")
async def test_an_answer_cut_on_a_kept_connection_is_not_sent_again(tmp_path: Path) -> None:
    """Once the answer has begun, the server had the request: sending it again could
    not be told from a second upload, so the error is the caller's (and its retries')."""

    def handler(seen: Seen) -> Reply:
        if len(srv.seen) == 2:
            return Reply.json(UPLOADED, cut_after=3)
        return Reply.json(UPLOADED)

    files = [make_file(tmp_path / f"c{i}.mp4", 5_000 + i) for i in range(2)]
    async with WireServer(handler) as srv:
        async with va.Client("t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY) as c:
            await c.upload_file(files[0], upload_session=session(srv, 0))
            with pytest.raises(va.ConnectionLostError):
                await c.upload_file(files[1], upload_session=session(srv, 1))
    assert len(srv.seen) == 2


@pytest.mark.usefixtures("upload_path")
@pytest.mark.parametrize(
    ("hint", "connections"), [("timeout=1", [1, 2, 3]), ("timeout=5, max=100", [1, 1, 1])]
)
async def test_a_server_s_keep_alive_timeout_is_heeded(
    tmp_path: Path, hint: str, connections: list[int]
) -> None:
    """A server that says how long it keeps an idle connection (``Keep-Alive: timeout=N``)
    has it reused only up to a second before that: a request on a connection the server
    closes just then could not be sent again once sent whole (a server that keeps one for
    a second or less gets a new connection each time)."""
    reply = Reply.json(UPLOADED, headers={"Keep-Alive": hint})
    async with WireServer(lambda seen: reply) as srv:
        await upload_three(srv, tmp_path)
    assert [s.conn for s in srv.seen] == connections


@pytest.mark.usefixtures("upload_path")
async def test_a_server_that_says_close_gets_a_new_connection_each_time(tmp_path: Path) -> None:
    async with WireServer(lambda seen: Reply.json(UPLOADED, close=True)) as srv:
        await upload_three(srv, tmp_path)
    assert [s.conn for s in srv.seen] == [1, 2, 3]


def test_how_long_a_connection_is_kept_follows_the_server_s_hint() -> None:
    from vidapi_async._aio import _pump

    assert _pump.idle_for({}) == _pump.IDLE_FOR
    assert _pump.idle_for({"Keep-Alive": "timeout=5, max=100"}) == 4.0
    assert _pump.idle_for({"keep-alive": "max=3, TIMEOUT=3"}) == 2.0
    assert _pump.idle_for({"Keep-Alive": "timeout=600"}) == _pump.IDLE_FOR
    assert _pump.idle_for({"Keep-Alive": "timeout=1"}) <= 0  # not kept
    assert _pump.idle_for({"Keep-Alive": "max=3"}) == _pump.IDLE_FOR
    # a number no int() takes (over 4300 digits) or no float holds: the default, no error
    for digits in (400, 5000):
        assert _pump.idle_for({"Keep-Alive": "timeout=" + "9" * digits}) == _pump.IDLE_FOR


def test_kept_connections_are_few_and_short_lived() -> None:
    import socket

    from vidapi_async._aio import _pump

    key, other = ("http", "127.0.0.1", 1), ("https", "h", 443)
    idle = _pump.IdleConnections(keep=2)
    pairs = [socket.socketpair() for _ in range(4)]
    try:
        idle.put(key, pairs[0][0], _pump.IDLE_FOR)
        idle.put(other, pairs[1][0], 0.0)  # kept for no time: gone at the next look
        idle.put(key, pairs[2][0], _pump.IDLE_FOR)
        assert pairs[1][0].fileno() == -1  # closed, whatever origin
        idle.put(other, pairs[1][1], _pump.IDLE_FOR)  # a third: the oldest goes
        assert pairs[0][0].fileno() == -1
        assert idle.take(key) is pairs[2][0]
        assert idle.take(key) is None
        idle.put(key, pairs[3][0], _pump.IDLE_FOR)
        idle.close()
        assert pairs[1][1].fileno() == pairs[3][0].fileno() == -1
        spare = socket.socket()
        idle.put(key, spare, _pump.IDLE_FOR)  # a thread finishing after the close: closed
        assert spare.fileno() == -1
    finally:
        for a, b in pairs:
            a.close()
            b.close()


def test_a_kept_connection_numbered_above_selects_limit_is_still_reused() -> None:
    """A web backend holds many descriptors: a socket numbered 1024 or more is past
    ``select()``'s limit (ValueError), which made every kept connection look unusable."""
    import os
    import resource
    import socket

    from vidapi_async._aio import _pump

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if max(soft, hard if hard != resource.RLIM_INFINITY else 4096) < 1600:
        pytest.skip("this process may not hold 1,600 descriptors")
    if soft < 1600:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1600, hard))
    try:
        a, b = socket.socketpair()
        high = socket.socket(fileno=os.dup2(a.fileno(), 1500))
        a.close()
        with high, b:
            key = ("http", "127.0.0.1", 1)
            idle = _pump.IdleConnections(keep=2)
            idle.put(key, high, _pump.IDLE_FOR)
            assert idle.take(key) is high  # quiet: reused
            idle.put(key, high, _pump.IDLE_FOR)
            b.sendall(b"HTTP/1.1 200 OK\r\n\r\n")  # bytes nobody asked for: not reused
            assert idle.take(key) is None
            idle.close()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_a_body_that_cannot_be_sent_twice_never_rides_a_kept_connection(
    tmp_path: Path,
) -> None:
    """A stream (an async iterable, a pipe, a url source) is read once: on a kept
    connection the server might have dropped, it could not go again, so it gets a new
    one; its connection is kept after it for the next file."""

    async def pieces() -> AsyncIterator[bytes]:
        for i in range(4):
            yield bytes([65 + i]) * 10_000

    files = [make_file(tmp_path / f"s{i}.mp4", 30_000 + i) for i in range(2)]
    async with WireServer(lambda seen: Reply.json(UPLOADED)) as srv:
        async with va.Client("t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY) as c:
            await c.upload_file(files[0], upload_session=session(srv, 0))
            await c.upload_file(pieces(), size=40_000, upload_session=session(srv, 1))
            await c.upload_file(files[1], upload_session=session(srv, 2))
    assert [s.conn for s in srv.seen][:2] == [1, 2]
    assert srv.seen[2].conn in (1, 2)
    assert body_file(srv.seen[1]) == b"".join(bytes([65 + i]) * 10_000 for i in range(4))


async def test_over_tls_one_handshake_carries_every_upload(tmp_path: Path) -> None:
    import ssl

    from tests.wire import self_signed

    cert, key = self_signed(tmp_path)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    trust = ssl.create_default_context(cafile=str(cert))
    async with WireServer(lambda seen: Reply.json(UPLOADED), tls=server_ctx) as srv:
        assert srv.url.startswith("https://")
        files = await upload_three(srv, tmp_path, ssl=trust)
    assert [s.conn for s in srv.seen] == [1, 1, 1]
    assert [body_file(s) for s in srv.seen] == [f.read_bytes() for f in files]
