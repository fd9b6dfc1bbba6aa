"""The Prometheus endpoint against a hostile reviewer's clients (second round): clients
that hold answered connections open, request forms a real client may send, values and
label values a scrape could not print, the endpoint closed from the wrong place, the
CLI's claimed port. Clients are raw asyncio sockets; the text is read with
prometheus-client's parser (no code shared with the endpoint)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.raw_http import exchange as _exchange
from vidapi_async import _metrics
from vidapi_async._metrics import REGISTRY, MetricsServer

SAFETY = 20.0  # a hung test fails after this; never what a test measures


async def _scrape(port: int, request: bytes = b"GET /metrics HTTP/1.1\r\n\r\n") -> dict[str, Any]:
    try:
        answer = await _exchange(port, request)
    except ConnectionResetError:
        answer = b""
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), answer[:200]
    return {f.name: f for f in text_string_to_metric_families(body.decode())}


async def _until(predicate: Any) -> None:
    for _ in range(int(SAFETY / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("never came true")


async def test_answered_connections_held_open_do_not_keep_a_scrape_out() -> None:
    """Before: an answered connection stayed counted until its client closed (or the
    deadline), and past the bound the oldest *unanswered* connection was dropped: with
    every other slot answered, that was the newcomer, the real scrape. Clients that
    send a request (a scrape, or garbage answered 400) and never read nor close kept
    every scrape out."""
    server = MetricsServer(0, max_connections=4, deadline=SAFETY * 3)
    held = []
    try:
        for request in [b"GET /metrics HTTP/1.1\r\n\r\n", b"x\n\n"] * 2:
            conn = await asyncio.open_connection("127.0.0.1", server.port)
            conn[1].write(request)
            await conn[1].drain()
            held.append(conn)
        await asyncio.sleep(0.1)  # their answers written
        for _ in range(3):
            assert "vidapi_jobs" in await _scrape(server.port)
    finally:
        for _, writer in held:
            writer.close()
        await server.aclose()


async def test_an_answered_connection_is_closed_soon_after_its_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An answered client that never closes is no longer held until the deadline (60 s
    here): the endpoint closes it ``LINGER`` seconds after its answer left. The client
    still reads the whole answer."""
    monkeypatch.setattr(_metrics, "LINGER", 0.05)
    server = MetricsServer(0, deadline=SAFETY * 3)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /metrics HTTP/1.1\r\n\r\n")
        await writer.drain()
        await _until(lambda: server.connections == 0)
        answer = await asyncio.wait_for(reader.read(), SAFETY)
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\n")
        writer.close()
    finally:
        await server.aclose()


async def test_a_scrape_amid_a_burst_of_silent_connections_is_answered() -> None:
    """Connections the system accepted before the loop ran are admitted in one turn:
    before, each new one dropped the oldest still waiting, and a scrape among them was
    dropped before its request (already sent) was read. Now the bound is enforced once
    the loop has read what they sent."""
    server = MetricsServer(0, max_connections=4, deadline=SAFETY * 3)
    silent: list[socket.socket] = []
    scrape = socket.socket()
    try:
        for i in range(100):  # the system completes each connect; the loop runs later
            if i == 50:
                scrape.connect(("127.0.0.1", server.port))
                scrape.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
            silent.append(socket.create_connection(("127.0.0.1", server.port)))
        scrape.settimeout(SAFETY)
        answer = await asyncio.to_thread(_read_all, scrape)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:100]
        await _until(lambda: server.connections <= 4)
    finally:
        scrape.close()
        for sock in silent:
            sock.close()
        await server.aclose()


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET http://127.0.0.1:9/metrics HTTP/1.1\r\n\r\n",
        b"\r\nGET /metrics HTTP/1.1\r\n\r\n",
        b"\r\n\r\nGET /metrics?a=b HTTP/1.1\r\nHost: x\r\n\r\n",
    ],
    ids=["absolute-form", "crlf-first", "two-empty-lines-first"],
)
async def test_request_forms_a_client_may_send_are_a_scrape(request_bytes: bytes) -> None:
    """RFC 9112: a server accepts the absolute form of a target, and SHOULD ignore an
    empty line before the request line (before: 404 and 400)."""
    server = MetricsServer(0)
    try:
        assert "vidapi_jobs" in await _scrape(server.port, request_bytes)
    finally:
        await server.aclose()


async def test_a_failing_render_is_answered_500_not_a_dead_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken() -> str:
        raise ValueError("cannot render")

    server = MetricsServer(0)
    try:
        monkeypatch.setattr(REGISTRY, "render", broken)
        answer = await _exchange(server.port, b"GET /metrics HTTP/1.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 500 "), answer[:200]
        monkeypatch.undo()
        assert "vidapi_jobs" in await _scrape(server.port)
    finally:
        await server.aclose()


async def test_rendering_does_not_run_on_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A scrape of many series took 0.4 s on the loop (every upload waited): the text
    is now made off the loop. Here the render waits until the loop releases it; on the
    loop it would wait out SAFETY and see itself never released."""
    started, released, seen = threading.Event(), threading.Event(), []
    real = REGISTRY.render

    def slow() -> str:
        started.set()
        seen.append(released.wait(SAFETY))
        return real()

    server = MetricsServer(0)
    try:
        monkeypatch.setattr(REGISTRY, "render", slow)
        scrape = asyncio.ensure_future(_scrape(server.port))
        await _until(started.is_set)
        released.set()
        assert "vidapi_jobs" in await scrape
        assert seen == [True]
    finally:
        await server.aclose()


def test_close_after_the_loop_is_gone_still_stops_the_counts() -> None:
    """Before: ``close()`` after the loop closed raised RuntimeError with ``closed``
    already set: the counts were never stopped and the socket was left open."""
    holder: list[MetricsServer] = []
    waiting = socket.socket()

    async def serve() -> None:
        holder.append(MetricsServer(0, deadline=SAFETY * 3))
        await _scrape(holder[0].port)
        await _until(lambda: holder[0].connections == 0)  # the scrape's is gone
        waiting.connect(("127.0.0.1", holder[0].port))
        waiting.sendall(b"GET /metr")  # still waiting for its request when the loop ends
        await _until(lambda: holder[0].connections == 1)

    asyncio.run(serve())
    server = holder[0]
    try:
        server.close()
    finally:
        waiting.close()
    assert server.closed and not REGISTRY.on
    server.close()  # harmless again
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", server.port), timeout=SAFETY),
    ):
        pass


async def test_close_from_another_thread_stops_the_endpoint_on_its_loop() -> None:
    """Before (in debug mode): ``close()`` from another thread raised, and a following
    ``aclose()`` waited for ever. Now it is handed to the loop's thread."""
    loop = asyncio.get_running_loop()
    debug = loop.get_debug()
    loop.set_debug(True)  # where asyncio checks the calling thread
    try:
        await _close_from_another_thread()
    finally:
        loop.set_debug(debug)


async def _close_from_another_thread() -> None:
    server = MetricsServer(0, deadline=SAFETY * 3)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    await _until(lambda: server.connections == 1)
    failed: list[BaseException] = []

    def other() -> None:
        try:
            server.close()
        except BaseException as exc:  # reported below
            failed.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    await asyncio.wait_for(server.aclose(), SAFETY)
    assert failed == [] and not REGISTRY.on and server.connections == 0
    assert await asyncio.wait_for(reader.read(), SAFETY) == b""
    writer.close()
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", server.port)


@contextlib.contextmanager
def _claimed(port: int) -> Iterator[int]:
    with _metrics.claim(port) as claimed:
        yield claimed


async def test_a_claimed_port_is_held_until_the_endpoint_serves_it() -> None:
    """The CLI names the port before the worker starts: before, it bound a probe, closed
    it and bound again later (port 0: another process could take it in between). Now
    the claimed socket is kept and the endpoint serves on that very socket."""
    with _claimed(0) as port:
        with socket.socket() as other, pytest.raises(OSError, match="in use"):
            other.bind(("127.0.0.1", port))  # held meanwhile
        server = MetricsServer(port)
        try:
            assert "vidapi_jobs" in await _scrape(server.port)
        finally:
            await server.aclose()
    _bind_again(port)  # released once the endpoint is gone


def test_a_claim_not_served_is_released() -> None:
    with _claimed(0) as port:
        pass
    _bind_again(port)


def _bind_again(port: int) -> None:
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past TIME_WAIT
        again.bind(("127.0.0.1", port))
        again.listen()
