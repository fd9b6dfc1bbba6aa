"""Sources written by an attacker (issue 18): credentials in a source url never reach a
message, a repr, a journal or a log line; redirects are checked against the
``SourcePolicy`` on the address actually connected; a source's cookies never reach the
API; compressed, endless, trickling and stalled sources end in a typed error.

The sources are ``tests/wire.py``'s scripted servers on loopback addresses only
(127.0.0.0/8); the platform is the emulator."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import stored_bytes
from tests.wire import Reply, Seen, WireServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

DATA = os.urandom(200_000)
PASSWORD = "Pa55w0rd-hunter2"


# --- 1. credentials in a source url ------------------------------------------------------


async def test_a_password_in_a_source_url_is_in_no_message(emulator: Emulator) -> None:
    async with (
        WireServer(lambda seen: Reply(404, b"no")) as src,
        client_for(emulator, retry=va.NO_RETRY) as client,
    ):
        netloc = src.url.split("//", 1)[1]
        with pytest.raises(va.SourceError) as info:
            await client.upload_from_url(f"http://alice:{PASSWORD}@{netloc}/f.mp4")
        assert src.seen[0].headers["authorization"].startswith("Basic ")  # still sent there
    assert PASSWORD not in str(info.value) and PASSWORD not in repr(info.value)
    assert "alice" not in str(info.value)
    assert "/f.mp4" in str(info.value)
    # A source that cannot be reached: the transport's message too.
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        with pytest.raises(va.TransportError) as lost:
            await client.upload_from_url(f"http://alice:{PASSWORD}@{netloc}/f.mp4")
    assert PASSWORD not in str(lost.value)


async def test_a_url_job_keeps_its_password_out_of_results_journal_and_log(
    emulator: Emulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with (
        WireServer(lambda seen: Reply(403, b"no")) as src,
        client_for(emulator, retry=va.NO_RETRY) as client,
    ):
        netloc = src.url.split("//", 1)[1]
        job = va.UploadJob(url=f"http://bob:{PASSWORD}@{netloc}/v.mp4", title="t", channel="news")
        journal = tmp_path / "j.sqlite"
        with caplog.at_level(logging.DEBUG, logger="vidapi_async"):
            async with va.BatchUploader(client, journal=journal) as batch:
                [result] = [r async for r in batch.run([job])]
    assert result.status is va.JobStatus.FAILED
    assert isinstance(result.error, va.SourceError)
    for text in (repr(result), str(result.error), job.where, caplog.text):
        assert PASSWORD not in text and "bob" not in text
    assert "/v.mp4" in job.where
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT * FROM jobs").fetchall()
    assert rows and PASSWORD not in repr(rows)


async def test_a_manifest_names_the_variable_holding_a_url_jobs_headers(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def source(seen: Seen) -> Reply:
        ok = seen.headers.get("x-source-key") == PASSWORD
        return Reply(200, DATA) if ok else Reply(401, b"")

    monkeypatch.setenv("SRC_HEADERS", f"X-Source-Key: {PASSWORD}\nX-Other: 1\n")
    async with WireServer(source) as src, client_for(emulator, retry=va.NO_RETRY) as client:
        manifest = tmp_path / "m.csv"
        manifest.write_text(f"url,headers,title\n{src.url}/a.mp4,SRC_HEADERS,a\n", "utf-8")
        [job] = va.batch.jobs_from_manifest(str(manifest), channel="news")
        assert PASSWORD not in repr(job)
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
            [result] = [r async for r in batch.run([job])]
    assert result.status is va.JobStatus.DONE, result.error
    assert stored_bytes(emulator, emulator.videos()[0]["url"]) == DATA
    assert src.seen[0].headers["x-other"] == "1"
    manifest.write_text("url,headers\nhttp://h/a.mp4,NOT_SET_ANYWHERE\n", "utf-8")
    with pytest.raises(va.InvalidArgumentError, match="NOT_SET_ANYWHERE is not set"):
        list(va.batch.jobs_from_manifest(str(manifest), channel="news"))
    monkeypatch.setenv("SRC_HEADERS", f"no colon {PASSWORD}")
    manifest.write_text("url,headers\nhttp://h/a.mp4,SRC_HEADERS\n", "utf-8")
    with pytest.raises(va.InvalidArgumentError) as bad:
        list(va.batch.jobs_from_manifest(str(manifest), channel="news"))
    assert PASSWORD not in str(bad.value) and "SRC_HEADERS" in str(bad.value)


# --- 2. SSRF: the policy, on the address actually connected -----------------------------


def test_the_policy_rules_without_a_socket() -> None:
    default = va.SourcePolicy()
    assert default.refusal("127.0.0.1") is None  # a first request to a private address
    assert default.refusal("10.1.2.3", previous="192.168.0.1") is None  # private to private
    unspecified = "0" + ".0.0.0"  # an address to judge, not one to bind
    for inner in ("127.0.0.1", "169.254.169.254", "10.0.0.5", unspecified, "::1", "fe80::1%2"):
        why = default.refusal(inner, previous="93.184.216.34")
        assert why is not None and "allow_private" in why, inner
    assert default.refusal("::ffff:127.0.0.1", previous="93.184.216.34") is not None
    assert va.SourcePolicy(allow_private=True).refusal("10.0.0.5", previous="8.8.8.8") is None
    both = va.SourcePolicy(deny=["127.0.0.2/32"], allow=["127.0.0.0/8"])
    assert "deny" in (both.refusal("127.0.0.2") or "")  # deny wins over allow
    assert both.refusal("127.0.0.3") is None
    assert "SourcePolicy.allow" in (both.refusal("10.9.0.1") or "")
    only = va.SourcePolicy(allow=("127.0.0.1/32",))
    assert "SourcePolicy.allow" in (only.refusal("127.0.0.3") or "")
    assert va.SourcePolicy.redirect_refusal("https", "http") == "a redirect from https to http"
    assert va.SourcePolicy.redirect_refusal("http", "https") is None
    assert va.SourcePolicy.redirect_refusal("https", "file") is not None
    with pytest.raises(va.InvalidArgumentError):
        va.SourcePolicy(deny="10.0.0.0/8")  # type: ignore[arg-type]
    with pytest.raises(va.InvalidArgumentError):
        va.SourcePolicy(deny=["not a network"])


async def test_a_redirect_into_a_denied_network_is_refused_before_anything_is_sent(
    emulator: Emulator,
) -> None:
    def internal(seen: Seen) -> Reply:
        return Reply(200, b'{"AccessKeyId": "internal secret"}')

    async with WireServer(internal, host="127.0.0.2") as inner:

        def public(seen: Seen) -> Reply:
            return Reply(302, b"", {"Location": f"{inner.url}/latest/meta-data/iam"})

        async with WireServer(public) as src:
            for policy in (
                va.SourcePolicy(deny=("127.0.0.2/32",)),
                va.SourcePolicy(allow=("127.0.0.1/32",)),
            ):
                async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as client:
                    with pytest.raises(va.SourceError, match=r"SourcePolicy\.(deny|allow)"):
                        await client.upload_from_url(f"{src.url}/video.mp4")
    assert inner.seen == []  # not even the request reached the internal address
    assert len(src.seen) == 2
    assert list(emulator.state.all("file")) == []
    assert [r for r in emulator.requests if "upload" in r.path] == []


async def test_a_name_is_checked_on_what_it_resolves_to(emulator: Emulator) -> None:
    async with WireServer(lambda seen: Reply(200, DATA)) as src:
        port = src.url.rsplit(":", 1)[1]
        policy = va.SourcePolicy(deny=("127.0.0.0/8", "::1/128"))
        async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as client:
            with pytest.raises(va.SourceError, match=r"SourcePolicy\.deny"):
                await client.upload_from_url(f"http://localhost:{port}/x.mp4")
    assert src.seen == []


async def test_redirects_inside_the_policy_are_followed(emulator: Emulator) -> None:
    async with WireServer(lambda seen: Reply(200, DATA), host="127.0.0.2") as final:

        def first(seen: Seen) -> Reply:
            return Reply(301, b"", {"Location": f"{final.url}/real.mp4"})

        async with WireServer(first) as src, client_for(emulator) as client:
            uploaded = await client.upload_from_url(f"{src.url}/x.mp4")
    assert stored_bytes(emulator, uploaded.url) == DATA
    assert [s.path for s in final.seen] == ["/real.mp4"]


async def test_endless_redirects_end(emulator: Emulator) -> None:
    def loop(seen: Seen) -> Reply:
        return Reply(302, b"", {"Location": "/again"})

    async with WireServer(loop) as src, client_for(emulator, retry=va.NO_RETRY) as client:
        with pytest.raises(va.SourceError, match="redirects"):
            await client.upload_from_url(f"{src.url}/x.mp4")
    assert 2 < len(src.seen) <= 11


# --- 3. a source's cookies stay with the source ------------------------------------------


async def test_a_source_cookie_never_reaches_the_api(emulator: Emulator) -> None:
    def source(seen: Seen) -> Reply:
        return Reply(200, DATA, {"Set-Cookie": "session=stolen; Path=/"})

    async with WireServer(source) as src, client_for(emulator) as client:
        await client.upload_from_url(f"{src.url}/a.mp4")
        await client.upload_from_url(f"{src.url}/b.mp4")
        await client.get_upload_session()
    for request in emulator.requests:
        assert "stolen" not in str(request.headers)
    assert "cookie" not in src.seen[1].headers  # nor the next source


# --- 4-5. compressed, endless and trickling sources ---------------------------------------


@pytest.fixture
def spool_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import tempfile

    folder = tmp_path / "spool"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


async def test_a_source_past_the_size_cap_is_refused_and_its_spool_removed(
    emulator: Emulator, spool_dir: Path
) -> None:
    endless = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + DATA
    async with WireServer(lambda seen: Reply(raw=endless)) as src:
        async with client_for(emulator, retry=va.NO_RETRY, max_source_size=50_000) as client:
            with pytest.raises(va.SourceError, match="max_source_size"):
                await client.upload_from_url(f"{src.url}/a.mp4")
            with pytest.raises(va.SourceError, match="max_source_size"):  # declared
                await client.upload_from_url(f"{src.url.replace('raw', '')}/b.mp4")
        async with client_for(emulator, retry=va.NO_RETRY) as client:
            with pytest.raises(va.SourceError, match="max_source_size"):  # per call
                await client.upload_from_url(f"{src.url}/a.mp4", max_source_size=1000)
    assert list(spool_dir.iterdir()) == []
    assert list(emulator.state.all("file")) == []


async def test_a_declared_length_past_the_cap_is_refused_before_reading(
    emulator: Emulator,
) -> None:
    async with (
        WireServer(lambda seen: Reply(200, DATA)) as src,
        client_for(emulator, retry=va.NO_RETRY, max_source_size=1000) as client,
    ):
        with pytest.raises(va.SourceError, match=f"holds {len(DATA)} bytes"):
            await client.upload_from_url(f"{src.url}/a.mp4")
    assert [r for r in emulator.requests if "upload" in r.path] == []


async def test_a_silent_source_and_a_trickling_one_end_in_a_source_error(
    emulator: Emulator, spool_dir: Path
) -> None:
    silent = Reply(200, DATA[:2000], segment=1000, pause=1.5)
    async with WireServer(lambda seen: silent) as src:
        quick = va.Timeouts(source_idle=0.3)
        async with client_for(emulator, retry=va.NO_RETRY, timeouts=quick) as client:
            with pytest.raises(va.SourceError, match="source_idle"):
                await client.upload_from_url(f"{src.url}/a.mp4")
    trickle = Reply(200, DATA[:4000], segment=100, pause=0.05)
    async with WireServer(lambda seen: trickle) as src:
        short = va.Timeouts(source_idle=5.0, source_total=0.5)
        async with client_for(emulator, retry=va.NO_RETRY, timeouts=short) as client:
            with pytest.raises(va.SourceError, match="source_total"):
                await client.upload_from_url(f"{src.url}/a.mp4")
    assert list(spool_dir.iterdir()) == []
    assert list(emulator.state.all("file")) == []


# --- 6. a stalled pipe --------------------------------------------------------------------


@pytest.mark.parametrize("size", [1000, None])
async def test_a_stalled_pipe_can_be_cancelled_and_the_client_closed(
    emulator: Emulator, size: int | None
) -> None:
    r, w = os.pipe()
    os.write(w, b"x" * 10)  # then the writer stops, its end still open
    sent = asyncio.Event()
    try:
        with open(r, "rb") as pipe:
            client = client_for(emulator, retry=va.NO_RETRY)
            try:
                task = asyncio.create_task(
                    client.upload_file(pipe, size=size, progress=lambda s, t: sent.set())
                )
                if size is not None:
                    await sent.wait()  # the ten bytes went out: the thread waits for more
                else:
                    await asyncio.sleep(0.2)  # spooling: nothing to wait on but time
                task.cancel()
                done, _ = await asyncio.wait({task}, timeout=10)  # a guard, not a clock
                assert task in done and task.cancelled()
            finally:
                closing = asyncio.ensure_future(client.close())
                done, _ = await asyncio.wait({closing}, timeout=10)
                assert closing in done
    finally:
        os.close(w)


# --- 16. an async iterable that fails -------------------------------------------------------


async def test_an_async_iterable_that_raises_oserror_is_a_source_error(
    emulator: Emulator,
) -> None:
    async def broken() -> AsyncIterator[bytes]:
        yield b"a" * 1000
        raise OSError(5, "Input/output error")

    async with client_for(emulator, retry=va.RetryPolicy(max_attempts=3)) as client:
        for size in (5000, None):
            with pytest.raises(va.SourceError, match="Input/output error") as info:
                await client.upload_file(broken(), size=size)
            assert isinstance(info.value.__cause__, OSError)
    assert list(emulator.state.all("file")) == []


async def test_a_redirect_from_https_to_http_is_refused(emulator: Emulator, tmp_path: Path) -> None:
    import ssl

    from tests.wire import self_signed

    cert, key = self_signed(tmp_path)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    async with WireServer(lambda seen: Reply(200, DATA)) as plain:

        def secure(seen: Seen) -> Reply:
            return Reply(302, b"", {"Location": f"{plain.url}/clear.mp4"})

        async with WireServer(secure, tls=server_ctx) as src:
            trust = ssl.create_default_context(cafile=str(cert))
            async with client_for(emulator, retry=va.NO_RETRY, ssl=trust) as client:
                with pytest.raises(va.SourceError, match="from https to http"):
                    await client.upload_from_url(f"{src.url}/x.mp4")
    assert plain.seen == []


def test_a_url_jobs_headers_never_go_into_the_shared_queue() -> None:
    from vidapi_async.batch._enqueue import spec_of as _spec

    job = va.UploadJob(url="https://h/a.mp4", headers={"X-Key": PASSWORD}, title="t", channel="c")
    with pytest.raises(va.UsageError, match="not stored in the shared queue") as info:
        _spec(job)
    assert PASSWORD not in str(info.value)


def test_the_cli_needs_no_secret_on_its_command_line() -> None:
    from vidapi_async.cli._main import _parser

    parser = _parser()
    top = " ".join(parser.format_help().split())
    assert "VIDAPI_TOKEN" in top and "vidapi login" in top
    batch = next(
        a
        for a in parser._subparsers._group_actions  # type: ignore[union-attr]
    ).choices["batch"]
    assert "PGPASSWORD" in " ".join(batch.format_help().split())


# --- the unspecified address reaches this host: judged as loopback, and the peer too ---

UNSPECIFIED = "0" + ".0.0.0"  # an address to judge, not one to bind


@pytest.mark.parametrize("host", [UNSPECIFIED, f"[::ffff:{UNSPECIFIED}]"])
async def test_the_unspecified_address_cannot_stand_in_for_a_denied_loopback(
    emulator: Emulator, host: str
) -> None:
    async with WireServer(lambda seen: Reply(200, DATA)) as src:
        port = src.url.rsplit(":", 1)[1]
        policy = va.SourcePolicy(deny=("127.0.0.0/8", "::1/128"))
        async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as client:
            with pytest.raises(va.SourceError, match=r"SourcePolicy\.deny"):
                await client.upload_from_url(f"http://{host}:{port}/x.mp4")
    assert src.seen == []


def test_the_unspecified_addresses_are_judged_as_the_loopback_they_reach() -> None:
    for unspecified in (UNSPECIFIED, "0.1.2.3", "::", f"::ffff:{UNSPECIFIED}"):
        assert va.SourcePolicy(deny=("127.0.0.0/8", "::1/128")).refusal(unspecified)
        only_zero = va.SourcePolicy(allow=("0.0.0.0/8", "::/128"))
        assert "SourcePolicy.allow" in (only_zero.refusal(unspecified) or "")
    assert va.SourcePolicy(deny=("0.0.0.0/8",)).refusal(UNSPECIFIED)


async def test_a_name_resolving_to_the_unspecified_address_is_refused_on_its_peer(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that resolves to 0.0.0.0 (a hostile DNS answer) is refused, and the
    policy is asked about the peer the socket really reached before a byte is sent."""
    import aiohttp

    from vidapi_async._transfer import sources as _sources

    async def hostile(self: object, host: str, port: int = 0, family: int = 0) -> list[dict]:
        return [
            {
                "hostname": host,
                "host": UNSPECIFIED,
                "port": port,
                "family": 2,
                "proto": 6,
                "flags": 0,
            }
        ]

    judged: list[str] = []
    plain = _sources.SourcePolicy.refusal

    def spy(self: va.SourcePolicy, connected: str, previous: str | None = None) -> str | None:
        judged.append(connected)
        return plain(self, connected, previous)

    monkeypatch.setattr(aiohttp.DefaultResolver, "resolve", hostile)
    async with WireServer(lambda seen: Reply(200, DATA)) as src:
        port = src.url.rsplit(":", 1)[1]
        policy = va.SourcePolicy(deny=("127.0.0.0/8",))
        async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as client:
            with pytest.raises(va.SourceError, match=r"SourcePolicy\.deny"):
                await client.upload_from_url(f"http://rebound.example:{port}/x.mp4")
        monkeypatch.setattr(_sources.SourcePolicy, "refusal", spy)
        async with client_for(emulator, retry=va.NO_RETRY) as client:
            await client.upload_from_url(f"http://rebound.example:{port}/x.mp4")
    assert len(src.seen) == 1  # the refused one never reached it
    assert "127.0.0.1" in judged  # the socket's peer, not only the address resolved


# --- through a proxy: the proxy connects, the policy still holds -----------------------


@pytest.fixture
async def forward_proxy(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[WireServer, list[Reply]]]:
    """A forward proxy (the scripted server: it answers absolute-form requests itself,
    from ``replies`` in turn) in the environment; the emulator, on 127.0.0.1, direct."""
    replies: list[Reply] = []
    async with WireServer(lambda seen: replies.pop(0)) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("http_proxy", raising=False)
        yield proxy, replies


@pytest.mark.parametrize(
    "policy", [va.SourcePolicy(allow=("192.0.2.0/24",)), va.SourcePolicy(deny=("10.0.0.0/8",))]
)
async def test_through_a_proxy_a_name_not_resolved_here_fails_closed_under_a_rule(
    emulator: Emulator, forward_proxy: tuple[WireServer, list[Reply]], policy: va.SourcePolicy
) -> None:
    proxy, replies = forward_proxy
    replies.append(Reply(200, DATA))
    async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as client:
        with pytest.raises(va.SourceError, match=r"cannot be resolved.*SourcePolicy\.(allow|deny)"):
            await client.upload_from_url("http://metadata.internal.invalid/latest/")
    assert proxy.seen == []


async def test_through_a_proxy_a_name_not_resolved_here_goes_to_it_without_rules(
    emulator: Emulator, forward_proxy: tuple[WireServer, list[Reply]]
) -> None:
    proxy, replies = forward_proxy
    replies.append(Reply(200, DATA))
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        uploaded = await client.upload_from_url("http://videos.proxied.invalid/v.mp4")
    assert stored_bytes(emulator, uploaded.url) == DATA
    assert [s.target for s in proxy.seen] == ["http://videos.proxied.invalid/v.mp4"]


async def test_through_a_proxy_a_redirect_is_judged_from_the_sources_address(
    emulator: Emulator, forward_proxy: tuple[WireServer, list[Reply]]
) -> None:
    """The proxy is on 127.0.0.1, the source at a public address: its redirect to a
    private one is refused (judged from the source's address, not the proxy's)."""
    proxy, replies = forward_proxy
    moved = Reply(302, b"m" * 1_000_000, {"Location": "http://127.0.0.3:9/inside"})
    replies += [moved, Reply(200, DATA)]  # a body not read yet: the connection is held
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        with pytest.raises(va.SourceError, match="allow_private"):
            await client.upload_from_url("http://93.184.216.34/v.mp4")
    assert [s.target for s in proxy.seen] == ["http://93.184.216.34/v.mp4"]
