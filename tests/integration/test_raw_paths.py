"""Raw calls' paths and values that could carry a request elsewhere or crash it: each is
refused with a typed error before anything is sent, checked at a raw-socket server that
shares no code with the client (it records the request target byte for byte)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.integration.test_client_wire import TOKEN
from tests.wire import Reply, Seen, WireServer
from vidapi_async.cli._exit import EXIT_USAGE

BASE_PATH = "/rest/v1"


def _ok(seen: Seen) -> Reply:
    return Reply.json({"id": "x1", "list": [], "has_more": False})


HOSTILE_PATHS = [
    "/.\ud800./.\ud800./admin/secret",  # yarl drops the lone surrogates: /../../admin
    "/.\udcff./me",  # argv bytes that are not UTF-8, as Python decodes them
    "/me\ud800",
    "/me\x85",  # a C1 control character
    "/me\u200b",  # a format character (zero width space)
    "/me\u00a0x",  # a no-break space
    "/\uff0e\uff0e/admin",  # fullwidth dots
    "/\u2025/admin",  # a two dot leader
    "/\u2215\u2215evil.example/x",  # division slashes
    "/x\u2044y",  # a fraction slash
    "/x/\uff0f/y",  # a fullwidth solidus
    "/..;/admin",
    "/x/..;jsessionid=1/admin",
    "/x/%2e%2e%3b/admin",
    "/x/.%3B/admin",
    "/..%3Fx",  # a server decoding before it splits off the query reads /..?x
    "/x/..%23y",  # ... or the fragment: /x/..#y
    "/x/.%3F/admin",
    "/%252e%252e/admin",  # double-escaped: a server decoding twice finds '..'
    "/x/%252F..",
    "/x/%EF%BC%8E%EF%BC%8E/admin",  # fullwidth dots, escaped
    "/x/%E2%88%95%E2%88%95evil",  # division slashes, escaped
    "/x/%C2%85",  # a C1 control, escaped
    "/x/%FF",  # an escape that is not UTF-8
    "/x/%ED%A0%80",  # a surrogate, escaped
    "/café",  # non-ASCII is sent escaped: give it so
    "/x;y",
    "/x:y@z",
    "/x'",
    "/x<y>",
    "/%C2%A5..%C2%A5x",  # yen signs: a backslash on cp932
    "/%E2%82%A9..",  # a won sign: a backslash on cp949
    "/x/%E2%88%96..",  # a set minus
    "/x/%C2%A5.%C2%A5y",
    "/x/..%C3%A9",  # any non-ASCII next to dots may stand for a separator
    "/.%CD%8F.",  # invisible characters between dots
    "/.%EF%B8%8F.",
    "/%E1%85%9F..",
    "/x/%E1%85%9Fy",  # default-ignorable characters anywhere
    "/x/%E3%85%A4",
    "/x/%EF%BE%A0",
    "/x/a%CD%8Fb",
    "/x/a%F3%A0%84%80b",
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
async def test_a_hostile_path_is_refused_before_anything_is_sent(path: str) -> None:
    async with WireServer(_ok) as srv:
        async with va.Client(TOKEN, base_url=srv.url + BASE_PATH) as client:
            calls: list[Callable[[], Awaitable[Any]]] = [
                lambda: client.get(path),
                lambda: client.post(path, {}),
                lambda: client.delete(path),
                lambda: anext(aiter(client.paginate(path))),
            ]
            for call in calls:
                with pytest.raises(va.InvalidArgumentError, match=r"^path: ") as caught:
                    await call()
                assert caught.value.argument == "path"
    assert srv.seen == []


async def test_an_escaped_separator_is_named_as_a_dot_segment_not_as_non_ascii() -> None:
    async with va.Client(TOKEN, base_url="http://127.0.0.1:9" + BASE_PATH) as client:
        with pytest.raises(va.InvalidArgumentError) as caught:
            await client.get("/a/..%2Fb")
    assert "'..' segments" in str(caught.value)
    assert "beyond ASCII" not in str(caught.value)


@pytest.mark.parametrize(
    ("path", "sent"),
    [
        ("/me/videos", "/me/videos"),
        ("/video/x1/subtitles", "/video/x1/subtitles"),
        ("/user/a%2Fb", "/user/a%2Fb"),
        ("/caf%C3%A9", "/caf%C3%A9"),
        ("/a-b_c.d~e/", "/a-b_c.d~e/"),
        ("/x/...", "/x/..."),
        ("/x/%25", "/x/%25"),
        ("/user/Jos%C3%A9/%C3%A9mile", "/user/Jos%C3%A9/%C3%A9mile"),
        ("/x/caf%C3%A9.mp4", "/x/caf%C3%A9.mp4"),
        ("/x/%C2%A5100", "/x/%C2%A5100"),
    ],
)
async def test_a_plain_path_goes_out_under_the_base_path(path: str, sent: str) -> None:
    async with WireServer(_ok) as srv:
        async with va.Client(TOKEN, base_url=srv.url + BASE_PATH) as client:
            await client.get(path)
    assert [s.target for s in srv.seen] == [BASE_PATH + sent]


HOSTILE_VALUES: list[tuple[dict[str, Any], str]] = [
    ({"n": 10**5000}, "n"),
    ({"s": "a\ud800b"}, "s"),
    ({"s": "a\udcffb"}, "s"),
    ({"k\ud800": "v"}, "k"),
    ({"list": ["ok", "\ud800"]}, "list"),
]


@pytest.mark.parametrize(("values", "name"), HOSTILE_VALUES)
async def test_a_value_a_request_cannot_carry_is_refused_naming_it(
    values: dict[str, Any], name: str
) -> None:
    async with WireServer(_ok) as srv:
        async with va.Client(TOKEN, base_url=srv.url + BASE_PATH) as client:
            calls: list[Callable[[], Awaitable[Any]]] = [
                lambda: client.get("/me", values),
                lambda: client.post("/me", values),
                lambda: anext(aiter(client.paginate("/me/videos", values))),
            ]
            for call in calls:
                with pytest.raises(va.InvalidArgumentError) as caught:
                    await call()
                assert name in caught.value.argument
    assert srv.seen == []


@pytest.mark.parametrize("path", [b"/.\xff./me", b"/me\xff", b"/x/\xc3"])
async def test_vidapi_api_with_a_path_that_is_not_utf8_is_a_usage_error(path: bytes) -> None:
    async with WireServer(_ok) as srv:
        env = {"VIDAPI_TOKEN": TOKEN, "VIDAPI_BASE_URL": srv.url + BASE_PATH}
        # As a shell passes them: bytes (a str argument goes out through os.fsencode).
        code, out, err = await vidapi("api", os.fsdecode(path), env=env)
        code_f, _, err_f = await vidapi("api", "/me", "-f", os.fsdecode(b"q=\xff"), env=env)
    assert code == EXIT_USAGE, err
    assert "UTF-8" in err, err
    assert "Traceback" not in err
    assert out == ""
    assert code_f == EXIT_USAGE, err_f
    assert "UTF-8" in err_f, err_f
    assert srv.seen == []


def test_checking_a_long_path_with_a_bad_character_takes_no_backtracking() -> None:
    """A run of unreserved characters before a refused one: the path's pattern nested
    its repeats, so refusing ``/aaa...a!`` took time doubling with each ``a`` (22: 0.4 s,
    a hypothesis-made path held a CI worker for minutes). Checked in a child process,
    so that a regression fails at the safety limit instead of hanging the run."""
    code = (
        "from vidapi_async._protocol import api_path\n"
        "for n in (60, 5000):\n"
        "    try:\n"
        "        api_path('/' + 'a' * n + '!')\n"
        "    except ValueError as exc:\n"
        "        assert 'percent-encode' in str(exc), exc\n"
        "    else:\n"
        "        raise AssertionError('accepted')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
