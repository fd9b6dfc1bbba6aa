"""Issue 38, hostile input round four: the client-side findings #3 (a user tag posing as
a batch's bookkeeping tag), #9 (``extra`` naming a field the call sets), #11 (the
report's mode), #15 (the request id in any case), #16 (a title over the platform's
limit). The platform is ``tests/wire.py``'s server, which shares no code with the
client: what it sees is what was sent."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_video_metadata_wire import _platform as platform
from tests.wire import Reply, Seen, WireServer
from vidapi_async.batch import jobs_from_source

TOKEN = "wire-token-0123456789"


# --- #3: the batch's reserved tag prefixes -------------------------------------------------


@pytest.mark.parametrize("tag", ["vidapi-b", "vidapih-0123abcd", "VIDAPI-other", " vidapi-x"])
async def test_a_reserved_tag_is_refused_in_any_metadata_before_anything_is_sent(
    tmp_path: Path, tag: str
) -> None:
    source = make_file(tmp_path / "clip.mp4", 1000)
    tags = ["cats", tag]
    async with WireServer(platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        calls = (
            client.upload_video(source, title="t", channel="news", tags=tags),
            client.create_video(url="http://files.example/f", title="t", channel="news", tags=tags),
            client.update_video("x1", tags=tags),
        )
        for call in calls:
            with pytest.raises(va.InvalidArgumentError) as caught:
                await call
            assert caught.value.argument == "tags" and tag.strip() in str(caught.value)
    assert srv.seen == []
    with pytest.raises(va.InvalidArgumentError, match=tag.strip()):
        va.UploadJob(path=str(source), title="t", channel="news", tags=tags)
    manifest = tmp_path / "m.csv"
    manifest.write_text(f"path,title,channel,tags\n{source},t,news,cats;{tag}\n")
    with pytest.raises(va.InvalidArgumentError, match=f"line 2.*{tag.strip()}"):
        list(jobs_from_source(str(manifest), channel=None))


async def test_a_tag_that_merely_holds_the_word_is_fine() -> None:
    async with WireServer(platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        await client.update_video("x1", tags=["my-vidapi-b", "vidapi", "vidapi_x"])
    assert len(srv.seen) == 1


# --- #9: extra naming a field the call sets itself -----------------------------------------


@pytest.mark.parametrize("name", ["url", "password", "title", "published", "is_created_for_kids"])
async def test_extra_naming_a_field_create_video_sets_is_refused(name: str) -> None:
    async with WireServer(platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        with pytest.raises(va.InvalidArgumentError) as caught:
            await client.create_video(
                url="http://files.example/a",
                title="t",
                channel="news",
                password="s3cret-pass",
                extra={name: "http://internal.example/b"},
            )
        assert caught.value.argument == "extra" and repr(name) in str(caught.value)
        with pytest.raises(va.InvalidArgumentError, match="'tags'"):  # the dedupe tag's
            await client.create_video(
                url="http://files.example/a",
                title="t",
                channel="news",
                dedupe_tag="mine",
                extra={"tags": "x"},
            )
    assert srv.seen == []


# --- review of #3/#9: a reserved tag through extra=, or in another script or hyphen -------


@pytest.mark.parametrize("name", ["tags", "title", "description", "geoblocking", "private"])
async def test_extra_may_not_name_any_typed_field_even_one_the_call_leaves_unset(
    name: str,
) -> None:
    """The review of issue 38/39: ``extra={"tags": "vidapi-b"}`` went past the reserved
    tag check (only names the call set this time were refused). A typed field is given
    as its argument, checked, never as form text."""
    async with WireServer(platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        calls = (
            client.create_video(
                url="http://files.example/a", title="t", channel="news", extra={name: "vidapi-b"}
            ),
            client.update_video("x1", extra={name: "vidapi-b"}),
            client.update_video("x1", extra={f" {name.upper()}": "vidapi-b"}),
        )
        for call in calls:
            with pytest.raises(va.InvalidArgumentError) as caught:
                await call
            assert caught.value.argument == "extra" and name in str(caught.value)
    assert srv.seen == []


RESERVED_LOOKALIKES = [
    "\uff36\uff29\uff24\uff21\uff30\uff29-x",  # fullwidth VIDAPI
    "v\u0131dapi-b",  # dotless i
    "V\u0130DAPI-b",  # dotted capital I
    "vidapi\u2010b",  # hyphen
    "vidapi\u2011b",  # non-breaking hyphen
    "vidapi\u2212b",  # minus sign
    "vidapi\uff0db",  # fullwidth hyphen-minus
    "\u2174idapi-b",  # small roman numeral five
    "vidapih\u2013x",  # en dash
]


@pytest.mark.parametrize("tag", RESERVED_LOOKALIKES)
async def test_a_reserved_tag_in_another_script_or_with_another_hyphen_is_refused(
    tag: str,
) -> None:
    async with WireServer(platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        with pytest.raises(va.InvalidArgumentError) as caught:
            await client.update_video("x1", tags=["cats", tag])
        assert caught.value.argument == "tags"
    assert srv.seen == []


# --- #15: the request id, whatever the case of its header ---------------------------------


@pytest.mark.parametrize("header", ["x-request-id", "X-REQUEST-ID", "X-Request-ID"])
async def test_an_api_error_carries_the_request_id_in_any_case(header: str) -> None:
    def refusing(seen: Seen) -> Reply:
        body = {"error": {"code": 400, "message": "no", "type": "invalid_parameter"}}
        if seen.path == "/video/x2":
            return Reply.json(body, 429, headers={header: "req-43", "retry-after": "7"})
        return Reply.json(body, 400, headers={header: "req-41"})

    async with (
        WireServer(refusing) as srv,
        va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client,
    ):
        with pytest.raises(va.APIError) as caught:
            await client.update_video("x1", title="t")
        assert caught.value.request_id == "req-41"
        assert "req-41" in str(caught.value)
        with pytest.raises(va.RateLimitedError) as limited:
            await client.update_video("x2", title="t")
        assert limited.value.request_id == "req-43" and limited.value.retry_after == 7


# --- #16: a title over the platform's limit, before any byte -------------------------------


async def test_a_title_over_255_characters_is_refused_before_any_byte(tmp_path: Path) -> None:
    source = make_file(tmp_path / "clip.mp4", 1000)
    long = "t" * 256
    async with WireServer(platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        with pytest.raises(va.InvalidArgumentError, match="255") as caught:
            await client.upload_video(source, title=long, channel="news")
        assert caught.value.argument == "title"
        with pytest.raises(va.InvalidArgumentError, match="255"):
            await client.update_video("x1", title="é" * 100_000)
        await client.update_video("x1", title="é" * 255)  # the limit itself is fine
    assert [s.path for s in srv.seen] == ["/video/x1"]
    with pytest.raises(va.InvalidArgumentError, match="255"):
        va.UploadJob(path=str(source), title=long, channel="news")
    manifest = tmp_path / "m.csv"
    manifest.write_text(f"path,title,channel\n{source},{long},news\n")
    with pytest.raises(va.InvalidArgumentError, match=r"line 2.*255"):
        list(jobs_from_source(str(manifest), channel=None))


# --- #11: the report is the owner's only -------------------------------------------------


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _platform_listing(seen: Seen) -> Reply:
    """The platform of the wire tests, with an account that holds no video yet (the
    batch lists the account's videos once, for adoption, before its first upload)."""
    if seen.method == "GET" and seen.path == "/me/videos":
        return Reply.json({"list": [], "has_more": False})
    return platform(seen)


@pytest.mark.usefixtures("open_umask")
async def test_the_report_is_created_0600_and_a_wider_one_is_narrowed(tmp_path: Path) -> None:
    source = make_file(tmp_path / "clip.mp4", 1000)
    job = va.UploadJob(path=str(source), title="t", channel="news")
    again = tmp_path / "again.jsonl"
    again.write_text("")
    again.chmod(0o644)
    for report in (tmp_path / "report.csv", again):
        async with (
            WireServer(_platform_listing) as srv,
            va.Client(TOKEN, base_url=srv.url) as client,
        ):
            journal = tmp_path / f"{report.stem}.sqlite"
            async with va.BatchUploader(client, journal=journal, report=report) as batch:
                [result] = [r async for r in batch.run([job])]
        assert result.status is va.JobStatus.DONE, result.error
        assert stat.S_IMODE(report.stat().st_mode) == 0o600, report
