"""Issue 38, second attack #1: the origin rule through a proxy fails closed.

A feed fetched through a proxy whose name does not resolve here has no address known
here: its items' urls are judged as named by a public feed. Through the proxy, an item
whose host cannot be resolved here (the proxy would reach who knows what), or resolves
to a loopback, private or link-local address, is refused, that item only, naming the
rule. The proxy is ``tests/forward_proxy.py``'s (no code shared with the client): it
knows where ``*.invalid`` names and the public address ``93.184.216.34`` are (servers on
loopback), and records every target it is asked for."""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.forward_proxy import ForwardProxy, forward_proxy
from tests.integration.test_feed_origin import DATA, rss
from tests.wire import Reply, Seen, WireServer
from vidapi_async.batch._feed import download_feed
from vidapi_async.cli._batch import _read_in_thread, feed_source
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

PUBLIC = "93.184.216.34"
Proxied = tuple[ForwardProxy, WireServer, WireServer, str]


def _port(server: WireServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


def use_proxy(monkeypatch: pytest.MonkeyPatch, proxy: ForwardProxy) -> None:
    """The environment of a client that reaches sources through ``proxy`` (the emulator
    on 127.0.0.1 direct)."""
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    for name in ("http_proxy", "no_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def through_a_proxy(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Proxied]:
    """The proxy (in the environment; the emulator on 127.0.0.1 direct), an internal
    server (what must never be reached), a media server at the public address, and
    the address of a feed naming: a host not resolved here, ``localhost`` (loopback
    here), and the public one."""
    async with (
        WireServer(lambda seen: Reply(200, b'{"secret": "internal"}')) as inner,
        WireServer(lambda seen: Reply(200, DATA)) as media,
    ):
        feed_text = rss(
            ("hidden", "http://metadata.inner.invalid/latest/meta-data"),
            ("local", f"http://localhost:{_port(inner)}/x.mp4"),
            ("fine", f"http://{PUBLIC}/b.mp4"),
        )

        def serve_feed(seen: Seen) -> Reply:
            return Reply(200, feed_text.encode(), {"Content-Type": "application/rss+xml"})

        async with WireServer(serve_feed) as feeds:
            hosts = {
                "feeds.invalid": ("127.0.0.1", _port(feeds)),
                "metadata.inner.invalid": ("127.0.0.1", _port(inner)),
                "localhost": ("127.0.0.1", _port(inner)),
                PUBLIC: ("127.0.0.1", _port(media)),
            }
            async with forward_proxy(hosts) as proxy:
                use_proxy(monkeypatch, proxy)
                yield proxy, inner, media, "http://feeds.invalid/feed.rss"


async def test_a_proxied_feed_of_unknown_address_cannot_name_internal_or_unresolved_hosts(
    emulator: Emulator, tmp_path: Path, through_a_proxy: Proxied
) -> None:
    proxy, inner, _, feed = through_a_proxy
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        args = argparse.Namespace(source=feed, channel="news", encoding=None)
        async with feed_source(args, client):
            async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
                results = {r.key: r async for r in batch.run(_read_in_thread(args))}
    assert results["fine"].status is va.JobStatus.DONE, results["fine"].error
    for key, named in (("hidden", "metadata.inner.invalid"), ("local", "127.0.0.1")):
        failed = results[key]
        assert failed.status is va.JobStatus.FAILED, key
        assert isinstance(failed.error, va.SourceError), key
        said = str(failed.error)
        assert "SourcePolicy.origin" in said and named in said, said
    assert inner.seen == []  # not a byte asked of what the feed must not reach
    assert proxy.targets == [feed, f"http://{PUBLIC}/b.mp4"]
    assert [v["title"] for v in emulator.videos()] == ["fine"]


async def test_vidapi_batch_through_a_proxy_refuses_those_items_by_name(
    emulator: Emulator, tmp_path: Path, through_a_proxy: Proxied
) -> None:
    proxy, inner, _, feed = through_a_proxy
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, out, err = await vidapi(
        "batch", feed, "--channel", "news", "--journal", str(tmp_path / "j.sqlite"), "--json",
        env=env,
    )  # fmt: skip
    assert code == 6, (out, err)  # some jobs failed, the others went on
    results = {r["key"]: r for r in json.loads(out)}
    assert results["fine"]["status"] == "done", results
    for key in ("hidden", "local"):
        assert results[key]["status"] == "failed", results
        assert "SourcePolicy.origin" in results[key]["error"], results
    assert inner.seen == []
    assert f"http://{PUBLIC}/b.mp4" in proxy.targets
    assert not any("inner" in t or "localhost" in t for t in proxy.targets), proxy.targets


def test_an_unknown_origin_is_judged_public_and_goes_into_the_shared_queue() -> None:
    from vidapi_async.batch._enqueue import job_of, spec_of

    unknown = va.SourcePolicy(origin="unknown")
    for inner in ("127.0.0.1", "10.0.0.5", "169.254.169.254", "::1"):
        why = unknown.refusal(inner)
        assert why is not None and "SourcePolicy.origin" in why, inner
    assert unknown.refusal("8.8.8.8") is None
    assert va.SourcePolicy(origin="unknown", allow_private=True).refusal("10.0.0.5") is None
    job = va.UploadJob(url="http://x.invalid/a.mp4", title="t", channel="news", origin="unknown")
    assert job_of(json.loads(json.dumps(spec_of(job)))).origin == "unknown"


async def test_a_proxied_feed_named_by_a_name_has_an_unknown_origin_whatever_it_resolves_to_here(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38, third attack F1: through a proxy the proxy resolves the feed's name,
    not this machine; a name answering here [127.0.0.1, a public address] (or split
    DNS) must not make the feed's origin loopback and so switch the rule off."""
    import socket

    real = socket.getaddrinfo

    def split_dns(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "attacker-feed.test":  # what this machine's DNS answers
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, 80))
                for ip in ("127.0.0.1", PUBLIC)
            ]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", split_dns)
    async with WireServer(lambda seen: Reply(200, b'{"secret": "internal"}')) as inner:
        feed_text = rss(
            ("lo", f"http://127.0.0.1:{_port(inner)}/internal.mp4"),
            ("meta", "http://169.254.169.254/latest.mp4"),
        )

        def serve_feed(seen: Seen) -> Reply:
            return Reply(200, feed_text.encode(), {"Content-Type": "application/rss+xml"})

        async with WireServer(serve_feed) as feeds:
            hosts = {
                "attacker-feed.test": ("127.0.0.1", _port(feeds)),  # the proxy's own answer
                "169.254.169.254": ("127.0.0.1", _port(inner)),
            }
            async with forward_proxy(hosts) as proxy:
                use_proxy(monkeypatch, proxy)
                feed = "http://attacker-feed.test/feed.rss"
                async with client_for(emulator, retry=va.NO_RETRY) as client:
                    _, origin = await download_feed(client, feed, str(tmp_path))
                    assert origin == "unknown"
                    args = argparse.Namespace(source=feed, channel="news", encoding=None)
                    async with feed_source(args, client):
                        journal = tmp_path / "j.sqlite"
                        async with va.BatchUploader(client, journal=journal) as batch:
                            results = {r.key: r async for r in batch.run(_read_in_thread(args))}
    for key in ("lo", "meta"):
        assert results[key].status is va.JobStatus.FAILED, key
        assert "SourcePolicy.origin" in str(results[key].error), results[key].error
    assert inner.seen == []  # neither item reached the internal server
    assert emulator.videos() == []


async def test_a_redirect_from_a_public_address_to_a_name_not_resolved_here_is_refused(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The third attack (N7): through a proxy, a public address redirecting to a name
    that does not resolve here (the proxy resolves it to an internal host) was
    followed: the redirect rule (a public address may not lead to a private one) could
    not judge the name and let the proxy try. It fails closed, as the feed's origin
    rule does."""
    async with WireServer(lambda seen: Reply(200, b"internal")) as inner:
        target = "http://intranet.invalid/secret.webm"
        async with WireServer(lambda seen: Reply(302, b"", {"Location": target})) as redir:
            hosts = {
                PUBLIC: ("127.0.0.1", _port(redir)),
                "intranet.invalid": ("127.0.0.1", _port(inner)),
            }
            async with forward_proxy(hosts) as proxy:
                use_proxy(monkeypatch, proxy)
                async with client_for(emulator, retry=va.NO_RETRY) as client:
                    with pytest.raises(va.SourceError) as info:
                        await client.upload_from_url(f"http://{PUBLIC}/redir")
    assert inner.seen == []
    assert "intranet.invalid" in str(info.value) and "redirect" in str(info.value)
    assert target not in proxy.targets
