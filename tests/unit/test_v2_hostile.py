"""API v2 answers a hostile server could give: video fields read strictly, paging
bounded, and error text cut and escaped before it reaches a message."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vidapi_async import InvalidArgumentError, UnexpectedResponseError
from vidapi_async._protocol import _v2 as v2
from vidapi_async._protocol._requests import Request


@pytest.mark.parametrize(
    "value",
    [
        "deny,fr",
        {"countries": ["FR"]},
        {"mode": None, "countries": ["FR"]},
        {"mode": "deny", "countries": "fr"},
        {"mode": 5, "countries": [1, None, {}]},
        {"mode": "deny", "countries": ["FRA"]},
        {"mode": "block", "countries": ["FR"]},
    ],
)
def test_a_malformed_geo_restriction_is_an_unexpected_response(value: object) -> None:
    with pytest.raises(UnexpectedResponseError):
        v2.video_from({"video_id": "x1", "geo_restriction": value})


def test_a_well_formed_geo_restriction_is_read() -> None:
    got = v2.video_from({"geo_restriction": {"mode": "deny", "countries": ["FR", "DE"]}})
    assert got["geoblocking"] == ["deny", "fr", "de"]
    assert v2.video_from({"geo_restriction": None})["geoblocking"] is None


@pytest.mark.parametrize("value", ["true", "unlisted", True, None, 3])
def test_an_unknown_visibility_is_an_unexpected_response(value: object) -> None:
    with pytest.raises(UnexpectedResponseError):
        v2.video_from({"video_id": "x1", "visibility": value})


@pytest.mark.parametrize("value", ["public", "private", "password"])
def test_known_visibilities_are_read(value: str) -> None:
    got = v2.video_from({"visibility": value})
    assert got["private"] is (value == "private")
    assert got["password_protected"] is (value == "password")


def _error(message: str, correlation: str = "c-1") -> bytes:
    body = {
        "error": {"code": "INVALID_PARAMETER", "message": message, "correlation_id": correlation}
    }
    return json.dumps(body).encode()


def test_a_huge_error_message_is_cut_and_its_control_characters_escaped() -> None:
    request = Request("GET", "https://api.example/videos/x1")
    text = "x" * 100_000 + "\x1b[2J\r\nFAKE LOG LINE"
    exc = v2.api_error(request, 400, {}, _error(text, "c\x1b[2J"))
    shown = str(exc)
    assert len(shown) < 1000
    assert "\x1b" not in shown and "\r" not in shown and "\n" not in shown


def test_a_short_error_message_is_kept() -> None:
    request = Request("GET", "https://api.example/videos/x1")
    exc = v2.api_error(request, 400, {}, _error("title is too long"))
    assert "title is too long" in str(exc)


def test_a_legacy_error_message_is_cut_and_escaped_too() -> None:
    from vidapi_async._protocol import _answers

    request = Request("GET", "https://api.example/video/x1")
    body = {"error": {"code": 400, "message": "y" * 100_000 + "\x1b]0;t\x07", "type": "x"}}
    exc = _answers.api_error(request, 400, {}, json.dumps(body).encode())
    assert len(str(exc)) < 1000 and "\x1b" not in str(exc) and "\x07" not in str(exc)


def test_profile_ids_that_are_not_strings_are_an_unexpected_response() -> None:
    with pytest.raises(UnexpectedResponseError):
        v2.choose_profile({"profiles": [{"profile_id": 5}, {"profile_id": "p1"}]}, None)


def test_a_huge_profile_list_gives_a_bounded_message() -> None:
    profiles: list[dict[str, Any]] = [
        {"profile_id": f"p{i}\x1b[2J", "name": "n"} for i in range(2000)
    ]
    with pytest.raises(InvalidArgumentError) as caught:
        v2.choose_profile({"profiles": profiles}, None)
    assert len(str(caught.value)) < 2000 and "\x1b" not in str(caught.value)


def test_a_relative_next_is_resolved_against_the_current_page() -> None:
    current = Request("GET", "https://api.example/v2/videos?limit=2")
    nxt = v2.next_page(current, "/v2/videos?cursor=abc")
    assert nxt.url == "https://api.example/v2/videos?cursor=abc"
    with pytest.raises(UnexpectedResponseError, match="another host"):
        v2.next_page(current, "//evil.example/v2/videos")


async def test_a_page_loop_is_bounded() -> None:
    from vidapi_async._resources import pages as _pages

    calls = 0

    async def call(request: Request) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        return {"data": [{"i": calls}], "next": f"https://api.example/v2/videos?p={calls}"}

    first = Request("GET", "https://api.example/v2/videos")
    with pytest.raises(UnexpectedResponseError, match="pages"):
        async for _ in _pages.iter_next_pages(call, first):
            pass
    assert calls == _pages.MAX_V2_PAGES
