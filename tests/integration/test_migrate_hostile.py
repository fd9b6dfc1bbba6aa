"""Hostile feeds, reports and journals (the attacker's fourth look at the migration):
a feed's thumbnails are http(s) urls only; a report never destroys the manifest, the
journal, a symlink's target or a file that is not a report; CSV cells a spreadsheet
would run are quoted; a corrupt journal metadata value is a named JournalError."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file
from vidapi_async.batch import jobs_from_source
from vidapi_async.batch._report import REPORT_COLUMNS, ReportWriter
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

HEAD = '<?xml version="1.0"?>\n<rss xmlns:media="http://search.yahoo.com/mrss/"><channel>\n'


def _feed(tmp_path: Path, body: str) -> str:
    path = tmp_path / "feed.xml"
    path.write_text(HEAD + body + "</channel></rss>\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("thumb", ["/etc/hostname", "../x", "file:///etc/hostname"])
async def test_a_feed_thumbnail_that_is_a_local_path_is_refused(tmp_path: Path, thumb: str) -> None:
    path = _feed(
        tmp_path,
        '<item>\n<guid>g</guid><media:content url="http://127.0.0.1:9/a.mp4"/>\n'
        f'<media:thumbnail url="{thumb}"/></item>\n',
    )
    with pytest.raises(
        va.InvalidArgumentError, match=r"feed\.xml line 3 \(g\): thumbnail: .*http"
    ) as info:
        list(jobs_from_source(path, channel="news"))
    assert thumb not in str(info.value)
    async with Emulator() as emu, client_for(emu) as client:
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
            with pytest.raises(va.InvalidArgumentError):
                _ = [r async for r in batch.run(jobs_from_source(path, channel="news"))]
        assert emu.videos() == []


def _manifest(tmp_path: Path, rows: str = "a.mp4,one\n") -> Path:
    make_file(tmp_path / "a.mp4", 1000)
    path = tmp_path / "jobs.csv"
    path.write_text("path,title\n" + rows, encoding="utf-8")
    return path


async def _batch(tmp_path: Path, manifest: Path, report: Path, **kwargs: object) -> list[str]:
    async with Emulator() as emu, client_for(emu) as client:
        journal = kwargs.pop("journal", tmp_path / "j.sqlite")
        async with va.BatchUploader(client, journal=journal, report=report) as batch:  # type: ignore[arg-type]
            jobs = jobs_from_source(str(manifest), channel="news")
            return [r.status.value async for r in batch.run(jobs)]


async def test_a_report_that_is_the_manifest_is_refused(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    before = manifest.read_bytes()
    with pytest.raises(va.InvalidArgumentError, match="report"):
        await _batch(tmp_path, manifest, manifest)
    assert manifest.read_bytes() == before


async def test_a_report_that_is_the_journal_is_refused(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    journal = tmp_path / "journal.csv"
    assert await _batch(tmp_path, manifest, tmp_path / "r.csv", journal=journal) == ["done"]
    before = journal.read_bytes()
    with pytest.raises(va.InvalidArgumentError, match="journal"):
        await _batch(tmp_path, manifest, journal, journal=journal)
    assert journal.read_bytes() == before


async def test_a_report_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    precious = tmp_path / "precious.txt"
    precious.write_text("precious\n")
    link = tmp_path / "report.csv"
    link.symlink_to(precious)
    with pytest.raises(va.InvalidArgumentError, match="symbolic link"):
        await _batch(tmp_path, manifest, link)
    assert precious.read_text() == "precious\n"


@pytest.mark.parametrize("name", ["report.csv", "report.jsonl"])
async def test_a_file_that_is_not_a_report_is_not_overwritten(tmp_path: Path, name: str) -> None:
    manifest = _manifest(tmp_path)
    other = tmp_path / name
    other.write_text("my own notes\nline two\n")
    with pytest.raises(va.InvalidArgumentError, match="not a report"):
        await _batch(tmp_path, manifest, other)
    assert other.read_text() == "my own notes\nline two\n"
    other.unlink()
    assert await _batch(tmp_path, manifest, other) == ["done"]
    assert await _batch(tmp_path, manifest, other) == ["skipped"]  # its own report: rewritten
    text = other.read_text()
    assert text.startswith("key,source," if name.endswith(".csv") else '{"key": ')
    assert text.count("\n") == (2 if name.endswith(".csv") else 1) and "\0" not in text


async def test_csv_report_cells_a_spreadsheet_would_run_are_quoted(tmp_path: Path) -> None:
    keys = ["=HYPERLINK(1)", "+1", "-1", "@SUM(1)", "plain"]
    manifest = tmp_path / "jobs.csv"
    make_file(tmp_path / "a.mp4", 1000)
    with manifest.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["path", "title", "key"])
        for key in keys:
            writer.writerow(["a.mp4", "t", key])
    report = tmp_path / "r.csv"
    assert await _batch(tmp_path, manifest, report) == ["done"] * len(keys)
    with report.open(newline="", encoding="utf-8") as f:
        written = [row["key"] for row in csv.DictReader(f)]
    assert sorted(written) == sorted(["'" + k for k in keys[:-1]] + ["plain"])
    jsonl = tmp_path / "r.jsonl"
    assert await _batch(tmp_path, manifest, jsonl) == ["skipped"] * len(keys)
    lines = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert sorted(row["key"] for row in lines) == sorted(keys)


async def test_csv_cells_starting_with_a_tab_or_cr_are_quoted(tmp_path: Path) -> None:
    writer = ReportWriter(tmp_path / "r.csv")
    await writer.open()
    try:
        await writer.write(
            dict.fromkeys(REPORT_COLUMNS, None) | {"key": "\tk", "source": "\r=1", "status": "ok"}
        )
    finally:
        await writer.close()
    with (tmp_path / "r.csv").open(newline="", encoding="utf-8") as f:
        [row] = csv.DictReader(f)
    assert (row["key"], row["source"], row["status"]) == ("'\tk", "'\r=1", "ok")


async def test_the_command_line_refuses_a_report_that_is_its_source(
    emulator: Emulator, tmp_path: Path
) -> None:
    manifest = _manifest(tmp_path)
    before = manifest.read_bytes()
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    journal = str(tmp_path / "j.sqlite")
    code, _, err = await vidapi(
        "batch", str(manifest), "--channel", "news", "--journal", journal,
        "--report", str(manifest), env=env,
    )  # fmt: skip
    assert code != 0 and "report" in err and "source" in err, err
    assert manifest.read_bytes() == before
    assert emulator.videos() == []


async def test_a_rerun_leaves_a_playlist_the_user_chose_alone(tmp_path: Path) -> None:
    make_file(tmp_path / "a.mp4", 1000)
    manifest = tmp_path / "jobs.csv"
    journal = tmp_path / "j.sqlite"

    async def run(client: va.Client, playlists: str) -> va.JobResult:
        manifest.write_text(f'key,path,title,playlists\nk1,a.mp4,T,"{playlists}"\n')
        async with va.BatchUploader(client, journal=journal) as batch:
            [result] = [r async for r in batch.run(jobs_from_source(str(manifest), channel="news"))]
        return result

    async def members(client: va.Client) -> dict[str | None, list[str]]:
        return {
            p.name: [v.id async for v in client.playlists.videos(p.id)]
            async for p in client.playlists.mine()
        }

    async with Emulator() as emu, client_for(emu) as client:
        vid = (await run(client, "A")).video_id
        assert vid is not None
        by_hand = await client.playlists.create(name="B")
        await client.playlists.add_video(by_hand.id, vid)
        assert (await run(client, "A;B")).status is va.JobStatus.UPDATED
        assert await members(client) == {"A": [vid], "B": [vid]}
        assert (await run(client, "A")).status is va.JobStatus.UPDATED
        assert await members(client) == {"A": [vid], "B": [vid]}  # B: the user's
        assert (await run(client, "A;C")).status is va.JobStatus.UPDATED
        assert (await run(client, "A")).status is va.JobStatus.UPDATED
        assert await members(client) == {"A": [vid], "B": [vid], "C": []}  # C: the batch's
        assert (await run(client, "A")).status is va.JobStatus.SKIPPED


@pytest.mark.parametrize(
    "bad",
    ["not json", "[1, 2]", "123", "NaN", '{"playlists": 5}', '{"added": "A"}', '{"kept": 1}'],
)
async def test_a_corrupt_metadata_in_the_journal_is_a_named_error(tmp_path: Path, bad: str) -> None:
    make_file(tmp_path / "a.mp4", 1000)
    manifest = tmp_path / "jobs.csv"
    manifest.write_text("key,path,title,playlists\nk1,a.mp4,T,A\n")
    journal = tmp_path / "j.sqlite"
    async with Emulator() as emu, client_for(emu) as client:
        async with va.BatchUploader(client, journal=journal) as batch:
            _ = [r async for r in batch.run(jobs_from_source(str(manifest), channel="news"))]
        db = sqlite3.connect(journal)
        with db:
            db.execute("update jobs set metadata = ?", (bad,))
        db.close()
        manifest.write_text("key,path,title,playlists\nk1,a.mp4,T2,B\n")
        with pytest.raises(va.JournalError, match=r"k1.*metadata"):
            async with va.BatchUploader(client, journal=journal) as batch:
                _ = [r async for r in batch.run(jobs_from_source(str(manifest), channel="news"))]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '<item><guid>a</guid><media:content url="http://127.0.0.1:9/a.mp4"/>\n'
            '<item><guid>b</guid><media:content url="http://127.0.0.1:9/b.mp4"/></item>'
            "</item>\n",
            r"line 4: an item inside an item",
        ),
        (
            '<item><guid>a</guid><media:content url="http://127.0.0.1:9/'
            + "a" * (9 << 10)
            + '.mp4"/></item>\n',
            r"line 3: .*longer than",
        ),
    ],
)
def test_a_hostile_feed_is_refused_naming_its_line(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(va.InvalidArgumentError, match=message):
        list(jobs_from_source(_feed(tmp_path, body), channel="news"))


@pytest.mark.parametrize(
    "xml",
    [
        '<rss xmlns="urn:x"><channel><item><guid>a</guid></item></channel></rss>',
        "<rss><channel><title>empty</title></channel></rss>",
    ],
)
def test_a_feed_with_no_items_is_an_error_naming_it(tmp_path: Path, xml: str) -> None:
    path = tmp_path / "feed.xml"
    path.write_text(xml, encoding="utf-8")
    with pytest.raises(va.InvalidArgumentError, match=r"feed\.xml.*no item"):
        list(jobs_from_source(str(path), channel="news"))
