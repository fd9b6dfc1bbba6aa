"""The Prometheus endpoint against clients that are not Prometheus (issue 29): a client
that sends its request a line at a time, connections left idle, a scraper that hangs up;
and what a scrape shows before anything happened (issue 28). Clients are raw asyncio
sockets; the text is read with prometheus-client's parser (no code shared with the
endpoint). The endpoint runs on the test's event loop: no client here may block it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

import vidapi_async as va
from tests.raw_http import exchange as _exchange
from vidapi_async._metrics import REGISTRY, MetricsServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

SAFETY = 20.0  # a hung test fails after this; never what a test measures


async def _scrape(port: int) -> dict[str, Any]:
    answer = await _exchange(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert b"\r\ncontent-type: text/plain; version=0.0.4" in head.lower()
    return {f.name: f for f in text_string_to_metric_families(body.decode())}


async def _idle(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection that began a request and sends nothing more."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\n")
    await writer.drain()
    return reader, writer


async def _closed_by_server(reader: asyncio.StreamReader) -> bytes:
    try:
        return await asyncio.wait_for(reader.read(), SAFETY)
    except ConnectionResetError:
        return b""


async def _close_all(conns: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]) -> None:
    for _, writer in conns:
        writer.close()
    for _, writer in conns:
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def test_a_slowloris_client_does_not_hold_the_endpoint() -> None:
    """A header line every so often, never the blank line: before, each line renewed the
    read timeout of the connection's thread, which was held for ever. Now the whole
    request has a deadline (0.3 s here): the connection is closed, unanswered."""
    server = MetricsServer(0, deadline=0.3)
    try:
        reader, writer = await _idle(server.port)
        got = None
        for i in range(int(SAFETY / 0.05)):
            try:
                got = await asyncio.wait_for(reader.read(100), 0.05)  # the pace of lines
                break
            except TimeoutError:
                try:
                    writer.write(b"X-Slow-%d: 1\r\n" % i)
                    await writer.drain()
                except ConnectionError:
                    got = b""
                    break
            except ConnectionError:
                got = b""
                break
        await _close_all([(reader, writer)])
        assert got == b"", "the endpoint still held the connection (or answered it)"
        await _scrape(server.port)  # and it still serves
    finally:
        await server.aclose()


async def test_a_request_not_whole_by_the_deadline_is_closed() -> None:
    server = MetricsServer(0, deadline=0.3)
    try:
        conn = await _idle(server.port)
        assert await _closed_by_server(conn[0]) == b""  # closed, nothing answered
        await _close_all([conn])
    finally:
        await server.aclose()


async def test_idle_connections_over_the_bound_are_closed_and_a_scrape_is_answered() -> None:
    """Before: every connection took a thread until its read timed out (300 idle ones:
    154 threads, a scrape a second late). Now at most ``max_connections`` are open:
    the oldest one still waiting for its request makes room for a new one, so a real
    scrape is answered however many idle connections there are."""
    server = MetricsServer(0, max_connections=4, deadline=SAFETY * 3)
    threads = set(threading.enumerate())
    idle = []
    try:
        for _ in range(10):
            idle.append(await _idle(server.port))
        scraped = await _scrape(server.port)
        assert "vidapi_jobs_in_flight" in scraped
        # the 7 oldest were closed to keep 4 open, the scrape's included
        for reader, _ in idle[:7]:
            assert await _closed_by_server(reader) == b""
        assert server.connections <= 4
        extra = set(threading.enumerate()) - threads
        assert len(extra) <= 1, "no thread per connection (one renders the text)"
    finally:
        await _close_all(idle)
        await server.aclose()


async def test_a_scraper_hanging_up_early_prints_nothing(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Prometheus closes a scrape that times out: a reset connection mid-answer must not
    print a traceback on stderr (a JSON log's lines would no longer all be JSON)."""
    server = MetricsServer(0)
    try:
        for i in range(20_000):  # a body far larger than a socket's buffers
            REGISTRY.add("vidapi.retries", 1, {"reason": f"r{i:05d}"})
        for _ in range(5):
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            await writer.drain()
            assert await asyncio.wait_for(reader.read(1), SAFETY)
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.close()
            await writer.wait_closed()
        await _scrape(server.port)
    finally:
        await server.aclose()
    assert capfd.readouterr().err == ""


async def test_closing_the_endpoint_closes_its_connections_and_its_port() -> None:
    server = MetricsServer(0, deadline=SAFETY * 3)
    conn = await _idle(server.port)
    await server.aclose()
    assert await _closed_by_server(conn[0]) == b""
    await _close_all([conn])
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", server.port)


async def test_the_sync_close_still_works_from_the_loop() -> None:
    """``close()`` (the old name) stops the endpoint at once, from the loop's thread."""
    server = MetricsServer(0)
    await _scrape(server.port)
    server.close()
    server.close()  # twice is harmless
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", server.port)


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GET /other HTTP/1.1\r\n\r\n", b"404"),
        (b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", b"405"),
        (b"GET /metrics\r\n\r\n", b"400"),
        (b"\x00\xff garbage \r\n\r\n", b"400"),
        (b"GET /metrics HTTP/1.1\r\n" + b"X: " + b"y" * 20_000 + b"\r\n\r\n", b"431"),
    ],
    ids=["other-path", "post", "no-version", "garbage", "huge-head"],
)
async def test_what_is_not_a_scrape_gets_a_status_and_a_close(
    request_bytes: bytes, status: bytes
) -> None:
    server = MetricsServer(0)
    try:
        answer = await _exchange(server.port, request_bytes)
        assert answer.startswith(b"HTTP/1.1 " + status + b" "), answer[:200]
        assert b"\r\nconnection: close\r\n" in answer.lower()
    finally:
        await server.aclose()


async def test_head_and_a_query_string_are_a_scrape() -> None:
    server = MetricsServer(0)
    try:
        answer = await _exchange(server.port, b"HEAD /metrics?x=1 HTTP/1.0\r\n\r\n")
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ") and body == b""
        assert b"\r\ncontent-length: " in head.lower()
    finally:
        await server.aclose()


async def test_every_counter_has_a_zero_sample_from_the_start() -> None:
    """Issue 28: before, a counter printed only its HELP and TYPE lines until its first
    event (a query or an alert on it saw no series). Now: an unlabelled counter 0; the
    jobs' counter 0 for each documented outcome; the retries' counter (its reasons are
    statuses and error classes: no closed list) one sample without labels at 0."""
    server = MetricsServer(0)
    try:
        scraped = await _scrape(server.port)
    finally:
        await server.aclose()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in scraped.values()
        if family.type == "counter"
        for s in family.samples
        if s.name.endswith("_total")
    }
    expected: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {
        ("vidapi_upload_bytes_total", ()): 0.0,
        ("vidapi_retries_total", ()): 0.0,
        ("vidapi_quota_refusals_total", ()): 0.0,
        **{
            ("vidapi_jobs_total", (("outcome", outcome),)): 0.0
            for outcome in ("done", "failed", "skipped", "updated", "adopted", "lost", "requeued")
        },
    }
    assert samples == expected
    assert [s.value for s in scraped["vidapi_jobs_in_flight"].samples] == [0.0]


def test_the_outcomes_shown_from_the_start_are_the_jobs_outcomes() -> None:
    from vidapi_async._metrics import JOB_OUTCOMES
    from vidapi_async.batch import JobStatus

    assert set(JOB_OUTCOMES) == {s.value for s in JobStatus} | {"requeued"}


async def test_a_batch_serves_on_its_loop_and_closes_its_connections_when_left(
    emulator: Emulator,
) -> None:
    """``BatchUploader(metrics_port=0)``: served while the block runs, scraped here on the
    batch's own loop; leaving the block closes the port and drops an idle client."""
    async with client_for(emulator) as client:
        async with va.BatchUploader(client, metrics_port=0) as batch:
            port = batch.metrics_port
            assert port is not None
            assert "vidapi_jobs" in await _scrape(port)
            conn = await _idle(port)
        assert batch.metrics_port is None
    assert await _closed_by_server(conn[0]) == b""
    await _close_all([conn])
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", port)


async def test_a_busy_port_is_an_error_before_the_counts_start() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(OSError, match="in use"):
            MetricsServer(busy.getsockname()[1])
    assert not REGISTRY.on


@pytest.mark.parametrize(
    "bad",
    [
        {"deadline": 0},
        {"deadline": float("nan")},
        {"max_connections": 0},
        {"max_connections": True},
    ],
)
async def test_a_bad_deadline_or_bound_is_refused_before_the_port_is_bound(
    bad: dict[str, Any],
) -> None:
    with pytest.raises(va.InvalidArgumentError, match=next(iter(bad))):
        MetricsServer(0, **bad)
    assert not REGISTRY.on
