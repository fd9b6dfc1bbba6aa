"""The client against the emulator, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import aiohttp
import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def test_upload_create_and_read_back(
    emulator: Emulator, client: va.Client, video_file: Path
) -> None:
    uploaded = await client.upload_file(video_file)
    stored = emulator.state.get("file", uploaded.url.split("#")[0])
    assert stored is not None
    assert Path(stored["path"]).read_bytes() == video_file.read_bytes()
    assert uploaded.size == video_file.stat().st_size
    assert uploaded.name == "movie"
    video = await client.create_video(url=uploaded.url, title="My movie", channel="news")
    assert video.title == "My movie" and video.channel == "news" and video.published is True
    again = await client.get_video(video.id, fields=["title", "published", "mode"])
    assert (again.title, again.published, again.mode) == ("My movie", True, "vod")


async def test_upload_video_does_the_three_steps(
    emulator: Emulator, client: va.Client, video_file: Path
) -> None:
    video = await client.upload_video(video_file, title="t", channel="sport", published=False)
    assert [(r.method, r.path) for r in emulator.requests] == [
        ("GET", "/channels"),  # the channel checked before the first byte
        ("GET", "/file/upload"),
        ("POST", "/upload"),
        ("POST", "/me/videos"),
    ]
    assert emulator.state.get("video", video.id)["published"] is False  # type: ignore[index]


async def test_the_token_goes_only_to_the_api(
    emulator: Emulator, client: va.Client, video_file: Path
) -> None:
    up = await client.get_upload_session()
    await client.upload_file(video_file, upload_session=up)
    await client.get_upload_progress(up)
    for r in emulator.requests:
        assert ("Authorization" in r.headers) == (r.host == "api"), r


async def test_password_set_read_and_removed(
    emulator: Emulator, client: va.Client, video_file: Path
) -> None:
    video = await client.upload_video(video_file, title="t", channel="news")
    protected = await client.set_password(video.id, "s3cret-pw")
    assert protected.password_protected is True
    assert (await client.get_video(video.id, ["password_protected"])).password_protected is True
    public = await client.set_password(video.id, None)
    assert public.password_protected is False
    assert emulator.state.get("video", video.id)["password"] is None  # type: ignore[index]


async def test_subtitles_from_a_url_and_from_a_local_file(
    client: va.Client, video_file: Path, srt_file: Path
) -> None:
    video = await client.upload_video(video_file, title="t", channel="news")
    by_url = await client.create_subtitle(video.id, language="fr", url="https://cdn.example/fr.srt")
    assert (by_url.language, by_url.format) == ("fr", "SRT")
    local = await client.upload_subtitle(video.id, srt_file, language="EN")
    assert local.language == "en"
    listed = await client.list_subtitles(video.id)
    assert {s.id for s in listed} == {by_url.id, local.id}
    assert by_url.id is not None
    await client.delete_subtitle(by_url.id)
    assert [s.id for s in await client.list_subtitles(video.id)] == [local.id]
    with pytest.raises(va.InvalidArgumentError):
        await client.delete_subtitle("../video/x1")  # never another path


async def test_a_broken_srt_is_refused_before_anything_is_sent(
    emulator: Emulator, client: va.Client, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.srt"
    bad.write_text("1\n00:00:01,000 --> 00:00:02,000\nok\n\n2\n00:00:03 --> 00:00:04\nx\n")
    with pytest.raises(va.SubtitleFileError) as info:
        await client.upload_subtitle("x1abc", bad, language="en")
    assert info.value.cue == 2
    assert emulator.requests == []


async def test_live_stream(client: va.Client) -> None:
    live = await client.create_live_stream(title="Concert", channel="music", start_time=2000000000)
    assert live.is_live and live.start_time == 2000000000
    assert live.live_publish_url is not None and live.live_publish_url.startswith("rtmp://")
    assert live.onair is False
    read = await client.get_live_stream(live.id)
    assert read.mode == "live"


async def test_an_existing_video_can_become_live(client: va.Client, video_file: Path) -> None:
    video = await client.upload_video(video_file, title="t", channel="news")
    assert (await client.make_live(video.id)).is_live


async def test_live_scope_is_checked_before_sending_when_known(emulator: Emulator) -> None:
    async with va.Client(
        access_token=emulator.token,
        scopes=["manage_subtitles"],
        base_url=emulator.base_url,
        retry=va.NO_RETRY,
    ) as client:
        with pytest.raises(va.InsufficientScopeError) as info:
            await client.create_live_stream(title="t", channel="news")
    assert info.value.scope == "manage_videos" and info.value.status is None
    assert emulator.requests == []


async def test_live_scope_refused_by_the_server_is_the_same_error() -> None:
    async with Emulator(tokens={"weak": ("manage_subtitles",)}) as emu:
        async with va.Client(
            access_token="weak", base_url=emu.base_url, retry=va.NO_RETRY
        ) as client:
            with pytest.raises(va.InsufficientScopeError) as info:
                await client.create_live_stream(title="t", channel="news")
    assert info.value.status == 403 and info.value.scope == "manage_videos"


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda c, f: c.upload_file(f.parent / "missing.mp4"), "no such file"),
        (lambda c, f: c.upload_file(f.parent), "is a directory"),
        (lambda c, f: c.upload_file(f.parent / "empty.mp4"), "is empty"),
        (lambda c, f: c.upload_file("/proc/self/mem"), "cannot read"),
        (lambda c, f: c.upload_video(f, title=" ", channel="news"), "title"),
        (lambda c, f: c.upload_video(f, title="t", channel=""), "channel"),
        (lambda c, f: c.upload_video(f, title="t", channel="Not A Slug"), "channel"),
        (lambda c, f: c.get_video("../me/videos"), "video_id"),
        (lambda c, f: c.set_password("x1", 1234), "password"),
        (lambda c, f: c.set_password("x1", ""), "password"),
        (lambda c, f: c.create_subtitle("x1", language="xx", url="https://a/b.srt"), "ISO 639"),
        (
            lambda c, f: c.create_subtitle("x1", language="en", url="https://a/b", format="VTT"),
            "SRT",
        ),
        (lambda c, f: c.create_video(url="not a url", title="t", channel="news"), "url"),
        (lambda c, f: c.get_video("x1", fields=["bad field"]), "fields"),
    ],
)
async def test_bad_input_fails_before_any_request(
    emulator: Emulator, client: va.Client, video_file: Path, call: object, argument: str
) -> None:
    (video_file.parent / "empty.mp4").write_bytes(b"")
    with pytest.raises(va.UsageError, match=argument):
        await call(client, video_file)  # type: ignore[operator]
    assert emulator.requests == []


async def test_server_errors_are_typed(client: va.Client, video_file: Path) -> None:
    with pytest.raises(va.NotFoundError) as info:
        await client.get_video("xmissing")
    assert info.value.error_type == "not_found" and info.value.reason == "object_not_found"
    video = await client.upload_video(video_file, title="t", channel="news")
    with pytest.raises(va.InvalidParameterError):
        await client.get_video(video.id, fields=["nosuchfield"])
    with pytest.raises(va.InvalidParameterError, match="url"):
        await client.create_video(url="https://elsewhere.example/f.mp4", title="t", channel="news")


async def test_injected_faults_surface_as_typed_errors(
    emulator: Emulator, client: va.Client, video_file: Path
) -> None:
    emulator.faults.update({"rate_limit_rate": 1.0, "retry_after": 3})
    with pytest.raises(va.RateLimitedError) as info:
        await client.get_upload_session()
    assert info.value.retry_after == 3.0
    emulator.faults.update({"rate_limit_rate": 0.0, "error_rate": 1.0, "error_statuses": [503]})
    with pytest.raises(va.ServerError) as err:
        await client.get_video("x1")
    assert err.value.status == 503
    emulator.faults.update({"error_rate": 0.0})
    session = await client.get_upload_session()
    emulator.faults.update({"reset_rate": 1.0})
    with pytest.raises(va.TransportError):
        await client.upload_file(
            make_file(video_file.parent / "big.mp4", 2 << 20), upload_session=session
        )


async def test_transport_errors_are_translated(emulator: Emulator) -> None:
    async with va.Client(
        access_token="t", base_url="http://127.0.0.1:9", retry=va.NO_RETRY
    ) as client:
        with pytest.raises(va.ConnectError) as info:
            await client.get_video("x1")
    # aiohttp's error is named, not chained: its request_info would hold the token.
    assert "ClientConnectorError" in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None
    emulator.faults.latency = 2.0
    timeouts = va.Timeouts(api_total=0.2)
    async with client_for(emulator, timeouts=timeouts, retry=va.NO_RETRY) as client:
        with pytest.raises(va.RequestTimeoutError):
            await client.get_video("x1")


async def test_a_callers_session_is_used_and_never_closed(emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as session:
        client = client_for(emulator, session=session)
        await client.get_upload_session()
        await client.close()
        assert not session.closed
        async with session.get(f"{emulator.base_url}/js/all.js") as resp:
            assert resp.status == 200


async def test_a_closed_client_cannot_be_reused(emulator: Emulator) -> None:
    client = client_for(emulator)
    await client.close()
    with pytest.raises(va.ClientClosedError):
        await client.get_upload_session()
    with pytest.raises(va.ClientClosedError):
        async with client:
            pass


async def test_oauth_client_credentials_fetches_once_and_refreshes_before_expiry(
    emulator: Emulator,
) -> None:
    now = [1_000_000.0]
    auth = va.OAuth.client_credentials(
        "demo-client", "demo-secret", scopes=["manage_videos"], clock=lambda: now[0]
    )
    async with va.Client(auth=auth, base_url=emulator.base_url) as client:
        await client.get_upload_session()
        await client.get_upload_session()
        token_calls = [r for r in emulator.requests if r.path == "/oauth/token"]
        assert len(token_calls) == 1
        first = await client.access_token()
        assert first.scopes == frozenset({"manage_videos"})
        now[0] += 36000 - 30  # inside the 60 s leeway
        await client.get_upload_session()
        assert len([r for r in emulator.requests if r.path == "/oauth/token"]) == 2
        assert (await client.access_token()).token != first.token


async def test_oauth_retries_once_after_invalid_token(emulator: Emulator) -> None:
    auth = va.OAuth.password(
        "demo-client",
        "demo-secret",
        username="demo",
        password="demo-password",
        scopes=["manage_videos"],
    )
    async with va.Client(auth=auth, base_url=emulator.base_url) as client:
        old = await client.access_token()
        emulator.state.delete("token", old.token)  # the server forgets it (revoked/expired)
        await client.get_upload_session()
        grants = [r for r in emulator.requests if r.path == "/oauth/token"]
        assert len(grants) == 2  # password, then refresh_token
        assert (await client.access_token()).token != old.token


async def test_static_token_gets_no_second_try(emulator: Emulator) -> None:
    async with va.Client(
        access_token="expired", base_url=emulator.base_url, retry=va.NO_RETRY
    ) as client:
        with pytest.raises(va.InvalidTokenError):
            await client.get_upload_session()
    assert len(emulator.requests) == 1


async def test_bad_client_credentials_raise_oauth_error(emulator: Emulator) -> None:
    auth = va.OAuth.client_credentials("demo-client", "wrong-secret")
    async with va.Client(auth=auth, base_url=emulator.base_url) as client:
        with pytest.raises(va.OAuthError) as info:
            await client.get_upload_session()
    assert info.value.error_type == "invalid_client"
    assert "wrong-secret" not in str(info.value) and "wrong-secret" not in repr(auth)


async def test_no_secret_reaches_a_log_line_repr_or_message(
    emulator: Emulator, video_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    password = "pw-" + os.urandom(4).hex()
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        video = await client.upload_video(video_file, title="t", channel="news")
        await client.set_password(video.id, password)
        token = await client.access_token()
        emulator.faults.error_rate = 1.0
        with pytest.raises(va.ServerError) as info:
            await client.set_password(video.id, password)
        texts = [repr(client), repr(token), str(token), str(info.value), repr(info.value)]
    texts += [r.getMessage() for r in caplog.records]
    for text in texts:
        assert emulator.token not in text
        assert password not in text


async def test_iterating_and_deleting_videos(
    emulator: Emulator, client: va.Client, video_file: Path
) -> None:
    made = [await client.upload_video(video_file, title=f"v{i}", channel="news") for i in range(5)]
    seen = [v async for v in client.iter_videos(["id", "title"], page_size=2)]
    assert [v.title for v in seen] == [f"v{i}" for i in range(5)]
    pages = [r for r in emulator.requests if r.method == "GET" and r.path == "/me/videos"]
    assert [r.query["page"] for r in pages] == ["1", "2", "3"]
    await client.delete_video(made[0].id)
    assert [v.id async for v in client.iter_videos("id")] == [v.id for v in made[1:]]
    with pytest.raises(va.NotFoundError):
        await client.delete_video(made[0].id)
    with pytest.raises(va.InvalidArgumentError, match="page_size"):
        [v async for v in client.iter_videos(page_size=500)]


async def test_concurrent_requests_refused_one_token_share_one_new_one(emulator: Emulator) -> None:
    import asyncio

    auth = va.OAuth.client_credentials("demo-client", "demo-secret", scopes=["manage_videos"])
    async with va.Client(auth=auth, base_url=emulator.base_url, retry=va.NO_RETRY) as client:
        old = await client.access_token()
        emulator.state.delete("token", old.token)
        sessions = await asyncio.gather(*(client.get_upload_session() for _ in range(6)))
    assert len(sessions) == 6
    assert len([r for r in emulator.requests if r.path == "/oauth/token"]) == 2


async def test_upload_video_can_use_the_chunked_protocol(
    emulator: Emulator, client: va.Client, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "chunky.mp4", 9 * 1024 * 1024)
    video = await client.upload_video(src, title="c", channel="news", chunked=True, workers=2)
    stored = emulator.state.get("video", video.id)
    assert stored is not None
    ranged = [r for r in emulator.requests if "Content-Range" in r.headers]
    assert len(ranged) == 3  # 4 MiB ranges


async def test_every_typed_call_that_needs_a_scope_declares_it() -> None:
    """A token the platform knows but without ``manage_videos``: the typed upload calls
    are refused with ``InsufficientScopeError`` naming the scope, before sending when the
    token's scopes are known, from the server's 403 otherwise (``get_upload_session``
    was a bare ``ForbiddenError``: a worker could not tell it from a job's fault)."""
    async with Emulator(tokens={"weak": ("read",)}) as emu:
        async with va.Client(access_token="weak", base_url=emu.base_url, retry=va.NO_RETRY) as c:
            with pytest.raises(va.InsufficientScopeError) as info:
                await c.get_upload_session()
        assert info.value.scope == "manage_videos" and info.value.status == 403
        async with va.Client(
            access_token="weak", scopes=["read"], base_url=emu.base_url, retry=va.NO_RETRY
        ) as c:
            sent = len(emu.requests)
            with pytest.raises(va.InsufficientScopeError) as info:
                await c.get_upload_session()
        assert info.value.status is None and len(emu.requests) == sent
