"""Hostile feeds, round four (issue 38): bounded work and memory while a feed streams
(a single huge token, a huge text, an item with thousands of subtitles, a feed larger
than its cap, a feed read once by the batch); a thumbnail url with a blank before it;
a feed address whose file name no file can have; a dry run that writes nothing."""

from __future__ import annotations

import io
import os
import sys
import tracemalloc
import uuid
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.pg import DSN
from vidapi_async.batch import jobs_from_source
from vidapi_async.batch._feed import download_feed, jobs_from_feed, jobs_from_feed_stream
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

HEAD = '<?xml version="1.0"?>\n<rss xmlns:media="http://search.yahoo.com/mrss/"><channel>\n'
TAIL = "</channel></rss>\n"
ITEM = (
    '<item><guid>{guid}</guid><media:content url="http://127.0.0.1:9/{guid}.mp4"/>{more}</item>\n'
)


def _item(guid: str, more: str = "") -> str:
    return ITEM.format(guid=guid, more=more)


class _Counted(io.BytesIO):
    """A feed's bytes, counting how many were read."""

    read_bytes = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.read_bytes += len(chunk)
        return chunk


@pytest.mark.parametrize(
    "token",
    [
        "<!--" + "x" * (4 << 20) + "-->",
        '<media:credit role="' + "r" * (4 << 20) + '">c</media:credit>',
    ],
    ids=["comment", "attribute"],
)
def test_a_single_huge_token_is_refused_before_it_is_read_whole(token: str) -> None:
    # expat 2.5 rescans a token from its start on every chunk: a token read whole is
    # quadratic; refused once it passes the bound, the work stays linear
    raw = _Counted((HEAD + _item("a", token) + TAIL).encode())
    with pytest.raises(va.InvalidArgumentError, match=r"feed\.xml line 3: .*longer than"):
        list(jobs_from_feed_stream(raw, "feed.xml", channel="news", categories=None))
    assert raw.read_bytes < (2 << 20)


def test_a_huge_description_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "feed.xml"
    text = "<description>" + "word " * (2 << 20) + "</description>"  # 10 MiB
    path.write_text(HEAD + _item("a", text) + TAIL, encoding="utf-8")
    tracemalloc.start()
    try:
        with pytest.raises(
            va.InvalidArgumentError, match=r"line 3 \(a\): description: longer than 64 KiB"
        ):
            list(jobs_from_source(str(path), channel="news"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (4 << 20), peak


def test_an_item_with_thousands_of_subtitles_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "feed.xml"
    subs = "".join(
        f'<media:subTitle lang="en" href="http://127.0.0.1:9/{n}.srt"/>' for n in range(5000)
    )
    path.write_text(HEAD + _item("a", subs) + TAIL, encoding="utf-8")
    with pytest.raises(va.InvalidArgumentError, match=r"line 3 \(a\): subtitles: .*at most 50"):
        list(jobs_from_source(str(path), channel="news"))


def test_a_feed_larger_than_its_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "feed.xml"
    items = "".join(
        _item(f"g{n}", "<description>" + "x" * 1000 + "</description>") for n in range(3000)
    )
    path.write_text(HEAD + items + TAIL, encoding="utf-8")
    assert path.stat().st_size > (2 << 20)
    with pytest.raises(va.InvalidArgumentError, match=r"feed\.xml: .*larger than 1 MiB"):
        list(jobs_from_feed(path, channel="news", max_bytes=1 << 20))
    assert len(list(jobs_from_feed(path, channel="news", max_bytes=8 << 20))) == 3000


async def test_a_feed_download_stops_at_its_cap(tmp_path: Path) -> None:
    from tests.integration.test_migrate_feed import FEEDS, serving  # noqa: F401 - the feed host's helpers

    body = (HEAD + _item("a", "<description>" + "x" * (3 << 20) + "</description>") + TAIL).encode()

    from aiohttp import web

    async def serve(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/rss+xml")

    folder = tmp_path / "dl"
    folder.mkdir()
    async with serving(serve) as host, Emulator() as emu, client_for(emu) as client:
        with pytest.raises(va.InvalidArgumentError, match=r"larger than 1 MiB"):
            await download_feed(client, f"{host}/big.xml", str(folder), max_bytes=1 << 20)
    assert list(folder.iterdir()) == []  # no partial feed left behind


@pytest.mark.parametrize(
    "thumb",
    [" https://127.0.0.1:9/a.jpg", "\thttps://127.0.0.1:9/a.jpg", "https://127.0.0.1:9/a.jpg "],
)
def test_a_thumbnail_with_a_blank_around_it_is_an_error_naming_the_item(
    tmp_path: Path, thumb: str
) -> None:
    path = tmp_path / "feed.xml"
    path.write_text(
        HEAD + _item("item-7", f'<media:thumbnail url="{thumb}"/>') + TAIL, encoding="utf-8"
    )
    with pytest.raises(va.InvalidArgumentError, match=r"line 3 \(item-7\): .*thumbnail.*blank"):
        list(jobs_from_source(str(path), channel="news"))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a%00b.xml", r"NUL"),
        ("a" * 300 + ".xml", r"255 bytes"),
        ("%2F..%2Fx.xml", r"/"),
        # the review of issue 38/39: control and format characters reached the output
        ("a%1b[31mb.xml", r"control or format character"),
        ("a%07.xml", r"control or format character"),
        ("a%0Ab.xml", r"control or format character"),
        ("a%E2%80%AEgpj.xml", r"control or format character"),  # right-to-left override
    ],
)
async def test_a_feed_address_whose_file_name_no_file_can_have_is_a_named_error(
    tmp_path: Path, name: str, message: str
) -> None:
    async with Emulator() as emu, client_for(emu) as client:
        with pytest.raises(va.InvalidArgumentError, match=message):
            await download_feed(client, f"http://127.0.0.1:9/{name}", str(tmp_path))
    assert list(tmp_path.iterdir()) == []


async def test_the_command_line_names_a_feed_address_no_file_can_have(
    emulator: Emulator, tmp_path: Path
) -> None:
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, _, err = await vidapi(
        "batch", "http://127.0.0.1:9/feed%00.xml", "--channel", "news",
        "--journal", str(tmp_path / "j.sqlite"), env=env,
    )  # fmt: skip
    assert code != 0 and "NUL" in err and "Traceback" not in err, err


COUNT_READS = """
import sys
from vidapi_async.batch import _feed
reads = []
real = _feed._Reader.__init__  # one reader per reading of the feed
def counted(self, *args, **kwargs):
    reads.append(1)
    real(self, *args, **kwargs)
_feed._Reader.__init__ = counted
from vidapi_async.cli import main
code = main(sys.argv[1:])
print(f"feed reads: {len(reads)}", file=sys.stderr)
sys.exit(code)
"""


async def test_the_batch_reads_a_feed_once(emulator: Emulator, tmp_path: Path) -> None:
    import asyncio

    path = tmp_path / "feed.xml"
    path.write_text(
        HEAD + "<item><guid>a</guid><media:player url='https://x.test/p'/></item>" + TAIL
    )
    env = {**os.environ, "VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    for extra in ((), ("--dry-run",)):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", COUNT_READS, "batch", str(path), "--channel", "news",
            "--journal", str(tmp_path / "j.sqlite"), *extra,
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        assert "feed reads: 1" in err.decode(), err.decode()


async def test_a_dry_run_writes_no_journal(emulator: Emulator, tmp_path: Path) -> None:
    path = tmp_path / "feed.xml"
    path.write_text(HEAD + _item("a") + TAIL)
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    before = sorted(os.listdir(tmp_path))
    code, out, err = await vidapi(
        "batch", str(path), "--channel", "news", "--journal", str(tmp_path / "j.sqlite"),
        "--dry-run", env=env,
    )  # fmt: skip
    assert code == 0, err
    assert "would create 1" in out
    assert sorted(os.listdir(tmp_path)) == before  # no journal, no lock, no -wal


async def test_a_dry_run_leaves_an_existing_journal_as_it_was(
    emulator: Emulator, tmp_path: Path
) -> None:
    import sqlite3

    journal = tmp_path / "j.sqlite"
    db = sqlite3.connect(journal)  # a version 1 journal: a run would migrate it
    db.executescript(
        "create table jobs (key text primary key, stage text not null, upload_url text, "
        "progress_url text, file_url text, video_id text, subtitles_done text not null, "
        "runs integer not null, error text, updated real not null);"
        "create table meta (name text primary key, value text);"
        "insert into meta values ('version', '1');"
    )
    db.close()
    os.chmod(journal, 0o600)
    path = tmp_path / "feed.xml"
    path.write_text(HEAD + _item("a") + TAIL)
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    data, listing = journal.read_bytes(), sorted(os.listdir(tmp_path))
    code, out, err = await vidapi(
        "batch", str(path), "--channel", "news", "--journal", str(journal), "--dry-run", env=env
    )
    assert code == 0, err
    assert "would create 1" in out
    assert journal.read_bytes() == data and sorted(os.listdir(tmp_path)) == listing


@pytest.mark.system
async def test_a_dry_run_creates_no_postgres_schema(emulator: Emulator, tmp_path: Path) -> None:
    psycopg = pytest.importorskip("psycopg")
    name = f"dry_{uuid.uuid4().hex[:12]}"
    try:
        admin = await psycopg.AsyncConnection.connect(DSN, autocommit=True)
    except psycopg.OperationalError:
        pytest.skip("no PostgreSQL at " + DSN)
    try:
        await admin.execute(f'create database "{name}"')
        dsn = DSN.rsplit("/", 1)[0] + "/" + name
        path = tmp_path / "feed.xml"
        path.write_text(HEAD + _item("a") + TAIL)
        env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
        code, out, err = await vidapi(
            "batch", str(path), "--channel", "news", "--journal", dsn, "--dry-run", env=env
        )
        assert code == 0, err
        assert "would create 1" in out
        async with await psycopg.AsyncConnection.connect(dsn) as conn:
            cur = await conn.execute(
                "select count(*) from information_schema.schemata where schema_name = 'vidapi'"
            )
            assert await cur.fetchone() == (0,)
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()


# --- the review of issue 38/39 ------------------------------------------------------------


@pytest.mark.parametrize("where", ["channel", "item"])
def test_deeply_nested_elements_are_refused_at_a_bounded_depth(where: str) -> None:
    """Memory grew with the depth (3M nested elements: 420 MB): at most 64 levels."""
    nested = "<x>" * 500_000
    if where == "channel":
        text = HEAD + nested
    else:
        text = HEAD + '<item><guid>a</guid><media:content url="http://127.0.0.1:9/a.mp4"/>' + nested
    raw = _Counted(text.encode())
    with pytest.raises(va.InvalidArgumentError, match=r"feed\.xml line \d+: .*deeper than 64"):
        list(jobs_from_feed_stream(raw, "feed.xml", channel="news", categories=None))
    assert raw.read_bytes <= (128 << 10)


def test_a_feed_nested_64_deep_is_read() -> None:
    deep = "<x>" * 60 + "</x>" * 60
    raw = io.BytesIO((HEAD + _item("a", deep) + TAIL).encode())
    jobs = list(jobs_from_feed_stream(raw, "feed.xml", channel="news", categories=None))
    assert [j.key for j in jobs] == ["a"]


@pytest.mark.parametrize("encoding", ["Shift_JIS", "UTF-7", "GBK", "EUC-JP"])
def test_a_feed_in_a_multi_byte_encoding_is_a_named_error(encoding: str) -> None:
    text = HEAD.replace('version="1.0"', f'version="1.0" encoding="{encoding}"') + _item("a") + TAIL
    with pytest.raises(va.InvalidArgumentError, match=rf"feed\.xml line 1: .*{encoding}"):
        list(
            jobs_from_feed_stream(
                io.BytesIO(text.encode()), "feed.xml", channel="news", categories=None
            )
        )
