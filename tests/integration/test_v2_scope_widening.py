"""API v2's scopes from the operation's need: an ``ApiKey`` given no ``scopes=`` starts
with the default ones and, when an operation needs a scope its token lacks, asks the
token endpoint once for a token with that scope too (concurrent callers share the
fetch). A refusal (an OAuth error, or a token granted without it) is the typed
missing-scope error before anything is sent, remembered, and the key goes on with its
earlier token. Explicit ``scopes=`` are a limit: refused before sending, as before.

On the wire at tests/wire.py's scripted server (no code shared with the client, its
token endpoint written by hand from the spec), and against the emulator (its own
code), whose keys grant or refuse ``live.manage`` one by one."""

from __future__ import annotations

import asyncio
import urllib.parse
from typing import Any

import aiohttp
import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_v2_live import live_server
from tests.wire import Reply, Seen, WireServer
from vidapi_async.emulator import Emulator

KEY, SECRET = "key-1", "secret-very-private-1"
DEFAULT = "account.read video.read video.manage"
NO_LIVE = (
    "account.read",
    "account.manage",
    "profile.read",
    "video.read",
    "video.manage",
    "playlist.read",
    "playlist.manage",
)


def platform(*, live: str = "grant", pause: float = 0.0) -> Any:
    """A v2 platform whose key grants ``live.*`` (``live="grant"``), refuses it with
    ``invalid_scope`` (``"refuse"``), or grants a token without it (``"omit"``)."""
    grants = [0]

    async def handle(seen: Seen) -> Reply:
        if (seen.method, seen.path) == ("POST", "/v2/token"):
            asked = urllib.parse.parse_qs(seen.body.decode())["scope"][0].split()
            lives = [s for s in asked if s.startswith("live.")]
            if lives and live == "refuse":
                error = {"error": "invalid_scope", "error_description": "not on this plan"}
                return Reply.json(error, status=400)
            granted = [s for s in asked if live != "omit" or not s.startswith("live.")]
            await asyncio.sleep(pause)  # lets a second caller reach the widening too
            grants[0] += 1
            return Reply.json(
                {
                    "access_token": f"tok-{grants[0]}",
                    "expires_in": 1800,
                    "token_type": "Bearer",
                    "scope": " ".join(granted),
                }
            )
        if (seen.method, seen.path) == ("GET", "/v2/videos/x1"):
            return Reply.json({"video_id": "x1", "title": "Hi"})
        return live_server(seen)  # /v2/me, and livestream x9 created and read

    return handle


def token_scopes(srv: WireServer) -> list[str]:
    """The ``scope`` of every token request, in order."""
    return [
        urllib.parse.parse_qs(s.body.decode())["scope"][0]
        for s in srv.seen
        if (s.method, s.path) == ("POST", "/v2/token")
    ]


def api_calls(srv: WireServer) -> list[tuple[str, str, str]]:
    """Every API request but the token's: method, path, bearer token."""
    return [
        (s.method, s.path, s.headers.get("authorization", ""))
        for s in srv.seen
        if s.path != "/v2/token"
    ]


async def test_a_default_key_asks_for_the_scope_an_operation_needs() -> None:
    async with WireServer(platform()) as srv:
        auth = va.ApiKey(KEY, SECRET)
        async with va.Client(auth=auth, api="v2", base_url=f"{srv.url}/v2") as client:
            await client.get_video("x1")
            live = await client.create_live_stream(title="Tonight", channel="news")
            await client.get_live_stream(live.id)
            await client.get_video("x1")
    assert token_scopes(srv) == [
        DEFAULT,
        f"{DEFAULT} live.manage",
        f"{DEFAULT} live.manage live.read",
    ]
    assert api_calls(srv) == [
        ("GET", "/v2/videos/x1", "Bearer tok-1"),
        ("GET", "/v2/me", "Bearer tok-2"),  # the scope settled before the profile's lookup
        ("POST", "/v2/profiles/p1/livestreams", "Bearer tok-2"),
        ("GET", "/v2/livestreams/x9", "Bearer tok-3"),
        ("GET", "/v2/videos/x1", "Bearer tok-3"),
    ]
    assert SECRET not in repr(auth) and "tok-" not in repr(auth)


@pytest.mark.parametrize("live", ["refuse", "omit"])
async def test_a_refused_scope_is_the_typed_error_remembered(live: str) -> None:
    async with WireServer(platform(live=live)) as srv:
        auth = va.ApiKey(KEY, SECRET)
        async with va.Client(auth=auth, api="v2", base_url=f"{srv.url}/v2") as client:
            await client.get_video("x1")
            for _ in range(2):
                with pytest.raises(va.InsufficientScopeError) as caught:
                    await client.create_live_stream(title="Tonight", channel="news")
                assert caught.value.scope == "live.manage" and caught.value.status is None
                message = str(caught.value)
                assert "live.manage" in message and "plan" in message, message
                assert SECRET not in message and "tok-" not in message
            await client.get_video("x1")  # the earlier token, for everything else
            assert (await client.access_token()).token == "tok-1"
    # one request for the wider scope, not one per call
    assert token_scopes(srv) == [DEFAULT, f"{DEFAULT} live.manage"]
    assert api_calls(srv) == [
        ("GET", "/v2/videos/x1", "Bearer tok-1"),
        ("GET", "/v2/videos/x1", "Bearer tok-1"),
    ]  # no livestream request sent, nor the profile's lookup for it


async def test_two_live_calls_at_once_share_one_widening() -> None:
    async with WireServer(platform(pause=0.05)) as srv:
        auth = va.ApiKey(KEY, SECRET)
        async with va.Client(auth=auth, api="v2", base_url=f"{srv.url}/v2") as client:
            await client.get_video("x1")
            await asyncio.gather(
                client.create_live_stream(title="A", channel="news"),
                client.create_live_stream(title="B", channel="news"),
            )
    assert token_scopes(srv) == [DEFAULT, f"{DEFAULT} live.manage"]
    creates = [c for c in api_calls(srv) if c[1] == "/v2/profiles/p1/livestreams"]
    assert creates == [("POST", "/v2/profiles/p1/livestreams", "Bearer tok-2")] * 2


async def test_two_refused_live_calls_at_once_ask_once() -> None:
    async with WireServer(platform(live="refuse")) as srv:
        auth = va.ApiKey(KEY, SECRET)
        async with va.Client(auth=auth, api="v2", base_url=f"{srv.url}/v2") as client:
            await client.get_video("x1")
            results = await asyncio.gather(
                client.create_live_stream(title="A", channel="news"),
                client.create_live_stream(title="B", channel="news"),
                return_exceptions=True,
            )
    assert all(isinstance(r, va.InsufficientScopeError) for r in results), results
    assert token_scopes(srv) == [DEFAULT, f"{DEFAULT} live.manage"]


async def test_explicit_scopes_are_a_limit_refused_before_sending() -> None:
    async with WireServer(platform()) as srv:
        auth = va.ApiKey(KEY, SECRET, scopes=DEFAULT.split())
        async with va.Client(auth=auth, api="v2", base_url=f"{srv.url}/v2") as client:
            with pytest.raises(va.InsufficientScopeError) as caught:
                await client.create_live_stream(title="Tonight", channel="news")
    assert caught.value.scope == "live.manage"
    assert token_scopes(srv) == [DEFAULT]
    assert not [c for c in api_calls(srv) if "livestreams" in c[1]]


async def test_the_emulator_grants_or_refuses_live_per_key(tmp_path: Any) -> None:
    keys = {"nolive-key": ("nolive-secret", "demo", NO_LIVE)}
    async with Emulator(probe=False, api_keys=keys) as emu, aiohttp.ClientSession() as http:

        async def grant(key: str, secret: str, scope: str) -> tuple[int, dict[str, Any]]:
            form = {
                "grant_type": "client_credentials",
                "client_id": key,
                "client_secret": secret,
                "scope": scope,
            }
            async with http.post(f"{emu.v2_base_url}/token", data=form) as r:
                return r.status, await r.json()

        status, answer = await grant("demo-api-key", "demo-api-secret", f"{DEFAULT} live.manage")
        assert status == 200 and "live.manage" in answer["scope"].split()
        status, answer = await grant("nolive-key", "nolive-secret", f"{DEFAULT} live.manage")
        assert (status, answer["error"]) == (400, "invalid_scope")
        status, answer = await grant("nolive-key", "nolive-secret", DEFAULT)
        assert status == 200 and answer["scope"].split() == sorted(DEFAULT.split())

        make_file(tmp_path / "m.mp4", 1000)
        auth = va.ApiKey("nolive-key", "nolive-secret")
        async with va.Client(auth=auth, api="v2", base_url=emu.v2_base_url) as client:
            with pytest.raises(va.InsufficientScopeError, match=r"live\.manage"):
                await client.create_live_stream(title="Tonight", channel="news")
            video = await client.upload_video(tmp_path / "m.mp4", title="t", channel="news")
        assert [v["id"] for v in emu.videos()] == [video.id]
        async with va.Client(
            auth=va.ApiKey("demo-api-key", "demo-api-secret"), api="v2", base_url=emu.v2_base_url
        ) as client:
            live = await client.create_live_stream(title="Tonight", channel="news")
            assert (await client.get_live_stream(live.id)).mode == "live"


def grants_the_newest_only(seen: Seen) -> Reply:
    """A hostile token endpoint: it grants the default scopes asked for, but a token
    asked with more holds only the last scope asked for."""
    if (seen.method, seen.path) == ("POST", "/v2/token"):
        asked = urllib.parse.parse_qs(seen.body.decode())["scope"][0].split()
        granted = asked if len(asked) <= 3 else asked[-1:]
        token = f"tok-{len(asked)}"
        return Reply.json({"access_token": token, "expires_in": 1800, "scope": " ".join(granted)})
    if (seen.method, seen.path) == ("GET", "/v2/videos/x1"):
        return Reply.json({"video_id": "x1", "title": "Hi"})
    return live_server(seen)


async def test_a_widening_never_repeats_a_scope_nor_drops_the_ones_held() -> None:
    async with WireServer(grants_the_newest_only) as srv:
        auth = va.ApiKey(KEY, SECRET)
        async with va.Client(auth=auth, api="v2", base_url=f"{srv.url}/v2") as client:
            for _ in range(4):
                with pytest.raises(va.InsufficientScopeError) as refused:
                    await client.create_live_stream(title="t", channel="news")
                assert refused.value.scope == "live.manage"
                await client.get_video("x1")
    asked = token_scopes(srv)
    assert all(len(a.split()) == len(set(a.split())) for a in asked), asked
    assert asked == [DEFAULT, f"{DEFAULT} live.manage"]  # the refusal remembered
    # the token that dropped the scopes held was not taken: the first one stays in use
    # (and no livestream created, nor the profile looked up: the scope refused first)
    assert api_calls(srv) == [("GET", "/v2/videos/x1", "Bearer tok-3")] * 4
