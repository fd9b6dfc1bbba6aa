"""A library migrated through a manifest: every field, the thumbnail, subtitles and
playlists land on the emulator as written; a re-run after an edit updates in place."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file, stored_bytes
from tests.wire import Reply, WireServer
from vidapi_async.batch import jobs_from_source
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

SRT = "1\n00:00:00,500 --> 00:00:02,000\nHello\n\n"
JPEG = b"\xff\xd8\xff" + b"\0" * 64
HEADER = [
    "key", "path", "title", "channel", "description", "tags", "language", "published",
    "private", "is_created_for_kids", "explicit", "publish_date", "expiry_date",
    "geoblocking", "thumbnail", "subtitles", "playlists",
]  # fmt: skip


def library(folder: Path, images: str) -> list[dict[str, str]]:
    """Two videos with every field, a thumbnail each (a local image, an http url on
    ``images``), a subtitle each and playlists."""
    folder.mkdir(exist_ok=True)
    make_file(folder / "a.mp4", 5000)
    make_file(folder / "b.mp4", 6000)
    (folder / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    (folder / "en.srt").write_text(SRT, encoding="utf-8")
    common = {
        "channel": "news",
        "language": "fr",
        "published": "true",
        "is_created_for_kids": "false",
        "subtitles": "en=en.srt",
    }
    return [
        {
            **common,
            "key": "old-1",
            "path": "a.mp4",
            "title": "First",
            "description": "line one\nline two",
            "tags": "cats;funny",
            "private": "false",
            "explicit": "false",
            "publish_date": "2031-01-02T03:04:05+01:00",
            "expiry_date": "2032-01-01T00:00:00Z",
            "geoblocking": "deny;fr;de",
            "thumbnail": "a.png",
            "playlists": "Best of;Cats",
        },
        {
            **common,
            "key": "old-2",
            "path": "b.mp4",
            "title": "Second",
            "description": "two",
            "tags": "dogs",
            "private": "true",
            "explicit": "true",
            "publish_date": "",
            "expiry_date": "",
            "geoblocking": "allow;us",
            "thumbnail": f"{images}/b.jpg",
            "playlists": "Cats",
        },
    ]


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def as_jsonl_row(row: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in row.items():
        if name in ("tags", "playlists", "geoblocking"):
            out[name] = value.split(";") if value else []
        elif name in ("published", "private", "is_created_for_kids", "explicit"):
            out[name] = value == "true"
        elif name == "subtitles":
            out[name] = dict(p.split("=", 1) for p in value.split(";"))
        elif value:
            out[name] = value
    return out


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(as_jsonl_row(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jobs(manifest: Path) -> Iterator[va.UploadJob]:
    return jobs_from_source(str(manifest), channel=None)


def playlists_of(emu: Emulator) -> dict[str, list[str]]:
    """Each playlist's name and the titles of its videos, in order."""
    titles = {v["id"]: v["title"] for v in emu.videos()}
    return {p["name"]: [titles[v] for v in p["videos"]] for p in emu.state.all("playlist")}


def assert_landed(emu: Emulator, rows: list[dict[str, str]]) -> None:
    videos = {v["title"]: v for v in emu.videos()}
    assert len(videos) == len(emu.videos()) == len(rows)
    first, second = videos["First"], videos["Second"]
    assert first["description"] == "line one\nline two"
    assert first["tags"][:2] == ["cats", "funny"]
    assert first["language"] == "fr"
    assert first["private"] is False and first["explicit"] is False
    assert first["publish_date"] == int(datetime(2031, 1, 2, 2, 4, 5, tzinfo=UTC).timestamp())
    assert first["expiry_date"] == int(datetime(2032, 1, 1, tzinfo=UTC).timestamp())
    assert first["geoblocking"] == ["deny", "fr", "de"]
    assert first["thumbnail_url"].startswith(emu.upload_base + "/")  # the image, uploaded
    assert second["private"] is True and second["explicit"] is True
    assert second["publish_date"] is None and second["geoblocking"] == ["allow", "us"]
    # the url's image, carried by the client: the platform never fetches the source
    assert stored_bytes(emu, second["thumbnail_url"]) == JPEG
    for video in (first, second):
        subs = list(emu.state.children("subtitle", video["id"]))
        assert [s["language"] for s in subs] == ["en"]
    assert playlists_of(emu) == {"Best of": ["First"], "Cats": ["First", "Second"]}


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
async def test_a_manifest_with_every_field_lands_as_written_and_a_rerun_converges(
    tmp_path: Path, kind: str
) -> None:
    async with (
        WireServer(lambda seen: Reply(200, JPEG)) as images,
        Emulator() as emu,
        client_for(emu) as client,
    ):
        rows = library(tmp_path / "lib", images.url)
        write = write_csv if kind == "csv" else write_jsonl
        manifest = write(tmp_path / "lib" / f"m.{kind}", rows)
        journal = tmp_path / "j.sqlite"
        report = tmp_path / "report.csv"
        async with va.BatchUploader(client, journal=journal, report=report) as batch:
            results = [r async for r in batch.run(read_jobs(manifest))]
        assert [r.status for r in results] == [va.JobStatus.DONE] * 2, [r.error for r in results]
        assert_landed(emu, rows)
        # the uploaded thumbnail is served at its address, as uploaded
        first = next(v for v in emu.videos() if v["title"] == "First")
        async with aiohttp.ClientSession() as http, http.get(first["thumbnail_url"]) as got:
            assert got.status == 200
            assert await got.read() == (tmp_path / "lib" / "a.png").read_bytes()
        files_before = len(list(emu.state.all("file")))
        with report.open(newline="") as f:
            mapped = {r["key"]: r for r in csv.DictReader(f)}
        ids = {r.key: r.video_id for r in results}
        assert {k: r["video_id"] for k, r in mapped.items()} == ids
        assert all(r["status"] == "done" for r in mapped.values())
        for row in mapped.values():  # as the API gives them (asked once, then written)
            video = await client.get_video(row["video_id"], ["url", "embed_url"])
            assert (row["url"], row["embed_url"]) == (video.url, video.embed_url)
            assert row["video_id"] in row["url"]

        # A tag changed by hand on the platform: not in the edit, so not sent again.
        first = next(v for v in emu.videos() if v["title"] == "First")
        first["tags"] = ["kept"]
        emu.state.put("video", first["id"], first)
        # The edit: a new title and description, out of one playlist, into another.
        rows[0] = {**rows[0], "title": "First, fixed", "playlists": "Cats;New"}
        rows[1] = {**rows[1], "description": "two, fixed"}
        write(manifest, rows)
        async with va.BatchUploader(client, journal=journal) as batch:
            plan = await batch.plan(read_jobs(manifest))
            assert plan == va.BatchPlan(create=(), update=("old-1", "old-2"), skip=())
            logged = len(emu.requests)
            again = [r async for r in batch.run(read_jobs(manifest))]
        assert [r.status for r in again] == [va.JobStatus.UPDATED] * 2
        assert {r.key: r.video_id for r in again} == ids  # the same videos
        sent = emu.requests[logged:]
        assert not [r for r in sent if r.host == "upload"]  # no file sent again
        assert len(list(emu.state.all("file"))) == files_before
        titles = {v["id"]: v for v in emu.videos()}
        assert titles[ids["old-1"]]["title"] == "First, fixed"
        assert titles[ids["old-1"]]["tags"] == ["kept"]  # the changed fields only
        assert titles[ids["old-2"]]["description"] == "two, fixed"
        assert playlists_of(emu) == {
            "Best of": [],
            "Cats": ["First, fixed", "Second"],
            "New": ["First, fixed"],
        }
        # a third run has nothing to send
        async with va.BatchUploader(client, journal=journal) as batch:
            logged = len(emu.requests)
            third = [r async for r in batch.run(read_jobs(manifest))]
        assert [r.status for r in third] == [va.JobStatus.SKIPPED] * 2
        assert not [r for r in emu.requests[logged:] if r.method != "GET"]


def test_an_unknown_column_is_named_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "m.csv"
    bad.write_text("path,title,descripton\na.mp4,A,x\n", encoding="utf-8")
    with pytest.raises(va.UsageError, match=r"line 1: unknown column\(s\) 'descripton'"):
        list(read_jobs(bad))
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text(
        '{"path": "a.mp4", "channel": "news"}\n{"path": "b.mp4", "channel": "news", "tgas": []}\n',
        encoding="utf-8",
    )
    with pytest.raises(va.InvalidArgumentError, match=r"m.jsonl line 2: unknown column/key 'tgas'"):
        list(read_jobs(jsonl))


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("publish_date", "2031-01-02T03:04:05", "has no offset"),
        ("publish_date", "next week", "not an ISO 8601 date"),
        ("language", "french", "not an ISO 639-1 code"),
        ("geoblocking", "deny;france", "not an ISO 3166-1"),
        ("private", "maybe", "expected true or false"),
        ("tags", "a,b", "cannot hold a comma"),
    ],
)
def test_a_bad_value_is_named_with_its_line(
    tmp_path: Path, column: str, value: str, message: str
) -> None:
    manifest = write_csv(
        tmp_path / "m.csv",
        [
            {"path": "a.mp4", "channel": "news", column: ""},
            {"path": "b.mp4", "channel": "news", column: value},
        ],
    )
    with pytest.raises(va.InvalidArgumentError, match=f"m.csv line 3: .*{message}"):
        list(read_jobs(manifest))


def test_a_job_checks_its_metadata_with_the_clients_own_rules() -> None:
    with pytest.raises(va.InvalidArgumentError, match="description"):
        va.UploadJob(path="a.mp4", title="t", channel="news", description="x" * 3001)
    with pytest.raises(va.InvalidArgumentError, match="naive datetime"):
        va.UploadJob(path="a.mp4", title="t", channel="news", publish_date=datetime(2030, 1, 1))
    with pytest.raises(va.InvalidArgumentError, match="thumbnail"):
        va.UploadJob(path="a.mp4", title="t", channel="news", thumbnail="http://")
    with pytest.raises(va.InvalidArgumentError, match="playlists"):
        va.UploadJob(path="a.mp4", title="t", channel="news", playlists=["ok", " "])
    job = va.UploadJob(path="a.mp4", title="t", channel="news", tags=["a", "b"])
    assert job.tags == ("a", "b") and hash(job)


async def test_what_a_rerun_cannot_change_is_said_not_applied_silently(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clip = make_file(tmp_path / "a.mp4", 3000)
    journal = tmp_path / "j.sqlite"
    job = va.UploadJob(path=clip, key="k", title="T", channel="news")
    async with Emulator() as emu, client_for(emu) as client:
        async with va.BatchUploader(client, journal=journal) as batch:
            [done] = [r async for r in batch.run([job])]
        protected = va.UploadJob(path=clip, key="k", title="T", channel="news", password="pw99")
        async with va.BatchUploader(client, journal=journal) as batch:
            assert (await batch.plan([protected])).skip == ("k",)
            logged = len(emu.requests)
            [again] = [r async for r in batch.run([protected])]
        assert again.status is va.JobStatus.SKIPPED
        assert not [r for r in emu.requests[logged:] if r.method != "GET"]
        assert "a re-run does not change its password (not applied" in caplog.text
        assert "pw99" not in caplog.text
        [video] = emu.videos()
        assert video["id"] == done.video_id and video.get("password") is None


async def test_another_password_on_a_rerun_is_said_not_applied(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The fresh user's look: only giving or removing a password was said; another
    password was skipped in silence (the journal kept only whether one was given). It
    keeps a salted digest, never the password: another one is said, the same one not."""
    clip = make_file(tmp_path / "a.mp4", 3000)
    journal = tmp_path / "j.sqlite"

    def job(password: str) -> va.UploadJob:
        return va.UploadJob(path=clip, key="k", title="T", channel="news", password=password)

    async with Emulator() as emu, client_for(emu) as client:
        async with va.BatchUploader(client, journal=journal) as batch:
            [done] = [r async for r in batch.run([job("s3cret-one")])]
        async with va.BatchUploader(client, journal=journal) as batch:
            [same] = [r async for r in batch.run([job("s3cret-one")])]
        assert "does not change its password" not in caplog.text
        async with va.BatchUploader(client, journal=journal) as batch:
            [other] = [r async for r in batch.run([job("s3cret-two")])]
        [video] = emu.videos()
    assert done.status is va.JobStatus.DONE
    assert (same.status, other.status) == (va.JobStatus.SKIPPED, va.JobStatus.SKIPPED)
    assert "a re-run does not change its password (not applied" in caplog.text
    assert video["password"] == "s3cret-one"  # the platform keeps the first
    for secret in ("s3cret-one", "s3cret-two"):
        assert secret not in caplog.text
        assert secret.encode() not in journal.read_bytes()


async def test_a_dry_run_refuses_a_missing_file_and_an_unknown_channel_as_the_run_does(
    tmp_path: Path, emulator: Emulator
) -> None:
    """The fresh user's look: ``--dry-run`` planned ``create`` and exited 0 for a row
    whose file is not there and one whose channel is no category, which the run fails
    (exit 6). The plan reads the disk and the category list, and writes nothing."""
    make_file(tmp_path / "a.mp4", 3000)
    manifest = tmp_path / "b.csv"
    manifest.write_text(
        "key,path,title,channel\nfine,a.mp4,T1,news\nb4,nope.mp4,T4,news\nb6,a.mp4,T6,bogus\n",
        encoding="utf-8",
    )
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    journal = tmp_path / "j.sqlite"
    code, out, err = await vidapi(
        "batch", str(manifest), "--dry-run", "--json", "--journal", str(journal), env=env
    )
    assert code == 6, (out, err)
    plan = json.loads(out)
    assert plan["create"] == ["fine"] and sorted(plan["refuse"]) == ["b4", "b6"], plan
    assert "no such file" in plan["refused_sources"]["b4"], plan
    assert "is not a category" in plan["refused_sources"]["b6"], plan
    assert not journal.exists() and emulator.videos() == []


async def test_a_runs_json_holds_the_rows_that_gave_no_job(
    tmp_path: Path, emulator: Emulator
) -> None:
    """The fresh user's look: ``vidapi --json batch`` listed the jobs only; its bad rows
    were said on stderr alone (its dry run has ``left_out``). Each row that gave no job
    is an object of the array too, with its key where it has one."""
    make_file(tmp_path / "a.mp4", 3000)
    manifest = tmp_path / "bad.csv"
    manifest.write_text(
        "key,path,title,channel,published\nfine,a.mp4,T1,news,\nk2,a.mp4,T2,news,maybe\n",
        encoding="utf-8",
    )
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, out, err = await vidapi(
        "--json", "batch", str(manifest), "--journal", str(tmp_path / "j.sqlite"), env=env
    )
    assert code == 6, (out, err)
    items = {item["key"]: item for item in json.loads(out)}
    assert items["fine"]["status"] == "done"
    assert items["k2"]["status"] == "failed" and items["k2"]["video_id"] is None
    assert "published" in items["k2"]["error"] and "line 3" in items["k2"]["path"]


@pytest.mark.parametrize("name", ["library.csv", "library.jsonl", "feed.xml", "videos"])
def test_a_source_that_does_not_exist_is_named_as_missing(tmp_path: Path, name: str) -> None:
    """The fresh user's look at issue 37: a missing manifest was 'not a folder, a .csv or
    .jsonl manifest or a .xml/.rss feed', which it was, by its name."""
    missing = tmp_path / name
    with pytest.raises(va.UsageError) as caught:
        list(jobs_from_source(str(missing), channel=None))
    assert f"{missing}: no such file or folder" in str(caught.value)
