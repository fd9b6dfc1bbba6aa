"""Through an HTTP proxy: API calls and uploads alike (the pump tunnels with CONNECT)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import vidapi_async as va
from vidapi_async.emulator import Emulator

from .conftest import make_file


@contextlib.asynccontextmanager
async def connect_proxy(
    refuse: bool = False,
) -> AsyncIterator[tuple[str, list[tuple[str, str | None]]]]:
    """A CONNECT-only proxy: records ``(authority, Proxy-Authorization)`` per tunnel."""
    seen: list[tuple[str, str | None]] = []
    pipes: set[asyncio.Task[None]] = set()

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

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
        both = [
            asyncio.ensure_future(pipe(reader, up_writer)),
            asyncio.ensure_future(pipe(up_reader, writer)),
        ]
        pipes.update(both)
        await asyncio.gather(*both)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        server.close()
        for task in pipes:
            task.cancel()
        await asyncio.gather(*pipes, return_exceptions=True)
        await server.wait_closed()


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
