"""Raw calls (``client.get/post/delete``) and ``client.paginate``: the same request path
as the typed calls, checked on a wire server that shares no code with the client, and
against the emulator."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import yarl
from hypothesis import given, settings
from hypothesis import strategies as st

import vidapi_async as va
from tests.conftest import fast_retry, make_file
from tests.examples import examples
from tests.integration.test_client_wire import TOKEN, leaks
from tests.wire import Reply, Seen, WireServer
from vidapi_async import _protocol as wire
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

# --- pure: the path and the form conventions -----------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "me/videos",
        "http://evil.example/me",
        "https://api.example/me",
        "//evil.example/me",
        "/video/../oauth/token",
        "/video/%2e%2e/oauth/token",
        "/video/%2E%2E",
        "/video/./x",
        "/me/videos?fields=id",
        "/me#x",
        "/me\\..\\x",
        "/me videos",
        "/me\r\nHost: evil",
        "/me/%zz",
        "/me/%2",
        "/%2e%2e%2fadmin",
        "/..%2Fadmin",
        "/x/.%2f",
        "/a%5C..",
        "/x/%00",
        "/x/%1f",
        "/x/%7F",
        "",
        None,
        b"/me",
    ],
)
def test_a_path_that_could_leave_the_base_url_is_refused(path: Any) -> None:
    with pytest.raises(ValueError, match=r"."):
        wire.api_path(path)


@pytest.mark.parametrize(
    "path", ["/me", "/me/", "/me/videos", "/video/x1/subtitles", "/user/a%2Fb", "/caf%C3%A9", "/"]
)
def test_a_plain_path_is_kept_as_given(path: str) -> None:
    assert wire.api_path(path) == path


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (False, "false"),
        (None, ""),
        (0, "0"),
        (12, "12"),
        (1.5, "1.5"),
        ("a,b", "a,b"),
        (["a", "b", 3, True], "a,b,3,true"),
        (("x",), "x"),
        ([], ""),
    ],
)
def test_form_values_follow_the_platform_conventions(value: object, text: str) -> None:
    assert wire.form_value(value) == text


class _Float(float):
    def __repr__(self) -> str:  # as numpy's float64: np.float64(1.5)
        return f"_Float({float(self)!r})"


class _Int(int):
    def __str__(self) -> str:
        return f"_Int({int(self)})"


def test_number_subclasses_are_written_as_their_numbers() -> None:
    """A float or int subclass (numpy's) is written as the number it holds, not as its
    class's repr (before: ``_Float(1.5)`` went on the wire)."""
    assert wire.form_value(_Float(1.5)) == "1.5"
    assert wire.form_value(_Int(7)) == "7"
    assert wire.form_value([_Float(0.25), _Int(2)]) == "0.25,2"


def test_a_value_a_form_cannot_carry_is_named() -> None:
    with pytest.raises(TypeError, match=r"data\['x'\]"):
        wire.form_fields({"x": {"nested": 1}}, "data")


# --- on the wire ---------------------------------------------------------------------------


def _echo(seen: Seen) -> Reply:
    return Reply.json({"id": "x1", "big": "é" * 6000}, segment=512, pause=0.001)


async def test_a_raw_get_sends_escaped_params_and_reads_a_segmented_answer() -> None:
    async with WireServer(_echo) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        got = await client.get(
            "/me/videos",
            {"search": "a/b&c=d+e f%", "flag": True, "off": False, "tags": ["x", "y"], "n": None},
            fields=["id", "title"],
        )
    assert got["big"] == "é" * 6000
    (seen,) = srv.seen
    assert seen.method == "GET"
    assert seen.path == "/me/videos"
    query = urllib.parse.parse_qs(seen.raw_query, keep_blank_values=True)
    assert query == {
        "search": ["a/b&c=d+e f%"],
        "flag": ["true"],
        "off": ["false"],
        "tags": ["x,y"],
        "n": [""],
        "fields": ["id,title"],
    }
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"


async def test_a_raw_post_sends_the_form_in_the_platform_conventions() -> None:
    async with WireServer(_echo) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        await client.post("/video/x1", {"password": None, "published": True, "tags": ("a", "b")})
    (seen,) = srv.seen
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    assert urllib.parse.parse_qs(seen.body.decode(), keep_blank_values=True) == {
        "password": [""],
        "published": ["true"],
        "tags": ["a,b"],
    }


async def test_a_raw_call_keeps_the_base_urls_own_path() -> None:
    async with WireServer(_echo) as srv, va.Client(TOKEN, base_url=srv.url + "/rest") as client:
        await client.delete("/video/x1")
    assert [(s.method, s.target) for s in srv.seen] == [("DELETE", "/rest/video/x1")]


@pytest.mark.parametrize("path", ["//127.0.0.1:1/steal", "http://127.0.0.1:1/", "/a/../b"])
async def test_a_bad_path_sends_nothing(path: str) -> None:
    async with WireServer(_echo) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        for call in (client.get(path), client.post(path, {}), client.delete(path)):
            with pytest.raises(va.InvalidArgumentError, match="path"):
                await call
        with pytest.raises(va.InvalidArgumentError, match="path"):
            await anext(aiter(client.paginate(path)))
    assert srv.seen == []


async def test_raw_reads_are_retried_and_raw_posts_only_when_idempotent() -> None:
    fails = iter([True, False, True, False, True, True, False])  # the answers in order

    def flaky(seen: Seen) -> Reply:
        if next(fails):
            return Reply.json({"error": {"code": 503, "message": "busy"}}, status=503)
        return Reply.json({"ok": seen.method})

    async with (
        WireServer(flaky) as srv,
        va.Client(TOKEN, base_url=srv.url, retry=fast_retry()) as client,
    ):
        assert await client.get("/me") == {"ok": "GET"}
        assert await client.delete("/video/x1") == {"ok": "DELETE"}
        with pytest.raises(va.ServerError):
            await client.post("/me/playlists", {"name": "n"})
        assert len(srv.seen) == 5
        assert await client.post("/video/x1", {"title": "t"}, idempotent=True) == {"ok": "POST"}
    assert len(srv.seen) == 7


async def test_a_raw_call_refreshes_a_refused_token() -> None:
    tokens = iter(["first-token-123", "second-token-456"])

    def handler(seen: Seen) -> Reply:
        if seen.path == "/oauth/token":
            return Reply.json({"access_token": next(tokens), "expires_in": 3600})
        if seen.headers.get("authorization") == "Bearer first-token-123":
            return Reply.json(
                {"error": {"code": 401, "message": "expired"}},
                status=401,
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        return Reply.json({"me": "ok"})

    auth = va.OAuth.client_credentials("cid", "csecret")
    async with WireServer(handler) as srv, va.Client(auth=auth, base_url=srv.url) as client:
        assert await client.get("/me") == {"me": "ok"}
    assert [s.path for s in srv.seen] == ["/oauth/token", "/me", "/oauth/token", "/me"]


async def test_a_raw_error_echoing_secrets_is_masked() -> None:
    def handler(seen: Seen) -> Reply:
        echoed = f"{seen.headers['authorization']} {seen.body.decode()}"
        return Reply.json({"error": {"code": 400, "message": echoed}}, status=400)

    async with WireServer(handler) as srv:
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.BadRequestError) as info:
                await client.post("/video/x1", {"password": "hunter2-secret"})
    assert leaks(info.value, TOKEN, "hunter2-secret") == []


async def test_a_raw_call_checks_the_scope_before_sending() -> None:
    async with WireServer(_echo) as srv:
        async with va.Client(TOKEN, base_url=srv.url, scopes=["manage_videos"]) as client:
            with pytest.raises(va.InsufficientScopeError, match="manage_playlists"):
                await client.post("/me/playlists", {"name": "n"})
            with pytest.raises(va.InsufficientScopeError, match="manage_players"):
                await client.delete("/player/x1")
    assert srv.seen == []


async def test_the_token_never_leaves_the_base_url_through_a_raw_path() -> None:
    async with WireServer(_echo) as other, WireServer(_echo) as srv:
        async with va.Client(TOKEN, base_url=srv.url) as client:
            host = urllib.parse.urlsplit(other.url).netloc
            for path in (f"//{host}/x", f"/\\\\{host}/x", f"/%2F{host}/x/../y"):
                with pytest.raises(va.InvalidArgumentError):
                    await client.get(path)
    assert other.seen == []
    assert srv.seen == []


# --- paging --------------------------------------------------------------------------------


def _page(ids: list[str], more: bool) -> Reply:
    items = [{"id": i, "title": "t"} for i in ids]
    return Reply.json({"page": 1, "limit": len(ids), "has_more": more, "list": items})


async def test_iter_videos_ends_with_an_error_on_a_repeated_page() -> None:
    reply = _page(["x1", "x2"], True)
    async with WireServer(lambda _: reply) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        got: list[str] = []

        async def collect() -> None:
            async for video in client.iter_videos():
                got.append(video.id)

        with pytest.raises(va.UnexpectedResponseError, match="repeats"):
            await asyncio.wait_for(collect(), 10)
    assert got == ["x1", "x2"]
    assert len(srv.seen) == 2


async def test_paginate_ends_with_an_error_on_a_repeated_page() -> None:
    reply = _page(["x1", "x2"], True)
    async with WireServer(lambda _: reply) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        got = []

        async def collect() -> None:
            async for item in client.paginate("/me/playlists"):
                got.append(item["id"])

        with pytest.raises(va.UnexpectedResponseError):
            await asyncio.wait_for(collect(), 10)
    assert got == ["x1", "x2"]


async def test_paginate_stops_on_an_empty_page_and_skips_items_seen_again() -> None:
    pages = [_page(["x1", "x2"], True), _page(["x2", "x3"], True), _page([], True)]
    async with WireServer(lambda _: pages.pop(0)) as srv:
        async with va.Client(TOKEN, base_url=srv.url) as client:
            got = [i["id"] async for i in client.paginate("/me/videos", {"a": True}, limit=2)]
    assert got == ["x1", "x2", "x3"]
    queries = [urllib.parse.parse_qs(s.raw_query) for s in srv.seen]
    assert [(q["page"], q["limit"], q["a"]) for q in queries] == [
        (["1"], ["2"], ["true"]),
        (["2"], ["2"], ["true"]),
        (["3"], ["2"], ["true"]),
    ]


async def test_paginate_over_the_emulator(emulator: Emulator, tmp_path: Path) -> None:
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 1000))
        for n in range(7):
            await client.post(
                "/me/videos",
                {
                    "url": uploaded.url,
                    "title": f"v{n}",
                    "channel": "news",
                    "published": n % 2 == 0,
                    "is_created_for_kids": False,
                },
            )
        titles = [
            v["title"] async for v in client.paginate("/me/videos", fields="id,title", limit=3)
        ]
        first = [v async for v in client.paginate("/me/videos", {"sort": "old"}, max_items=4)]
        published = await client.get("/me/videos", {"fields": ["id", "published"], "limit": 100})
    assert titles == [f"v{n}" for n in range(7)]
    assert len(first) == 4
    assert [v["published"] for v in published["list"]] == [n % 2 == 0 for n in range(7)]


async def test_paginate_refuses_its_own_parameters_and_bad_limits(client: va.Client) -> None:
    for kwargs in ({"limit": 0}, {"limit": 101}, {"max_items": 0}):
        with pytest.raises(va.InvalidArgumentError):
            await anext(aiter(client.paginate("/me/videos", **kwargs)))
    with pytest.raises(va.UsageError, match="page"):
        await anext(aiter(client.paginate("/me/videos", {"page": 2})))


async def test_raw_errors_are_the_typed_errors(client: va.Client) -> None:
    with pytest.raises(va.NotFoundError):
        await client.get("/video/xnope1")
    with pytest.raises(va.InvalidParameterError):
        await client.get("/me", fields="nosuchfield")
    assert json.dumps(await client.get("/me", fields="id"))


async def test_raw_calls_over_tls(tmp_path: Path) -> None:
    async with Emulator(tls=True) as emulator, client_for(emulator) as client:
        assert emulator.base_url.startswith("https://")
        playlist = await client.post("/me/playlists", {"name": "over TLS"}, fields="id,name")
        got = [p async for p in client.paginate("/me/playlists", fields=["id", "name"])]
        assert got == [playlist]
        assert await client.delete(f"/playlist/{playlist['id']}") == {}


# --- property: a checked path never leaves the base url ------------------------------------

_PIECES = st.sampled_from(
    [
        ".",
        "..",
        "%2e",
        "%2E",
        "%2f",
        "%2F",
        "%5c",
        "%00",
        "%1f",
        "%7F",
        "\\",
        "?",
        "#",
        ":",
        "@",
        "x",
        "me",
        "video",
        "%",
        "%zz",
        "é",
        " ",
        "\t",
        "evil.example",
        "http:",
        "~",
        ";",
        "&",
        "=",
        "/",
    ]
)
_SEGMENTS = st.lists(st.lists(_PIECES, max_size=3).map("".join), min_size=1, max_size=5)
_PATHS = _SEGMENTS.map(lambda segments: "/" + "/".join(segments)) | st.text(max_size=12)


@settings(max_examples=examples(400), deadline=None)
@given(_PATHS)
def test_a_checked_path_stays_on_the_base_urls_origin_and_path(path: str) -> None:
    try:
        checked = wire.api_path(path)
    except ValueError:
        return
    # The oracle is yarl, as aiohttp sends it: same origin, under the base path, no dot
    # segment resolved away, no query or fragment.
    url = yarl.URL(wire.api_request("https://api.example:8443/rest", "GET", checked).url)
    assert (url.scheme, url.host, url.port) == ("https", "api.example", 8443)
    assert url.raw_path.startswith("/rest/")
    assert url.raw_path == "/rest" + yarl.URL("https://h" + checked).raw_path
    assert not url.query_string
    assert not url.fragment
    # A server that decodes the path then splits it (on / or \) finds no dot segment
    # and no control character.
    decoded = urllib.parse.unquote(url.raw_path)
    assert not {".", ".."} & set(re.split(r"[/\\]", decoded)), url.raw_path
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in decoded), url.raw_path


async def test_a_listing_claiming_more_for_ever_stops_at_the_platforms_last_page() -> None:
    """Fresh ids and ``has_more`` on every page: the platform pages up to 100, so the
    listing ends there with an ``UnexpectedResponseError`` (nothing is dropped silently)."""

    def pager(seen: Seen) -> Reply:
        page = int(urllib.parse.parse_qs(seen.raw_query)["page"][0])
        return Reply.json({"list": [{"id": f"x{page}"}], "has_more": True, "page": page})

    got: list[str] = []

    async def drain(client: va.Client) -> None:
        async for item in client.paginate("/me/playlists", limit=1):
            got.append(item["id"])
            if len(got) > 100:
                return  # paging on past the platform's last page

    async with WireServer(pager) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        with pytest.raises(va.UnexpectedResponseError, match="page 100"):
            await drain(client)
    assert got == [f"x{n}" for n in range(1, 101)]
    assert len(srv.seen) == 100
