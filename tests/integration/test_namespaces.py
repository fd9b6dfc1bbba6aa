"""The client's shape: one requester handed to one namespace per group (no mixin chain,
no namespace holding the client), and every flat name of 0.x still working as an alias
of its namespaced operation, with the same signature and without a warning."""

from __future__ import annotations

import inspect
import pydoc
import warnings
from pathlib import Path

import pytest

import vidapi_async as va
from vidapi_async._alias import alias
from vidapi_async.emulator import Emulator

# Every public name of the 0.x client (read from the last release's Client), with the
# namespaced operation it now is; None: not an operation (a setting, a namespace).
FLAT = {
    "upload_video": "videos.upload",
    "upload_file": "uploads.file",
    "create_video": "videos.create",
    "get_video": "videos.get",
    "set_password": "videos.set_password",
    "create_subtitle": "subtitles.create",
    "create_live_stream": "live.create",
    "get_upload_session": "uploads.get_session",
    "get_upload_progress": "uploads.get_progress",
    "upload_from_url": "uploads.from_url",
    "chunks": "uploads.chunks",
    "delete_video": "videos.delete",
    "update_video": "videos.update",
    "iter_videos": "videos.mine",
    "find_videos_by_tag": "videos.find_by_tag",
    "wait_until_ready": "videos.wait_until_ready",
    "set_thumbnail": "videos.set_thumbnail",
    "categories": "videos.categories",
    "upload_subtitle": "subtitles.upload",
    "list_subtitles": "subtitles.list",
    "delete_subtitle": "subtitles.delete",
    "make_live": "live.convert",
    "get_live_stream": "live.get",
    "me": "account.me",
    "get_auth_info": "account.auth_info",
    "set_webhook": "account.set_webhook",
    "get_webhook": "account.get_webhook",
    "remove_webhook": "account.remove_webhook",
    "get": "raw.get",
    "post": "raw.post",
    "delete": "raw.delete",
    "paginate": "raw.paginate",
}
NOT_OPERATIONS = {
    "access_token",
    "api",
    "base_url",
    "chunk_size",
    "close",
    "closed",
    "connection_limit",
    "offers",
    "players",
    "playlists",
    "retry",
    "timeouts",
    "token_url",
    "read_size",
    "range_size",
    "chunked_threshold",
    "source_policy",
    "max_source_size",
}
SEED = {
    "upload_video",
    "upload_file",
    "create_video",
    "create_subtitle",
    "set_password",
    "get_video",
    "create_live_stream",
}
NAMESPACES = ("videos", "uploads", "subtitles", "live", "account", "playlists", "players", "raw")


def _target(client: va.Client, dotted: str) -> object:
    space, name = dotted.split(".")
    return getattr(getattr(client, space), name)


def test_the_client_is_no_mixin_chain() -> None:
    assert va.Client.__mro__ == (va.Client, object)


def test_every_flat_name_of_0x_is_the_namespaced_operation_with_its_signature() -> None:
    client = va.Client("t")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no alias warns, the seed's least of all
        for flat, dotted in FLAT.items():
            got, expected = getattr(client, flat), _target(client, dotted)
            assert got == expected, flat  # the same bound method of the same namespace
            assert inspect.signature(got) == inspect.signature(expected), flat
        for name in NOT_OPERATIONS:
            if name != "chunk_size":  # deprecated, and warns (tests/integration/test_public_api.py)
                getattr(client, name)
    assert FLAT.keys() >= SEED


def test_no_other_flat_operation_is_left_unmapped() -> None:
    public = {n for n in dir(va.Client) if not n.startswith("_")}
    assert public - set(NAMESPACES) - NOT_OPERATIONS == set(FLAT)
    for flat in FLAT:
        described = getattr(va.Client, flat)
        assert isinstance(described, alias), flat
        assert described.target == FLAT[flat] and described.name == flat


def test_a_flat_name_on_the_class_answers_inspect_and_help_with_its_method() -> None:
    client = va.Client("t")
    page = pydoc.render_doc(va.Client, renderer=pydoc.plaintext)
    for flat, dotted in FLAT.items():
        method = getattr(type(getattr(client, dotted.split(".")[0])), dotted.split(".")[1])
        described = getattr(va.Client, flat)
        signature = inspect.signature(described)
        assert signature == inspect.signature(method), flat
        assert next(iter(signature.parameters)) == "self", flat
        own = inspect.getdoc(method)
        assert own and inspect.getdoc(described).startswith(own), flat  # type: ignore[union-attr]
        assert f"client.{dotted}" in (described.__doc__ or ""), flat
        alone = pydoc.render_doc(described, renderer=pydoc.plaintext)
        assert f"{flat}{signature}" in alone and own.splitlines()[0] in alone, flat
        assert f"{flat}{signature}" in page, flat  # help(va.Client) shows it as a method


def test_a_flat_name_on_the_class_is_async_where_its_method_is() -> None:
    """help() writes ``async`` before a coroutine method, inspect says it is one (the
    fresh user's look at issue 37: the flat name looked synchronous)."""
    client = va.Client("t")
    for flat, dotted in FLAT.items():
        method = getattr(type(getattr(client, dotted.split(".")[0])), dotted.split(".")[1])
        described = getattr(va.Client, flat)
        for question in (inspect.iscoroutinefunction, inspect.isasyncgenfunction):
            assert question(described) == question(method), (flat, question.__name__)
        if inspect.iscoroutinefunction(method):
            alone = pydoc.render_doc(described, renderer=pydoc.plaintext)
            assert f"async {flat}(" in alone, flat


def test_a_flat_name_called_on_the_class_calls_the_namespaced_operation() -> None:
    class Space:
        def call(self, x: int) -> int:
            """Add one."""
            return x + 1

    class Owner:
        space = Space()
        kept = alias("space", Space.call)

    assert Owner.kept(Owner(), 2) == 3
    assert Owner.kept.__name__ == "kept" and Owner.kept.__qualname__.endswith("Owner.kept")


def test_every_namespace_holds_the_one_requester_and_never_the_client() -> None:
    client = va.Client("t")
    requester = client._requester
    for space in NAMESPACES:
        namespace = getattr(client, space)
        assert namespace._requester is requester, space
        held = list(vars(namespace).values())
        assert not any(isinstance(v, va.Client) for v in held), space
        assert repr(namespace).endswith(f"of {client.base_url}>"), repr(namespace)


def test_a_setting_changed_on_the_client_is_the_one_its_uploads_read() -> None:
    client = va.Client("t", chunked_threshold=1000)
    assert client.uploads.chunks(1000) and not client.uploads.chunks(999)
    client.chunked_threshold = None
    assert not client.chunks(10**12)
    client.read_size = 4096
    assert client.read_size == 4096
    with pytest.raises(va.InvalidArgumentError, match="read_size"):
        client.read_size = 0
    with pytest.raises(va.InvalidArgumentError, match="source_policy"):
        client.source_policy = "anywhere"  # type: ignore[assignment]


def test_a_deprecated_alias_warns_with_the_new_name() -> None:
    class Space:
        def call(self, x: int) -> int:
            return x + 1

    class Owner:
        space = Space()
        old = alias("space", Space.call, warn=True)
        kept = alias("space", Space.call)

    owner = Owner()
    wanted = r"client\.old is deprecated; use client\.space\.call"
    for _ in range(2):  # every use warns: a deprecated alias is never kept
        with pytest.warns(DeprecationWarning, match=wanted):
            assert owner.old(1) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert owner.kept(2) == 3
        assert owner.kept is owner.kept  # kept on the instance after its first use


async def test_namespaced_calls_reach_the_server_as_the_flat_ones_did(
    emulator: Emulator, video_file: Path
) -> None:
    from vidapi_async.testing import client_for

    async with client_for(emulator) as client:
        video = await client.videos.upload(video_file, title="spaced", channel="news")
        again = await client.get_video(video.id, ["id", "title"])
        subtitle = await client.subtitles.create(video, language="en", url="https://x.test/en.srt")
        listed = await client.subtitles.list(video)
        live = await client.live.create(title="on air", channel="news")
        me = await client.account.me()
        mine = [v.id async for v in client.videos.mine(["id"])]
        await client.videos.delete(video)
    assert again.title == "spaced"
    assert [s.id for s in listed] == [subtitle.id]
    assert live.id in mine and video.id in mine
    assert me.id
    paths = [(r.method, r.path) for r in emulator.requests if r.host == "api"]
    assert ("POST", f"/video/{video.id}/subtitles") in paths
    assert ("DELETE", f"/video/{video.id}") in paths
