"""``Client(api=, profile_id=)`` and ``$VIDAPI_API``: the dialect chosen, its root and
token endpoint, bad values refused before anything is sent."""

from __future__ import annotations

import pytest

import vidapi_async as va


async def test_v2_defaults_to_its_root_and_token_endpoint() -> None:
    async with va.Client(auth=va.ApiKey("k", "s"), api="v2") as client:
        assert client.api == "v2"
        assert client.base_url == "https://api.dailymotion.com/v2"
        assert client.token_url == "https://oauth2.dailymotion.com/v2/token"
    async with va.Client(access_token="t", api="v2", base_url="https://h.test/v2") as client:
        assert client.token_url == "https://h.test/v2/token"
    async with va.Client(access_token="t") as client:
        assert client.api == "legacy" and client.base_url == "https://api.dailymotion.com"


async def test_the_environment_chooses_when_api_is_not_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VIDAPI_API", "v2")
    async with va.Client(access_token="t") as client:
        assert client.api == "v2" and client.base_url.endswith("/v2")
    async with va.Client(access_token="t", api="legacy") as client:
        assert client.api == "legacy"  # the argument wins
    monkeypatch.setenv("VIDAPI_API", "v3")
    with pytest.raises(va.InvalidArgumentError) as info:
        va.Client(access_token="t")
    assert info.value.argument == "VIDAPI_API" and "legacy, v2" in str(info.value)


def test_bad_dialect_and_profile_without_v2_are_refused() -> None:
    with pytest.raises(va.InvalidArgumentError) as info:
        va.Client(access_token="t", api="V2")
    assert info.value.argument == "api"
    with pytest.raises(va.UsageError, match="profile_id= goes with api='v2'"):
        va.Client(access_token="t", profile_id="p1")
    with pytest.raises(va.InvalidArgumentError, match="profile_id"):
        va.Client(access_token="t", api="v2", profile_id=" ")


async def test_legacy_scopes_of_a_static_token_are_read_in_v2() -> None:
    # The token is known to hold manage_videos (v2: video.manage video.read) only:
    # a player (player.manage) is refused before sending, a video read is not refused.
    async with va.Client(
        access_token="t",
        api="v2",
        base_url="http://127.0.0.1:9/v2",
        scopes=["manage_videos"],
        profile_id="p1",
        retry=va.NO_RETRY,
    ) as client:
        with pytest.raises(va.InsufficientScopeError) as info:
            await client.players.create(label="x")
        assert info.value.scope == "player.manage"  # before GET /me: nothing sent
        with pytest.raises(va.InsufficientScopeError) as info:
            await client.playlists.create(name="x")
        assert info.value.scope == "playlist.manage"
        with pytest.raises(va.TransportError):
            await client.get_video("x1")  # sent: the closed port answers


def test_grants_v2_does_not_take_are_refused() -> None:
    for provider, grant in (
        (va.OAuth.password("id", "secret", username="u", password="pw-9"), "password"),
        (
            va.OAuth.authorization_code("id", "secret", code="c", redirect_uri="http://l/cb"),
            "authorization_code",
        ),
    ):
        with pytest.raises(va.UnsupportedOperationError) as info:
            va.Client(auth=provider, api="v2")
        assert info.value.operation == f"OAuth.{grant}" and "ApiKey" in str(info.value)
        assert "secret" not in str(info.value).replace("ApiKey(key, secret)", "")
    va.Client(auth=va.OAuth.client_credentials("id", "secret"), api="v2")  # taken


def test_a_refresh_grant_and_legacy_scope_names_are_refused_before_sending() -> None:
    refresh = va.OAuth.refresh_token("id", "secret", refresh_token="rt-very-secret")
    with pytest.raises(va.UnsupportedOperationError) as info:
        va.Client(auth=refresh, api="v2")
    assert info.value.operation == "OAuth.refresh_token" and "ApiKey" in str(info.value)
    assert "rt-very-secret" not in str(info.value)
    legacy = va.OAuth.client_credentials("id", "secret", scopes=["manage_videos"])
    with pytest.raises(va.UnsupportedOperationError) as named:
        va.Client(auth=legacy, api="v2")
    assert "manage_videos" in str(named.value) and "ApiKey" in str(named.value)
    v2_names = va.OAuth.client_credentials("id", "secret", scopes=["video.manage"])
    va.Client(auth=v2_names, api="v2")  # v2's own names: taken
