"""A JSON answer nested deeper than any real one (a hostile or broken server): from the
API, an upload host or a token endpoint, whatever its status, it ends in a typed
``VidapiError`` naming the nesting, never a ``RecursionError``; a batch job it hits
fails with that error and the batch goes on. Served by the raw-socket wire server."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file
from tests.integration.test_client_wire import TOKEN, descriptor
from tests.wire import Reply, Seen, WireServer
from vidapi_async import _protocol as wire
from vidapi_async.cli._exit import EXIT_API


def deep(levels: int = 100_000, *, as_list: bool = False) -> bytes:
    """A JSON object holding ``levels`` nested arrays (or a bare array)."""
    inner = b"[" * levels + b"]" * levels
    return inner if as_list else b'{"error": ' + inner + b', "list": []}'


def deep_objects(levels: int = 50_000) -> bytes:
    return b'{"a":' * levels + b"1" + b"}" * levels


NESTED = "nest"  # "nests ... levels deep" is what the message must say


@pytest.mark.parametrize("status", [200, 400, 404, 500])
@pytest.mark.parametrize("body", [deep(), deep_objects(), deep(1000), deep(as_list=True)])
async def test_a_deep_api_answer_is_a_typed_error(status: int, body: bytes) -> None:
    reply = Reply(status, body, {"Content-Type": "application/json"})
    async with WireServer(lambda _: reply) as srv:
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            calls: list[Callable[[], Awaitable[Any]]] = [
                lambda: client.get("/me"),
                lambda: client.me(),
                lambda: anext(aiter(client.paginate("/me/videos"))),
                lambda: client.get_video("x1"),
            ]
            for call in calls:
                with pytest.raises(va.VidapiError, match=NESTED) as caught:
                    await call()
                assert isinstance(caught.value, va.APIError)
                if status == 200:
                    assert isinstance(caught.value, va.UnexpectedResponseError)


async def test_a_moderately_nested_answer_is_still_read() -> None:
    # 40 levels, and brackets in strings (escaped quotes too) that are not nesting
    text = b'"' + b"[{" * 100 + b'\\"' + b'"'
    body = b'{"id": "x1", "a": ' + b"[" * 40 + text + b"]" * 40 + b', "b": ' + text + b"}"
    reply = Reply(200, body, {"Content-Type": "application/json"})
    async with WireServer(lambda _: reply) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        got = await client.get("/me")
    assert got["id"] == "x1"


@pytest.mark.parametrize("status", [200, 400, 503])
async def test_a_deep_token_endpoint_answer_is_a_typed_error(status: int) -> None:
    def handler(seen: Seen) -> Reply:
        if seen.path == "/oauth/token":
            return Reply(status, deep(), {"Content-Type": "application/json"})
        return Reply.json({"id": "x1"})

    auth = va.OAuth.client_credentials("cid", "csecret")
    async with WireServer(handler) as srv:
        async with va.Client(auth=auth, base_url=srv.url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.VidapiError, match=NESTED):
                await client.get("/me")
            with pytest.raises(va.VidapiError, match=NESTED):
                await client.me()


def _upload_api(url: list[str], upload: Reply) -> Any:
    def handler(seen: Seen) -> Reply:
        if seen.path == "/file/upload":
            return Reply.json({"upload_url": f"{url[0]}/upload?seal=s", "progress_url": url[0]})
        if seen.path == "/upload":
            return upload
        if seen.path == "/channels":
            return Reply.json({"list": [{"id": "news"}], "has_more": False})
        if seen.path == "/me/videos" and seen.method == "POST":
            return Reply.json({"id": "x1", "title": "t"})
        if seen.path in ("/me/videos", "/me"):  # a batch's adoption listing, the account
            return Reply.json({"list": [], "has_more": False, "id": "u1"})
        return Reply.json({"error": {"code": 404, "message": "no"}}, status=404)

    return handler


@pytest.mark.parametrize("status", [200, 400, 500])
@pytest.mark.parametrize("chunked", [False, True])
async def test_a_deep_upload_answer_is_a_typed_error(
    tmp_path: Path, status: int, chunked: bool
) -> None:
    url: list[str] = []
    reply = Reply(status, deep(), {"Content-Type": "application/json"})
    path = make_file(tmp_path / "m.mp4", 1000)
    async with WireServer(_upload_api(url, reply)) as srv:
        url.append(srv.url)
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            kw: dict[str, Any] = {"range_size": 1 << 20} if chunked else {}
            with pytest.raises(va.VidapiError, match=NESTED):
                await client.upload_file(path, **kw)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le"])
async def test_a_deep_answer_fails_its_batch_job_and_the_batch_goes_on(
    tmp_path: Path, encoding: str
) -> None:
    url: list[str] = []
    files = [make_file(tmp_path / f"f{n}.mp4", 1000 + n) for n in range(4)]
    body = deep() if encoding == "utf-8" else disguised(100_000, encoding)
    reply = Reply(200, body, {"Content-Type": "application/json"})

    def handler(seen: Seen) -> Reply:
        if seen.path == "/upload" and b'filename="f1.mp4"' in seen.body:
            return reply
        return _upload_api(url, Reply.json(descriptor(f"{url[0]}/files/f.mp4")))(seen)

    jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    async with WireServer(handler) as srv:
        url.append(srv.url)
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            async with va.BatchUploader(client, concurrency=2) as batch:
                results = [r async for r in batch.run(jobs)]
    by_title = {r.job.title: r for r in results}
    assert len(results) == 4
    failed = by_title["f1.mp4"]
    assert failed.status is va.JobStatus.FAILED
    assert isinstance(failed.error, va.UnexpectedResponseError)
    assert NESTED in str(failed.error)
    assert {t for t, r in by_title.items() if r.status is va.JobStatus.DONE} == {
        "f0.mp4",
        "f2.mp4",
        "f3.mp4",
    }


async def test_vidapi_api_with_a_deep_answer_exits_with_the_api_code() -> None:
    reply = Reply(200, deep(), {"Content-Type": "application/json"})
    async with WireServer(lambda _: reply) as srv:
        env = {"VIDAPI_TOKEN": TOKEN, "VIDAPI_BASE_URL": srv.url}
        code, out, err = await vidapi("api", "/me", env=env)
    assert code == EXIT_API, err
    assert NESTED in err
    assert "Traceback" not in err
    assert out == ""


@pytest.mark.parametrize("noise", ["", "[{", '\\"[', "\\\\", '\\\\\\"{{'])
@pytest.mark.parametrize("levels", [63, 64, 65, 200])
def test_nesting_is_counted_as_json_nests_it(levels: int, noise: str) -> None:
    """The oracle is the json module itself: the depth of what it builds."""
    value: Any = [f"s{noise}e"] * 3
    for n in range(levels - 2):  # one level each: a list, then an object
        value = [value, noise] if n % 2 else {"k": value, f"{noise}": noise}
    text = json.dumps({"a": value})
    depth, item = 1, json.loads(text)["a"]
    while isinstance(item, list | dict):
        depth += 1
        item = item[0] if isinstance(item, list) else item["k"]
    assert depth == levels
    if depth <= wire.MAX_JSON_DEPTH:
        assert wire.json_object(text.encode()) == json.loads(text)
    else:
        with pytest.raises(wire.NestedTooDeep):
            wire.json_object(text.encode())


def disguised(levels: int, encoding: str) -> bytes:
    """A deep answer in UTF-16/32 whose bytes also read as UTF-8 in which a string opens
    (U+2022 is ``22 20`` in UTF-16-LE) and hides every bracket after it."""
    return ('{"a":"\u2022","b":' + "[" * levels + "]" * levels + "}").encode(encoding)


ENCODINGS = ["utf-16-le", "utf-16-be", "utf-16", "utf-32-le", "utf-32", "utf-8-sig"]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("levels", [100, 100_000])
def test_a_deep_answer_in_any_json_encoding_is_refused(encoding: str, levels: int) -> None:
    with pytest.raises(wire.NestedTooDeep):
        wire.json_object(disguised(levels, encoding))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_shallow_answer_in_any_json_encoding_is_read(encoding: str) -> None:
    assert wire.json_object(disguised(30, encoding)) == json.loads(disguised(30, encoding))


@pytest.mark.parametrize("status", [200, 400])
async def test_a_disguised_deep_answer_is_a_typed_error_on_the_wire(
    tmp_path: Path, status: int
) -> None:
    reply = Reply(status, disguised(100_000, "utf-16-le"), {"Content-Type": "application/json"})
    url: list[str] = []
    path = make_file(tmp_path / "m.mp4", 1000)
    async with WireServer(lambda _: reply) as srv:
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            for call in (lambda: client.get("/me"), client.me):
                with pytest.raises(va.VidapiError, match=NESTED):
                    await call()
    async with WireServer(_upload_api(url, reply)) as srv:
        url.append(srv.url)
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            for kw in ({}, {"range_size": 1 << 20}):
                with pytest.raises(va.VidapiError, match=NESTED):
                    await client.upload_file(path, **kw)


async def test_vidapi_api_with_a_disguised_deep_answer_exits_with_the_api_code() -> None:
    reply = Reply(200, disguised(100_000, "utf-16-le"), {"Content-Type": "application/json"})
    async with WireServer(lambda _: reply) as srv:
        env = {"VIDAPI_TOKEN": TOKEN, "VIDAPI_BASE_URL": srv.url}
        code, _, err = await vidapi("api", "/deep16", env=env)
    assert code == EXIT_API, err
    assert NESTED in err and "Traceback" not in err


@pytest.mark.parametrize(
    "body",
    [
        b'{"id": "x1"}',
        '{"t": "é\u2028"}'.encode(),
        b"{",
        b"{x",
        b'{"bad": "\xff"}',
        '{"id": 1}'.encode("utf-16-le"),
        '{"id": 1}'.encode("utf-32-le"),
        '{"id": 1}'.encode("utf-8-sig"),
        b"[1]",
        b"",
    ],
)
def test_the_quick_utf8_reading_of_an_object_is_json_loads_reading(body: bytes) -> None:
    """An answer starting with "{" is read as UTF-8 without json.detect_encoding, and
    that is exactly what json.loads(body) would have read (or None where it fails)."""
    from vidapi_async._protocol._answers import _json_text

    try:
        expected: str | None = body.decode(json.detect_encoding(body), "surrogatepass")
    except UnicodeDecodeError:
        expected = None
    assert _json_text(body) == expected
