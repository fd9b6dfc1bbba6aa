"""``Client.offers(operation)``: whether the client's API dialect offers one of its
operations, given as itself (flat or namespaced), so that one script runs in both
dialects. The oracle: calling an operation it says is not offered raises
``UnsupportedOperationError`` before anything is sent (a closed port: anything sent
would be a connection error instead)."""

from __future__ import annotations

import pytest

import vidapi_async as va

BASE = "http://127.0.0.1:9"


def client(api: str) -> va.Client:
    url = BASE + ("/v2" if api == "v2" else "")
    return va.Client(access_token="t", api=api, base_url=url, retry=va.NO_RETRY)


async def test_what_each_dialect_offers() -> None:
    async with client("legacy") as legacy, client("v2") as v2:
        for c in (legacy, v2):
            assert c.offers(c.upload_video) and c.offers(c.videos.upload)
            assert c.offers(c.create_live_stream) and c.offers(c.live.create)
            assert c.offers(c.get) and c.offers(c.raw.get)
        assert legacy.offers(legacy.create_subtitle)
        assert legacy.offers(legacy.subtitles.create)
        assert legacy.offers(legacy.playlists.mine)
        assert not legacy.offers(legacy.raw.patch)
        assert not v2.offers(v2.create_subtitle)
        assert not v2.offers(v2.subtitles.create)
        assert not v2.offers(v2.upload_subtitle) and not v2.offers(v2.make_live)
        assert not v2.offers(v2.playlists.mine) and not v2.offers(v2.players.mine)
        assert v2.offers(v2.raw.patch)


async def test_an_operation_said_not_offered_is_refused_before_sending() -> None:
    async with client("v2") as v2, client("legacy") as legacy:
        assert not v2.offers(v2.create_subtitle)
        with pytest.raises(va.UnsupportedOperationError):
            await v2.create_subtitle("x1", language="en", url="https://e.example/a.srt")
        with pytest.raises(va.UnsupportedOperationError):
            await v2.subtitles.list("x1")
        assert not legacy.offers(legacy.raw.patch)
        with pytest.raises(va.UnsupportedOperationError):
            await legacy.raw.patch("/video/x1", {"title": "t"})
        assert v2.offers(v2.get_video)
        with pytest.raises(va.TransportError):  # offered: sent (to a closed port)
            await v2.get_video("x1")


async def test_only_an_operation_of_this_client_is_taken() -> None:
    async with client("v2") as c, client("v2") as other:
        for thing in (print, c, c.videos, c.videos._check_category, other.create_subtitle):
            with pytest.raises(va.InvalidArgumentError, match="operation"):
                c.offers(thing)  # type: ignore[arg-type]


def test_each_dialect_refuses_by_one_kind_of_key_and_every_key_is_refused_somewhere() -> None:
    """The refusal tables are keyed by ``Operation`` only (no string keys that a typo
    could leave unmatched), and every ``Operation`` is one some dialect lacks."""
    from vidapi_async._dialects.legacy import Legacy
    from vidapi_async._dialects.operations import Operation
    from vidapi_async._dialects.v2 import V2

    legacy, v2 = Legacy(), V2()
    for dialect in (legacy, v2):
        assert all(type(key) is Operation for key in dialect.refused)
    assert set(legacy.refused) | set(v2.refused) == set(Operation)
    assert set(legacy.refused).isdisjoint(v2.refused)
    with pytest.raises(va.UnsupportedOperationError, match=r"raw\.patch") as caught:
        legacy.refuse(Operation.RAW_PATCH)
    assert caught.value.dialect == "legacy" and caught.value.operation == "raw.patch"
    v2.refuse(Operation.RAW_PATCH)  # offered: nothing raised
    assert Operation.named("playlists.mine") is Operation.PLAYLISTS_MINE
    assert Operation.named("create_video") is None
