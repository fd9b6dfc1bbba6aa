"""``Client(api="v2")`` end to end against the emulator's v2: the quickstart's
operations with nothing changed but the dialect (and the key), what v2 does not offer
refused before sending, the profile found or refused. The emulator's v2 is its own code
(it imports nothing of the client); the bytes on the wire are checked apart, at a
scripted server (tests/integration/test_v2_client_wire.py)."""

from __future__ import annotations

import pytest

import vidapi_async as va
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

VIDEO = b"\x00\x00\x00\x18ftypmp42" + b"v2-bytes" * 500


async def test_quickstart_in_v2(emulator: Emulator) -> None:
    async with client_for(emulator, api="v2") as client:
        assert client.api == "v2" and client.base_url == emulator.v2_base_url
        video = await client.upload_video(VIDEO, title="Hello v2", channel="news", filename="a.mp4")
        assert video.id and video.title == "Hello v2" and video.channel == "news"
        got = await client.get_video(video.id)
        assert (got.id, got.title, got.channel, got.private) == (
            video.id,
            "Hello v2",
            "news",
            False,
        )
        changed = await client.update_video(
            video.id, title="Renamed", tags=["a", "b"], returning=["title", "tags"]
        )
        assert changed.title == "Renamed" and list(changed.tags or []) == ["a", "b"]
        protected = await client.set_password(video.id, "pw-123")
        assert protected.password_protected is True
        public = await client.set_password(video, None)
        assert public.password_protected is False
        ready = await client.wait_until_ready(video.id, poll=0.05, timeout=60)
        assert ready.is_ready
        mine = [v.id async for v in client.iter_videos()]
        assert mine == [video.id]
        await client.delete_video(video.id)
        with pytest.raises(va.NotFoundError) as gone:
            await client.get_video(video.id)
        assert gone.value.correlation_id and gone.value.correlation_id in str(gone.value)


async def test_a_video_made_in_v2_is_read_by_the_legacy_client(emulator: Emulator) -> None:
    async with client_for(emulator, api="v2") as v2client, client_for(emulator) as legacy:
        made = await v2client.upload_video(
            VIDEO, title="Both", channel="music", private=True, filename="b.mp4"
        )
        seen = await legacy.get_video(made.id, ["title", "channel", "private"])
        assert (seen.title, seen.channel, seen.private) == ("Both", "music", True)


async def test_listing_follows_next_across_pages(emulator: Emulator) -> None:
    async with client_for(emulator, api="v2") as client:
        ids = [
            (await client.upload_video(VIDEO, title=f"n{i}", channel="news", filename="c.mp4")).id
            for i in range(3)
        ]
        listed = [v.id async for v in client.videos.mine(page_size=2)]
        assert listed == ids


async def test_create_with_dedupe_tag_is_found_by_tag(emulator: Emulator) -> None:
    async with client_for(emulator, api="v2") as client:
        uploaded = await client.upload_file(VIDEO, filename="d.mp4")
        made = await client.create_video(
            url=uploaded.url, title="tagged", channel="news", dedupe_tag="job-7"
        )
        found = await client.find_videos_by_tag("job-7")
        assert [v.id for v in found] == [made.id]
        assert "job-7" in ((await client.get_video(made.id, ["tags"])).tags or [])


async def test_me_is_the_user_with_its_profiles(emulator: Emulator) -> None:
    async with client_for(emulator, api="v2") as client:
        me = await client.me()
        assert me.id and me.username == "demo"


async def test_several_profiles_without_a_choice_is_an_error_naming_them(
    emulator: Emulator,
) -> None:
    async with client_for(emulator, api="v2") as client:
        owner = (await client.me()).id
    assert owner
    emulator.add_profile("demo-second", name="B")
    async with client_for(emulator, api="v2") as client:
        with pytest.raises(va.InvalidArgumentError) as info:
            await client.upload_video(VIDEO, title="t", channel="news", filename="e.mp4")
        assert "demo-second" in str(info.value) and "choose" in str(info.value)
    async with client_for(emulator, api="v2", profile_id="demo-second") as client:
        video = await client.upload_video(VIDEO, title="t", channel="news", filename="f.mp4")
        assert (await client.get_video(video.id, ["owner"])).owner == "demo-second"


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda c: c.set_thumbnail("x1", "https://example.com/a.jpg"), "set_thumbnail"),
        (lambda c: c.categories(), "categories"),
        (lambda c: c.get_auth_info(), "get_auth_info"),
        (lambda c: c.upload_subtitle("x1", b"1\n", language="en"), "upload_subtitle"),
        (lambda c: c.list_subtitles("x1"), "list_subtitles"),
        (lambda c: c.make_live("x1"), "make_live"),
    ],
)
async def test_what_v2_does_not_offer_is_refused_before_sending(call, name) -> None:  # type: ignore[no-untyped-def]
    # A base on a closed port: anything sent would be a connection error instead.
    async with va.Client(access_token="t", api="v2", base_url="http://127.0.0.1:9") as client:
        with pytest.raises(va.UnsupportedOperationError) as info:
            await call(client)
        assert info.value.operation == name and info.value.dialect == "v2"
        assert name in str(info.value)


async def test_a_chunked_upload_and_its_progress_in_v2(emulator: Emulator) -> None:
    data = VIDEO * 40  # several ranges of range_size
    async with client_for(emulator, api="v2", range_size=64 * 1024) as client:
        session = await client.get_upload_session()
        uploaded = await client.upload_file(data, upload_session=session, chunked=True)
        assert uploaded.size == len(data)
        progress = await client.get_upload_progress(session)
        assert progress is not None
        video = await client.create_video(url=uploaded.url, title="chunked", channel="news")
    stored = emulator.state.get("file", next(iter(emulator.videos()))["url"])
    assert stored is not None and video.id
    with open(stored["path"], "rb") as f:
        assert f.read() == data
