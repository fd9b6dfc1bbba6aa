"""Uploads leave the event loop: each request runs on a blocking socket in a worker
thread of the client's own pool. What that must keep: prompt cancellation with nothing
left running, the trust a caller's session was given, progress on the loop."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


def upload_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(("vidapi-upload", "vidapi-read"))]


@contextlib.asynccontextmanager
async def server_that_never_reads() -> AsyncIterator[tuple[va.UploadSession, asyncio.Future[None]]]:
    """An upload address whose server accepts and never reads: a sending thread blocks
    once the socket buffers are full, and only shutting the socket down can wake it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    accepted: list[socket.socket] = []
    loop = asyncio.get_running_loop()
    accepting = loop.run_in_executor(None, lambda: accepted.append(listener.accept()[0]))
    try:
        yield (
            va.UploadSession(f"http://127.0.0.1:{port}/upload?uuid=1&seal=2", "http://x/p"),
            accepting,
        )
    finally:
        await asyncio.wait([accepting], timeout=5)
        for conn in accepted:
            conn.close()
        listener.close()


async def test_cancelling_an_upload_stops_its_thread_at_once(tmp_path: Path) -> None:
    src = make_file(tmp_path / "big.mp4", 64 * 1024 * 1024)
    sent: list[int] = []
    async with server_that_never_reads() as (session, accepting):
        async with va.Client("t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY) as client:
            task = asyncio.create_task(
                client.upload_file(
                    src,
                    upload_session=session,
                    progress=lambda s, t: sent.append(s),
                    chunked=False,
                )
            )
            await accepting
            while not sent:  # noqa: ASYNC110 - waiting for bytes to flow; not a check
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 5)
            assert sent[-1] < src.stat().st_size  # stopped mid-file
        assert upload_threads() == []  # the pool is gone with the client


async def test_closing_the_client_stops_an_upload_still_running(tmp_path: Path) -> None:
    src = make_file(tmp_path / "big.mp4", 64 * 1024 * 1024)
    sent: list[int] = []
    async with server_that_never_reads() as (session, accepting):
        client = va.Client("t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY)
        task = asyncio.create_task(
            client.upload_file(
                src, upload_session=session, progress=lambda s, t: sent.append(s), chunked=False
            )
        )
        await accepting
        while not sent:  # noqa: ASYNC110 - waiting for bytes to flow; not a check
            await asyncio.sleep(0.01)
        await asyncio.wait_for(client.close(), 5)  # does not wait for the whole file
        with pytest.raises(va.ClientClosedError):
            await asyncio.wait_for(task, 5)
        assert upload_threads() == []


async def test_uploads_honour_the_trust_of_a_callers_session(tmp_path: Path) -> None:
    async with Emulator(tls=True) as emu:
        connector = aiohttp.TCPConnector(ssl=emu.ssl_context())
        async with aiohttp.ClientSession(connector=connector) as session:
            async with client_for(emu, session=session) as client:
                video = await client.upload_video(
                    make_file(tmp_path / "m.mp4", 100_000), title="t", channel="news"
                )
                address = await client.get_upload_session()
            assert not session.closed  # a caller's session is never closed by us
        assert emu.state.get("video", video.id) is not None
        async with client_for(emu, ssl=None, retry=va.NO_RETRY) as untrusting:
            with pytest.raises(
                va.ConnectError, match="TLS handshake failed: SSLCertVerificationError"
            ):
                await untrusting.upload_file(
                    make_file(tmp_path / "n.mp4", 1000), upload_session=address
                )


async def test_the_tls_trust_is_loaded_by_the_first_https_upload_only(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the system's CA certificates costs tens of milliseconds of CPU: a batch of
    plain-HTTP uploads never pays it; the first HTTPS upload does, once, in its thread."""
    import ssl

    made: list[str] = []
    real = ssl.create_default_context

    def recording(*args: object, **kwargs: object) -> ssl.SSLContext:
        made.append(threading.current_thread().name)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl, "create_default_context", recording)
    files = [make_file(tmp_path / f"p{i}.mp4", 50_000 + i) for i in range(3)]
    async with client_for(emulator) as client, va.BatchUploader(client, concurrency=3) as batch:
        results = [
            r
            async for r in batch.run(va.UploadJob(path=f, title="t", channel="news") for f in files)
        ]
    assert [r.status for r in results] == [va.JobStatus.DONE] * 3
    assert made == []
    async with Emulator(tls=True) as emu:
        async with client_for(emu) as trusting:
            address = await trusting.get_upload_session()
        made.clear()  # the emulator's own contexts
        async with client_for(emu, ssl=None, retry=va.NO_RETRY) as client:
            for name in ("a.mp4", "b.mp4"):  # the system's trust refuses the emulator's
                with pytest.raises(va.ConnectError, match="SSLCertVerificationError"):
                    await client.upload_file(
                        make_file(tmp_path / name, 1000), upload_session=address
                    )
    in_threads = [name for name in made if name != "MainThread"]  # (aiohttp's own: ssl=None)
    assert len(in_threads) == 1 and in_threads[0].startswith("vidapi-upload"), made


async def test_progress_runs_on_the_loop_thread(emulator: Emulator, tmp_path: Path) -> None:
    threads: set[int] = set()
    async with client_for(emulator) as client:
        await client.upload_file(
            make_file(tmp_path / "m.mp4", 3 * 1024 * 1024),
            read_size=256 * 1024,
            progress=lambda sent, total: threads.add(threading.get_ident()),
        )
    assert threads == {threading.get_ident()}


async def test_uploads_never_start_a_thread_on_the_loop(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thread.start waits until the new thread runs: milliseconds on a busy machine, so
    the loop must never be the thread that starts an upload worker."""
    loop_thread = threading.get_ident()
    starts: list[tuple[str, bool]] = []
    real_start = threading.Thread.start

    def recording_start(self: threading.Thread) -> None:
        starts.append((self.name, threading.get_ident() == loop_thread))
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", recording_start)
    files = [make_file(tmp_path / f"f{i}.mp4", 2 * 1024 * 1024) for i in range(6)]
    small = [make_file(tmp_path / f"s{i}.mp4", 1000) for i in range(6)]  # read for the loop
    async with client_for(emulator) as client:
        await asyncio.gather(
            *(client.upload_file(f, chunked=True, workers=3, range_size=512 * 1024) for f in files),
            *(client.upload_file(f) for f in small),
        )
    started_on_loop = [name for name, on_loop in starts if on_loop]
    assert len([n for n, _ in starts if n.startswith("vidapi-upload")]) > 3
    assert [n for n, _ in starts if n.startswith("vidapi-read")]
    assert not [n for n in started_on_loop if n.startswith(("vidapi-upload", "vidapi-read"))]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://h/upload?uuid=1&seal=a%2Fb%3D",
            ("https", "h", 443, "/upload?uuid=1&seal=a%2Fb%3D"),
        ),
        ("http://u:p@h:81/x", ("http", "h", 81, "/x")),
        ("https://[::1]:8443/up?x=1#frag", ("https", "::1", 8443, "/up?x=1")),
        ("http://h?x=1", ("http", "h", 80, "/?x=1")),
        ("http://h", ("http", "h", 80, "/")),
    ],
)
def test_the_request_target_is_the_urls_own_text(
    url: str, expected: tuple[str, str, int, str]
) -> None:
    from vidapi_async._aio._pump import split_url

    assert split_url(url) == expected


@pytest.mark.parametrize("read_size", [1024 * 1024, 200_000])
async def test_tls_upload_reports_progress_once_per_read_size(
    tmp_path: Path, read_size: int
) -> None:
    """The pump sends over TLS in cache-sized pieces (smaller than the default
    read_size): progress still comes once per read_size bytes and at the end, and the
    bytes arrive whole (the server's hash of them is checked)."""
    size = 3 * 1024 * 1024 + 100_000
    reports: list[int] = []
    async with Emulator(tls=True) as emu, client_for(emu, ssl=emu.ssl_context()) as client:
        await client.upload_file(
            make_file(tmp_path / "m.mp4", size),
            read_size=read_size,
            chunked=False,
            verify_hash=True,
            progress=lambda sent, total: reports.append(sent),
        )
    steps = list(range(read_size, size, read_size))
    assert reports == [*steps, size]


async def test_the_media_type_table_is_read_off_the_loop(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The part's Content-Type is guessed from the file's name with ``mimetypes``, whose
    first use reads the system's table from disk: never on the loop thread."""
    import mimetypes

    from vidapi_async._transfer import sending as _uploads

    readers: list[threading.Thread] = []
    real_init = mimetypes.init

    def init(files: object = None) -> None:
        readers.append(threading.current_thread())
        real_init()

    # as if no upload had run in this process yet
    monkeypatch.setattr(mimetypes, "_db", None)
    monkeypatch.setattr(mimetypes, "inited", False)
    monkeypatch.setattr(mimetypes, "init", init)
    monkeypatch.setattr(_uploads, "_MIME_LOADED", False, raising=False)
    src = make_file(tmp_path / "clip.mp4", 4096)
    async with client_for(emulator) as client:
        uploaded = await client.upload_file(src)
    assert uploaded.url
    assert readers, "the table was never read: the test did not reset it"
    assert threading.main_thread() not in readers


@pytest.mark.parametrize("jobs", [0, 1])
async def test_a_batch_that_ends_at_once_leaves_no_upload_thread(
    emulator: Emulator, tmp_path: Path, jobs: int
) -> None:
    """The batch has the pump made as it starts; a batch that ends before that is done
    (no job, or every job refused before its upload) still leaves nothing running once
    its client is closed."""
    files = [make_file(tmp_path / f"b{i}.mp4", 1000) for i in range(jobs)]
    async with client_for(emulator) as client:
        async with va.BatchUploader(client) as batch:
            work = [va.UploadJob(path=f, title="t", channel="no-such-channel") for f in files]
            results = [r async for r in batch.run(work)]
        assert all(not r.ok for r in results)
    assert upload_threads() == []
