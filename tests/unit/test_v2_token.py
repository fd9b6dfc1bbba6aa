"""API v2's token provider (``ApiKey``), driven by a plain function as the token
endpoint: client credentials, space-separated v2 scopes, no refresh token, a new token
before the old one expires."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

import vidapi_async as va
from vidapi_async._auth.api_key import ApiKey

URL = "http://127.0.0.1:9/v2/token"


class Endpoint:
    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, dict[str, str]]] = []

    async def __call__(self, url: str, fields: tuple[tuple[str, str], ...]) -> Mapping[str, Any]:
        self.calls.append((url, dict(fields)))
        return self.answers[len(self.calls) - 1]


async def test_client_credentials_with_space_separated_v2_scopes() -> None:
    post = Endpoint([{"access_token": "t1", "expires_in": 1800, "scope": "bundle.user"}])
    provider = ApiKey("key1", "sec-ret", scopes=["manage_playlists", "account.read"])
    token = await provider.get_token(post, URL)
    assert post.calls == [
        (
            URL,
            {
                "grant_type": "client_credentials",
                "client_id": "key1",
                "client_secret": "sec-ret",
                "scope": "playlist.manage playlist.read account.read",
            },
        )
    ]
    assert token.token == "t1"
    assert token.scopes is not None and "video.manage" in token.scopes  # bundle expanded
    assert "sec-ret" not in repr(provider) and "t1" not in repr(token)


async def test_no_refresh_token_a_new_grant_before_expiry() -> None:
    now = [1000.0]
    post = Endpoint(
        [
            {"access_token": "t1", "expires_in": 1800, "refresh_token": "r-never-used"},
            {"access_token": "t2", "expires_in": 1800},
        ]
    )
    provider = ApiKey("key1", "s", clock=lambda: now[0], leeway=60)
    first = await provider.get_token(post, URL)
    assert first.refresh_token is None
    now[0] += 1700  # 100 s left: still good
    assert (await provider.get_token(post, URL)).token == "t1"
    now[0] += 50  # 50 s left, under the leeway: a new one, by the grant again
    assert (await provider.get_token(post, URL)).token == "t2"
    assert [c[1]["grant_type"] for c in post.calls] == ["client_credentials"] * 2
    assert all("refresh_token" not in c[1] for c in post.calls)


async def test_a_token_url_given_wins_and_defaults_are_v2_scopes() -> None:
    post = Endpoint([{"access_token": "t1"}])
    provider = ApiKey("k", "s", token_url="http://elsewhere.test/v2/token")
    token = await provider.get_token(post, URL)
    assert post.calls[0][0] == "http://elsewhere.test/v2/token"
    assert post.calls[0][1]["scope"] == "account.read video.read video.manage"
    assert token.scopes is None  # the answer did not say: unknown, not guessed


def test_a_legacy_scope_without_a_v2_counterpart_is_refused_at_once() -> None:
    with pytest.raises(va.InvalidArgumentError, match="manage_subtitles"):
        ApiKey("k", "s", scopes=["manage_subtitles"])
    with pytest.raises(va.InvalidArgumentError, match="client_secret"):
        ApiKey("k", "")
