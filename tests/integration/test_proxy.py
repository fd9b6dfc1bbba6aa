"""Through an HTTP proxy: API calls and uploads alike (the pump tunnels with CONNECT)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.forward_proxy import serving, splice
from vidapi_async.emulator import Emulator


@contextlib.asynccontextmanager
async def connect_proxy(
    refuse: bool = False,
) -> AsyncIterator[tuple[str, list[tuple[str, str | None]]]]:
    """A CONNECT-only proxy: records ``(authority, Proxy-Authorization)`` per tunnel."""
    seen: list[tuple[str, str | None]] = []
    pipes: set[asyncio.Task[None]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        method, authority, _ = head[0].split(" ", 2)
        auth = next(
            (h.split(":", 1)[1].strip() for h in head if h.lower().startswith("proxy-auth")),
            None,
        )
        seen.append((authority, auth))
        if method != "CONNECT" or refuse:
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        host, port = authority.rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await splice(pipes, reader, writer, up_reader, up_writer)

    async with serving(handle, pipes) as url:
        yield url, seen


async def test_api_calls_and_uploads_tunnel_through_the_environments_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Emulator(tls=True) as emu, connect_proxy() as (proxy, seen):
        monkeypatch.setenv("HTTPS_PROXY", proxy.replace("http://", "http://u:p%40ss@"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        async with va.Client("demo-token", base_url=emu.base_url, ssl=emu.ssl_context()) as c:
            uploaded = await c.upload_file(make_file(tmp_path / "p.mp4", 50_000))
            await c.upload_file(
                make_file(tmp_path / "q.mp4", 50_000), chunked=True, range_size=16384
            )
            video = await c.create_video(url=uploaded.url, title="via proxy", channel="news")
        api = emu.base_url.split("://", 1)[1]
    upload_hosts = {a for a, _ in seen} - {api}
    assert api in {a for a, _ in seen}  # API calls went through it
    assert upload_hosts  # and uploads did: the upload server's own port
    assert {auth for _, auth in seen} == {"Basic dTpwQHNz"}  # u:p@ss, unescaped
    assert video.title == "via proxy"


async def test_no_proxy_and_trust_env_false_go_direct(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Emulator(tls=True) as emu, connect_proxy() as (proxy, seen):
        monkeypatch.setenv("HTTPS_PROXY", proxy)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        async with va.Client("demo-token", base_url=emu.base_url, ssl=emu.ssl_context()) as c:
            await c.upload_file(make_file(tmp_path / "p.mp4", 5000))
        monkeypatch.delenv("NO_PROXY")
        async with va.Client(
            "demo-token", base_url=emu.base_url, ssl=emu.ssl_context(), trust_env=False
        ) as c:
            await c.upload_file(make_file(tmp_path / "p.mp4", 5000))
    assert seen == []


async def test_a_proxy_that_refuses_is_a_connect_error_naming_it(tmp_path: Path) -> None:
    async with Emulator(tls=True) as emu, connect_proxy(refuse=True) as (proxy, _):
        async with va.Client(
            "demo-token", base_url=emu.base_url, ssl=emu.ssl_context(), retry=va.NO_RETRY
        ) as c:
            session = await c.get_upload_session()  # the API call goes direct
        async with va.Client(
            "demo-token",
            base_url=emu.base_url,
            ssl=emu.ssl_context(),
            retry=va.NO_RETRY,
            proxy=proxy,
        ) as c:
            with pytest.raises(va.ConnectError, match=r"proxy refused .*status 403"):
                await c.upload_file(make_file(tmp_path / "p.mp4", 5000), upload_session=session)


def test_proxy_settings_are_checked_without_echoing_credentials() -> None:
    with pytest.raises(va.InvalidArgumentError, match="proxy") as info:
        va.Client("t", proxy="socks5://user:secret@h:1")
    assert "secret" not in str(info.value)
    with pytest.raises(va.UsageError, match="proxy= goes with the client's own session"):
        va.Client("t", proxy="http://h:3128", session=object())  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def scripted_proxy(answer: bytes, pause: float = 0.0) -> AsyncIterator[tuple[str, list[str]]]:
    """A proxy that answers every CONNECT with ``answer``, a byte at a time when
    ``pause``, then closes; records each request line."""
    seen: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            seen.append((await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")[0].decode())
            for i in range(len(answer)) if pause else [None]:
                writer.write(answer if i is None else answer[i : i + 1])
                await writer.drain()
                if pause:
                    await asyncio.sleep(pause)
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", seen
    finally:
        server.close()
        await server.wait_closed()


async def direct_session(emu: Emulator) -> va.UploadSession:
    """An upload address asked for without the proxy."""
    async with va.Client("demo-token", base_url=emu.base_url, ssl=emu.ssl_context()) as c:
        return await c.get_upload_session()


def via_proxy(emu: Emulator, proxy: str, **options: Any) -> va.Client:
    options.setdefault("retry", va.NO_RETRY)
    return va.Client(
        "demo-token", base_url=emu.base_url, ssl=emu.ssl_context(), proxy=proxy, **options
    )


async def test_a_proxy_asking_for_credentials_is_an_authentication_error_not_retried(
    tmp_path: Path,
) -> None:
    wants = b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"
    async with Emulator(tls=True) as emu, scripted_proxy(wants) as (proxy, seen):
        session = await direct_session(emu)
        async with via_proxy(
            emu, proxy, retry=va.RetryPolicy(max_attempts=3, base_delay=0.01)
        ) as c:
            with pytest.raises(va.AuthenticationError, match="407"):
                await c.upload_file(make_file(tmp_path / "p.mp4", 5000), upload_session=session)
            with pytest.raises(va.AuthenticationError, match="407"):  # API calls alike
                await c.get_upload_session()
    assert len(seen) == 2 and all(line.startswith("CONNECT ") for line in seen)


async def test_a_trickling_proxy_gets_one_deadline_for_the_whole_connect(
    tmp_path: Path,
) -> None:
    ok = b"HTTP/1.1 200 OK\r\n\r\n"
    async with Emulator(tls=True) as emu, scripted_proxy(ok, pause=0.4) as (proxy, _):
        session = await direct_session(emu)
        async with via_proxy(emu, proxy, timeouts=va.Timeouts(connect=1.0)) as c:
            # Each byte comes well within 1 s; the whole answer does not.
            with pytest.raises(va.RequestTimeoutError, match="proxy"):
                await c.upload_file(make_file(tmp_path / "p.mp4", 5000), upload_session=session)


@pytest.mark.parametrize(
    ("no_proxy", "direct"),
    [
        ("127.0.0.0/8", True),
        ("10.0.0.0/8, 127.0.0.1/32", True),
        ("127.0.0.1:8443", True),
        ("127.0.0.1:9999", False),
        ("10.0.0.0/8", False),
        ("up.example.com", False),
        (".example.com", False),
        ("*", True),
    ],
)
def test_no_proxy_honours_cidr_blocks_and_host_port(no_proxy: str, direct: bool) -> None:
    from vidapi_async._protocol import proxy_for

    settings = {"https": "http://proxy:3128", "no": no_proxy}
    chosen = proxy_for("https://127.0.0.1:8443/upload?x=1", settings)
    assert (chosen is None) is direct
    named = proxy_for("https://up.example.com/u", settings)
    assert (named is None) is (no_proxy in ("up.example.com", ".example.com", "*"))


async def test_the_token_never_goes_through_a_proxy_in_clear(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An http base_url: API calls go direct, whether the proxy is given or comes from
    the environment; a caller's session that would take the environment's proxy is
    refused before a byte is sent."""
    from tests.wire import Reply, WireServer

    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with Emulator() as emu, WireServer(lambda seen: Reply(200, b"{}")) as proxy:
        assert emu.base_url.startswith("http://")
        async with va.Client("demo-token", base_url=emu.base_url, proxy=proxy.url) as c:
            assert (await c.me()).id
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        async with va.Client("demo-token", base_url=emu.base_url) as c:
            assert (await c.me()).id
        async with aiohttp.ClientSession(trust_env=True) as theirs:
            async with va.Client("demo-token", base_url=emu.base_url, session=theirs) as c:
                with pytest.raises(va.UsageError, match="in clear"):
                    await c.get_auth_info()
    assert proxy.seen == []


async def test_a_tunnel_to_the_default_https_port_names_the_port(tmp_path: Path) -> None:
    """CONNECT's target is host:port whatever the port (RFC 9110 9.3.6): the default
    https port too (``CONNECT host`` alone is not a target a proxy can use)."""
    session = va.UploadSession("https://upload.example:443/upload?uuid=1&seal=2", "http://x/p")
    async with connect_proxy(refuse=True) as (proxy, seen):
        async with va.Client(
            "t", base_url="https://127.0.0.1:9", retry=va.NO_RETRY, proxy=proxy
        ) as c:
            with pytest.raises(va.ConnectError, match="status 403"):
                await c.upload_file(make_file(tmp_path / "p.mp4", 500), upload_session=session)
    assert [authority for authority, _ in seen] == ["upload.example:443"]
