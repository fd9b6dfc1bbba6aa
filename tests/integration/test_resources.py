"""Typed resources beyond the seed: playlists, players, the account, thumbnails; over
real HTTP against the emulator (answers in segments), with its ownership and scopes."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async import embed
from vidapi_async.emulator import OTHER_TOKEN, Emulator
from vidapi_async.testing import client_for


async def _videos(client: va.Client, tmp_path: Path, n: int) -> list[va.Video]:
    uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 1000))
    return [
        await client.create_video(url=uploaded.url, title=f"v{i}", channel="news") for i in range(n)
    ]


async def test_a_playlists_whole_life(client: va.Client, tmp_path: Path) -> None:
    videos = await _videos(client, tmp_path, 3)
    playlist = await client.playlists.create(name="Best of", description="d")
    assert (playlist.name, playlist.description, playlist.private) == ("Best of", "d", False)
    for video in (videos[2], videos[0]):
        await client.playlists.add_video(playlist, video.id)
    await client.playlists.add_video(playlist.id, videos[2])  # already there: no change
    listed = [v.id async for v in client.playlists.videos(playlist)]
    assert listed == [videos[2].id, videos[0].id]
    assert (await client.playlists.get(playlist.id)).videos_total == 2

    changed = await client.playlists.update(playlist, name="Renamed", private=True)
    assert (changed.name, changed.private) == ("Renamed", True)
    await client.playlists.remove_video(playlist, videos[2].id)
    with pytest.raises(va.NotFoundError):
        await client.playlists.remove_video(playlist, videos[2].id)
    await client.delete_video(videos[0].id)
    assert [v async for v in client.playlists.videos(playlist)] == []

    second = await client.playlists.create(name="Second")
    assert [p.id async for p in client.playlists.mine()] == [playlist.id, second.id]
    await client.playlists.delete(playlist)
    with pytest.raises(va.NotFoundError):
        await client.playlists.get(playlist.id)
    assert [p.name async for p in client.playlists.mine()] == ["Second"]


async def test_mine_pages_past_one_page(client: va.Client) -> None:
    made = [(await client.playlists.create(name=f"p{n}")).id for n in range(103)]
    assert [p.id async for p in client.playlists.mine(("id",))] == made


async def test_another_accounts_playlists_and_players_are_refused(
    emulator: Emulator, client: va.Client
) -> None:
    private = await client.playlists.create(name="mine", private=True)
    public = await client.playlists.create(name="shared")
    player = await client.players.create(label="site")
    async with client_for(emulator, access_token=OTHER_TOKEN, retry=va.NO_RETRY) as other:
        with pytest.raises(va.ForbiddenError):
            await other.playlists.get(private.id)
        assert (await other.playlists.get(public.id)).name == "shared"
        for call in (
            other.playlists.update(public, name="taken"),
            other.playlists.delete(public),
            other.players.get(player),
            other.players.delete(player),
        ):
            with pytest.raises(va.ForbiddenError):
                await call
        with pytest.raises(va.NotFoundError):
            await other.players.get("xnothere")


async def test_scopes_are_checked_before_sending(emulator: Emulator) -> None:
    async with client_for(emulator, scopes=["manage_videos"], retry=va.NO_RETRY) as client:
        before = len(emulator.requests)
        with pytest.raises(va.InsufficientScopeError, match="manage_playlists"):
            await client.playlists.create(name="x")
        with pytest.raises(va.InsufficientScopeError, match="manage_players"):
            await anext(aiter(client.players.mine()))
        assert len(emulator.requests) == before


async def test_the_server_refuses_a_token_without_the_scope(emulator: Emulator) -> None:
    # A token the server knows lacks manage_players: its 403 is the same typed error.
    async with Emulator(tokens={"narrow-token": ("manage_videos",)}) as emu:
        async with client_for(emu, access_token="narrow-token", retry=va.NO_RETRY) as client:
            with pytest.raises(va.InsufficientScopeError):
                await client.players.create(label="x")


async def test_players_and_the_embeds_that_take_them(client: va.Client) -> None:
    player = await client.players.create(label="Site", autostart="off", mute=True)
    assert player.label == "Site"
    assert (player.fields["autostart"], player.fields["mute"]) == ("off", True)
    changed = await client.players.update(player, color="#FF0000", enable_ads=False)
    assert (changed.fields["color"], changed.fields["enable_ads"]) == ("#ff0000", False)
    assert [p.id async for p in client.players.mine()] == [player.id]
    with pytest.raises(va.InvalidParameterError):
        await client.players.update(player, autostart="sometimes")
    with pytest.raises(va.InvalidParameterError):
        await client.players.create(label="x", nonsense_setting=1)

    url = embed.player_iframe_url(player, "x84sh87")
    assert url == embed.player_iframe_url(player.id, "x84sh87")
    assert f"/player/{player.id}.html?video=x84sh87" in url
    playlist = await client.playlists.create(name="p")
    assert f'data-playlist="{playlist.id}"' in embed.player_embed_script(player, playlist=playlist)
    assert player.id in embed.player_library_html(player, "x84sh87")
    await client.players.delete(player)
    with pytest.raises(va.NotFoundError):
        await client.players.get(player)


async def test_bad_arguments_are_refused_before_sending(
    emulator: Emulator, client: va.Client
) -> None:
    before = len(emulator.requests)
    for call in (
        client.playlists.create(name=""),
        client.playlists.create(name="n", private="yes"),  # type: ignore[arg-type]
        client.playlists.update("x1"),
        client.playlists.get("../x"),
        client.playlists.add_video("x1", "x/2"),
        client.players.create(label=" "),
        client.players.update("x1"),
        client.players.create(label="x", color=object()),
        client.players.create(label="x", **{"Bad-Name": 1}),
    ):
        with pytest.raises(va.InvalidArgumentError):
            await call
    with pytest.raises(TypeError, match="owner"):  # and mypy says so: typed keywords
        await client.playlists.update("x1", owner="me")  # type: ignore[call-arg]
    assert len(emulator.requests) == before


async def test_me_and_thumbnails(emulator: Emulator, client: va.Client, tmp_path: Path) -> None:
    me = await client.me()
    assert (me.username, me.fullname) == ("demo", "Demo User")
    (video,) = await _videos(client, tmp_path, 1)
    image = make_file(tmp_path / "thumb.jpg", 5000)

    done = await client.set_thumbnail(video.id, image)
    stored = done.fields["thumbnail_url"]
    assert stored.startswith(emulator.upload_base)
    record = emulator.state.get("file", stored)
    assert record is not None
    assert Path(record["path"]).read_bytes() == image.read_bytes()

    done = await client.set_thumbnail(video.id, b"\xff\xd8 raw jpeg bytes")
    assert done.fields["thumbnail_url"] != stored
    done = await client.set_thumbnail(video.id, "https://images.example/t.jpg")
    assert done.fields["thumbnail_url"] == "https://images.example/t.jpg"
    with pytest.raises(va.InvalidArgumentError):
        await client.set_thumbnail("bad id", "https://images.example/t.jpg")


async def test_a_thumbnail_uploaded_by_another_account_is_refused(
    emulator: Emulator, client: va.Client, tmp_path: Path
) -> None:
    (video,) = await _videos(client, tmp_path, 1)
    async with client_for(emulator, access_token=OTHER_TOKEN, retry=va.NO_RETRY) as other:
        theirs = await other.upload_file(b"their image")
    with pytest.raises(va.ForbiddenError):
        await client.set_thumbnail(video.id, theirs.url)
