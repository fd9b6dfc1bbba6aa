"""Objects of an S3-compatible store as sources (issue 42), against moto's server (a
process of its own on 127.0.0.1, one per test session: ``tests/s3_store.py``) and the
emulator as the platform. Checked: bytes stored are the object's, byte for byte, in
either mode; a chunked upload reads its ranges with Range GETs, several at once; an
object replaced during an upload fails it (If-Match), never a mixed file; errors are
typed and name the object; no credential or signature reaches any output."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import stored_bytes
from tests.s3_store import (  # noqa: F401
    KEY_ID,
    SECRET,
    Store,
    moto_endpoint_fixture,
    store_env,
    store_fixture,
    upload_peak,
)
from vidapi_async import _s3
from vidapi_async.batch import jobs_from_manifest
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

DATA = os.urandom(1_300_000)
PIECE = 256 * 1024


class Stop(Exception):
    """Raised by a progress callback: an upload stopped part-way."""


def spy_on_gets(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The first byte of each GET of an object, as they are made."""
    opened: list[int] = []
    real_open = _s3.ObjectStream._open

    async def spy(self: _s3.ObjectStream) -> object:
        opened.append(self._first)
        return await real_open(self)

    monkeypatch.setattr(_s3.ObjectStream, "_open", spy)
    return opened


async def stopped_after_two(
    client: va.Client, source: va.S3Object, session: va.UploadSession
) -> None:
    """A chunked upload of ``source`` to ``session``, stopped once two ranges are in."""
    with pytest.raises(Stop):
        await client.upload_file(
            source,
            chunked=True,
            range_size=PIECE,
            workers=1,
            upload_session=session,
            progress=stop_after_two,
        )


def stop_after_two(done: int, total: int) -> None:
    """A progress callback that stops the upload once two ranges are acknowledged."""
    if done >= 2 * PIECE:
        raise Stop


async def test_an_object_streams_single_shot_byte_for_byte(
    store: Store, emulator: Emulator
) -> None:
    bucket = store.bucket()
    store.put(bucket, "shows/ep 1.mp4", DATA)
    async with client_for(emulator) as client:
        by_name = await client.upload_file(f"s3://{bucket}/shows/ep 1.mp4", chunked=False)
        by_object = await client.upload_file(va.S3Object(bucket, "shows/ep 1.mp4"))
    assert stored_bytes(emulator, by_name.url) == DATA
    assert stored_bytes(emulator, by_object.url) == DATA
    assert [f["name"] for f in emulator.state.all("file")] == ["ep 1.mp4", "ep 1.mp4"]


async def test_upload_video_takes_an_object(store: Store, emulator: Emulator) -> None:
    bucket = store.bucket()
    store.put(bucket, "a/clip.webm", DATA)
    async with client_for(emulator) as client:
        one = await client.upload_video(f"s3://{bucket}/a/clip.webm", title="One", channel="news")
        two = await client.upload_video(
            va.S3Object(bucket, "a/clip.webm"), title="Two", channel="news"
        )
    assert {v["title"] for v in emulator.videos()} == {"One", "Two"}
    assert one.id != two.id
    for record in emulator.state.all("file"):
        assert Path(record["path"]).read_bytes() == DATA


async def test_a_chunked_upload_reads_ranges_in_parallel(
    store: Store, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = store.bucket()
    store.put(bucket, "big.mov", DATA)
    opened: list[tuple[int, int]] = []
    in_flight = [0, 0]  # now, most at once
    real_open = _s3.ObjectStream._open

    async def spy(self: _s3.ObjectStream) -> object:
        opened.append((self._first, self._length))
        in_flight[0] += 1
        in_flight[1] = max(in_flight)
        try:
            body = await real_open(self)
            await asyncio.sleep(0.05)  # keep it open: the other workers' GETs overlap
            return body
        finally:
            in_flight[0] -= 1

    monkeypatch.setattr(_s3.ObjectStream, "_open", spy)
    async with client_for(emulator) as client:
        uploaded = await client.upload_file(
            f"s3://{bucket}/big.mov", chunked=True, range_size=256 * 1024, workers=3
        )
    assert stored_bytes(emulator, uploaded.url) == DATA
    assert sorted(opened) == [
        (first, min(256 * 1024, len(DATA) - first)) for first in range(0, len(DATA), 256 * 1024)
    ]
    assert in_flight[1] > 1


async def test_an_object_replaced_during_the_upload_fails_it(
    store: Store, emulator: Emulator
) -> None:
    bucket = store.bucket()
    store.put(bucket, "v.mp4", DATA)

    def progress(done: int, total: int) -> None:
        store.put(bucket, "v.mp4", DATA[::-1])  # another version, same size

    async with client_for(emulator, retry=va.NO_RETRY) as client:
        with pytest.raises(va.FileChangedError, match="changed during the upload") as info:
            await client.upload_file(
                f"s3://{bucket}/v.mp4",
                chunked=True,
                range_size=256 * 1024,
                workers=1,
                progress=progress,
            )
    assert info.value.path == f"s3://{bucket}/v.mp4"
    assert list(emulator.state.all("file")) == []  # never completed: no mixed file


async def test_errors_are_typed_and_name_the_object_only(store: Store, emulator: Emulator) -> None:
    bucket = store.bucket()
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        with pytest.raises(va.SourceError, match=f"s3://{bucket}/nope.mp4") as info:
            await client.upload_file(f"s3://{bucket}/nope.mp4")
        assert info.value.status == 404
        with pytest.raises(va.InvalidArgumentError, match="s3://BUCKET/KEY"):
            await client.upload_file("s3://just-a-bucket")
        with pytest.raises(va.InvalidArgumentError, match="size"):
            await client.upload_file(f"s3://{bucket}/x.mp4", size=3)
    for text in (str(info.value), repr(info.value)):
        assert SECRET not in text and KEY_ID not in text


async def test_each_store_error_says_what_to_check(
    store: Store, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing object, a missing bucket, no endpoint, no credentials: each error says
    in words what went wrong and what to check, never only the SDK's error class."""
    bucket = store.bucket()
    async with client_for(emulator, retry=va.NO_RETRY) as client:

        async def error_of(source: str) -> str:
            monkeypatch.setattr(_s3, "_SESSION", None)
            with pytest.raises(va.SourceError) as info:
                await client.upload_file(source)
            return str(info.value)

        missing = await error_of(f"s3://{bucket}/nope.mp4")
        assert "no such object" in missing and "or no such bucket" in missing
        monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
        unreachable = await error_of(f"s3://{bucket}/nope.mp4")
        assert "could not connect" in unreachable and "AWS_ENDPOINT_URL" in unreachable
        monkeypatch.setenv("AWS_ENDPOINT_URL", store.endpoint)
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
        anonymous = await error_of(f"s3://{bucket}/nope.mp4")
        assert "no AWS credentials" in anonymous and "AWS_ACCESS_KEY_ID" in anonymous
    for text in (missing, unreachable, anonymous):
        assert SECRET not in text and KEY_ID not in text


async def test_without_the_extra_the_error_says_what_to_install(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_s3, "_SESSION", None)
    monkeypatch.setitem(sys.modules, "aiobotocore", None)
    monkeypatch.setitem(sys.modules, "aiobotocore.session", None)
    async with client_for(emulator) as client:
        with pytest.raises(va.MissingExtraError, match=r'pip install "vidapi-async\[s3\]"') as info:
            await client.upload_file("s3://bucket/key.mp4")
    assert info.value.extra == "s3"
    assert isinstance(info.value, va.UsageError)


@pytest.mark.parametrize(
    ("key", "content_type", "video"),
    [
        ("a/b/clip.MP4", None, True),
        ("clip.mkv", "application/octet-stream", True),
        ("raw-take", "video/quicktime", True),
        ("raw-take", "application/x-matroska", True),
        ("notes.txt", "text/plain", False),
        ("raw-take", "application/octet-stream", False),
        ("poster.jpg", "image/jpeg", False),
        ("odd/.mp4", None, True),  # a name that is its extension only
        ("odd/.MOV", "application/octet-stream", True),
        ("odd/.", "text/plain", False),
    ],
)
def test_what_counts_as_a_video(key: str, content_type: str | None, video: bool) -> None:
    assert (_s3.video_verdict(key, content_type) is None) is video


def test_object_names() -> None:
    obj = va.S3Object.from_url("s3://bkt/a/b c.mp4")
    assert (obj.bucket, obj.key, obj.name, str(obj)) == ("bkt", "a/b c.mp4", "b c.mp4", obj.url)
    for bad in ("s3://bkt/", "s3:///k", "s3://bkt/dir/", "http://x/y", "s3://b/a\nb"):
        with pytest.raises(va.InvalidArgumentError):
            va.S3Object.from_url(bad)


async def test_a_bucket_prefix_migrates_with_a_report_and_no_secret_anywhere(
    store: Store, emulator: Emulator, tmp_path: Path
) -> None:
    bucket = store.bucket()
    files = {
        "lib/a.mp4": os.urandom(200_000),
        "lib/deep/er/b.mov": os.urandom(300_000),
        "lib/no-extension": os.urandom(100_000),
    }
    for key, data in files.items():
        store.put(bucket, key, data, "video/mp4" if key == "lib/no-extension" else None)
    store.put(bucket, "lib/readme.txt", b"hello", "text/plain")
    store.put(bucket, "lib/blob", b"\0" * 10, "application/octet-stream")
    store.put(bucket, "elsewhere/c.mp4", b"x" * 1000)
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    journal, report = tmp_path / "j.sqlite", tmp_path / "report.csv"
    args = ["-vv", "batch", f"s3://{bucket}/lib/", "--channel", "news"]
    args += ["--journal", str(journal), "--report", str(report), "--chunked", "--workers", "2"]
    code, out, err = await vidapi(*args, env=env)
    assert code == 0, err
    videos = emulator.videos()
    assert sorted(v["title"] for v in videos) == ["a", "b", "no-extension"]
    stored = sorted(Path(f["path"]).read_bytes() for f in emulator.state.all("file"))
    assert stored == sorted(files.values())  # byte for byte
    assert f"s3://{bucket}/lib/readme.txt: not a video" in out + err
    assert f"s3://{bucket}/lib/blob: not a video" in out + err
    rows = report.read_text(encoding="utf-8")
    for key in files:
        assert f"s3://{bucket}/{key}" in rows  # keyed by its s3:// name
    # a second run skips every job
    code, out2, err2 = await vidapi("--json", *args[1:], env=env)
    assert code == 0, err2
    assert {r["status"] for r in json.loads(out2)} == {"skipped"}
    with sqlite3.connect(journal) as db:
        keys = sorted(k for (k,) in db.execute("select key from jobs"))
        dump = "\n".join(db.iterdump())
    assert keys == sorted(f"s3://{bucket}/{key}" for key in files)
    db.close()
    tags = json.dumps(videos)
    for text in (out, err, out2, err2, rows, dump, tags, journal.read_bytes().decode("latin-1")):
        assert SECRET not in text
        assert KEY_ID not in text  # the access key id is in every signature
    assert "Signature=" not in err and "AWS4-HMAC" not in err


async def test_an_application_logging_everything_gets_no_signature(
    store: Store, emulator: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    caplog.set_level(logging.DEBUG)  # the root logger: every library's debug lines
    bucket = store.bucket()
    store.put(bucket, "k.mp4", DATA)
    caplog.clear()  # the test's own filling of the bucket logged its signed requests
    async with client_for(emulator) as client:
        await client.upload_file(f"s3://{bucket}/k.mp4", chunked=True, range_size=512 * 1024)
    text = "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records)
    assert "k.mp4" in text  # the upload was logged
    assert SECRET not in text
    assert KEY_ID not in text
    assert "Signature=" not in text


@pytest.mark.system
@pytest.mark.parametrize("mode", ["single", "chunked"])
async def test_a_large_object_streams_with_flat_memory(
    store: Store, emulator: Emulator, moto_endpoint: str, mode: str
) -> None:
    bucket = store.bucket()
    MiB = 1024 * 1024
    store.put(bucket, "small.mp4", os.urandom(MiB))
    store.put(bucket, "large.mp4", os.urandom(96 * MiB))
    env = store_env(moto_endpoint)
    peaks = {}
    for name in ("small", "large"):
        peaks[name] = await asyncio.to_thread(
            upload_peak, emulator.base_url, emulator.token, f"s3://{bucket}/{name}.mp4", mode, env
        )
    sizes = sorted(os.path.getsize(f["path"]) for f in emulator.state.all("file"))
    assert sizes == [MiB, 96 * MiB]
    assert peaks["large"] - peaks["small"] < 40 * MiB, peaks


async def test_an_interrupted_chunked_upload_resumes_with_the_missing_ranges_only(
    store: Store, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = store.bucket()
    store.put(bucket, "long.mp4", DATA)
    piece = PIECE
    opened = spy_on_gets(monkeypatch)
    etag = store.s3.head_object(Bucket=bucket, Key="long.mp4")["ETag"]
    source = va.S3Object(bucket, "long.mp4", etag=etag)  # resumed: the same version
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        session = await client.uploads.get_session()
        await stopped_after_two(client, source, session)
        assert opened == [0, piece]
        opened.clear()
        uploaded = await client.upload_file(
            source, range_size=piece, workers=1, upload_session=session, resume=True
        )
    assert stored_bytes(emulator, uploaded.url) == DATA
    assert opened == list(range(2 * piece, len(DATA), piece))  # only what was missing


async def test_a_manifest_names_objects_beside_local_files(
    store: Store, emulator: Emulator, tmp_path: Path
) -> None:
    bucket = store.bucket()
    store.put(bucket, "in/one.mp4", DATA)
    local = tmp_path / "two.mp4"
    local.write_bytes(DATA[::-1])
    manifest = tmp_path / "jobs.csv"
    manifest.write_text(
        "path,url,title,channel\n"
        f",s3://{bucket}/in/one.mp4,One,news\n"
        "two.mp4,,Two,news\n"
        f",s3://{bucket}/in/missing.mp4,Three,news\n",
        encoding="utf-8",
    )
    async with (
        client_for(emulator, retry=va.NO_RETRY) as client,
        va.BatchUploader(client, journal=str(tmp_path / "j.sqlite")) as batch,
    ):
        results = [r async for r in batch.run(jobs_from_manifest(manifest, channel=None))]
    by_title = {r.job.title: r for r in results}
    assert by_title["One"].status is va.JobStatus.DONE
    assert by_title["Two"].status is va.JobStatus.DONE
    assert by_title["Three"].status is va.JobStatus.FAILED
    assert isinstance(by_title["Three"].error, va.SourceError)
    assert f"s3://{bucket}/in/missing.mp4" in str(by_title["Three"].error)
    stored = sorted(Path(f["path"]).read_bytes() for f in emulator.state.all("file"))
    assert stored == sorted([DATA, DATA[::-1]])


async def test_a_bad_endpoint_is_a_source_error(
    store: Store, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "not a url")
    async with client_for(emulator) as client:
        with pytest.raises(va.SourceError, match="no S3 client could be made"):
            await client.upload_file("s3://bucket/key.mp4")


async def test_jobs_from_bucket_skips_what_no_job_can_hold(store: Store) -> None:
    from vidapi_async.batch import jobs_from_bucket

    bucket = store.bucket()
    store.put(bucket, "p/fine.mp4", b"x" * 10)
    store.put(bucket, "p/odd\u200bname.mp4", b"x" * 10)  # a zero-width space: no key holds it
    store.put(bucket, "p/empty.mp4", b"")
    store.put(bucket, "p/poster.jpg", b"x" * 10)
    store.put(bucket, "q/other.mp4", b"x" * 10)
    skipped: list[tuple[str, str]] = []
    jobs = [
        job
        async for job in jobs_from_bucket(
            f"s3://{bucket}/p/", channel="news", skipped=lambda n, why: skipped.append((n, why))
        )
    ]
    assert [(j.key, j.url, j.title) for j in jobs] == [
        (f"s3://{bucket}/p/fine.mp4", f"s3://{bucket}/p/fine.mp4", "fine")
    ]
    names = {name: why for name, why in skipped}
    assert names.keys() == {
        f"s3://{bucket}/p/empty.mp4",
        f"s3://{bucket}/p/odd\\u200bname.mp4",
        f"s3://{bucket}/p/poster.jpg",
    }
    assert names[f"s3://{bucket}/p/empty.mp4"] == "empty"
    assert names[f"s3://{bucket}/p/poster.jpg"].startswith("not a video (a .jpg file")
    with pytest.raises(va.UsageError, match="--channel"):
        async for _ in jobs_from_bucket(f"s3://{bucket}/p/", channel=None):
            pass


async def test_a_resumed_batch_upload_of_a_replaced_object_sends_one_version(
    store: Store, emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stopped after some ranges, the object replaced (same size, other bytes):
    the next run does not resume with the new version's ranges, it starts over."""
    bucket = store.bucket()
    store.put(bucket, "r/long.mp4", DATA)
    piece = 256 * 1024
    real_open = _s3.ObjectStream._open

    async def stop_at_the_third(self: _s3.ObjectStream) -> object:
        if self._first >= 2 * piece:
            raise va.SourceError("stopped here", status=None)
        return await real_open(self)

    source = f"s3://{bucket}/r/long.mp4"
    journal = str(tmp_path / "j.sqlite")
    job = va.UploadJob(url=source, title="Long", channel="news")

    async def run() -> list[va.JobResult]:
        async with (
            client_for(emulator, retry=va.NO_RETRY) as client,
            va.BatchUploader(
                client, journal=journal, chunked=True, workers=1, range_size=piece
            ) as batch,
        ):
            return [r async for r in batch.run([job])]

    monkeypatch.setattr(_s3.ObjectStream, "_open", stop_at_the_third)
    assert [r.status for r in await run()] == [va.JobStatus.FAILED]
    monkeypatch.setattr(_s3.ObjectStream, "_open", real_open)
    store.put(bucket, "r/long.mp4", DATA[::-1])  # another version, the same size
    assert [r.status for r in await run()] == [va.JobStatus.DONE]
    assert len(emulator.videos()) == 1
    stored = [Path(f["path"]).read_bytes() for f in emulator.state.all("file")]
    assert stored == [DATA[::-1]]  # the new version whole, never old ranges and new


async def test_resuming_an_object_needs_the_version_its_first_ranges_came_from(
    store: Store, emulator: Emulator
) -> None:
    bucket = store.bucket()
    store.put(bucket, "long.mp4", DATA)
    etag = store.s3.head_object(Bucket=bucket, Key="long.mp4")["ETag"]
    piece = PIECE

    pinned = va.S3Object(bucket, "long.mp4", etag=etag)
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        session = await client.uploads.get_session()
        await stopped_after_two(client, pinned, session)
        store.put(bucket, "long.mp4", DATA[::-1])  # another version, the same size
        for unpinned in (f"s3://{bucket}/long.mp4", va.S3Object(bucket, "long.mp4")):
            with pytest.raises(va.InvalidArgumentError, match="etag"):
                await client.upload_file(
                    unpinned, range_size=piece, workers=1, upload_session=session, resume=True
                )
        with pytest.raises(va.FileChangedError, match="no longer the version"):
            await client.upload_file(
                pinned, range_size=piece, workers=1, upload_session=session, resume=True
            )
    assert list(emulator.state.all("file")) == []  # never completed: no mixed file


async def test_an_object_name_or_type_that_looks_like_markup_is_printed_as_is(
    store: Store, emulator: Emulator, tmp_path: Path
) -> None:
    bucket = store.bucket()
    store.put(bucket, "m/clip.mp4", DATA)
    store.put(bucket, "m/blob", b"x" * 10, "text/[/x]")
    store.put(bucket, "m/[/x]\u202e.txt", b"x" * 10)
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    report = tmp_path / "report.csv"
    args = ["batch", f"s3://{bucket}/m/", "--channel", "news", "--report", str(report)]
    args += ["--journal", str(tmp_path / "j.sqlite")]
    code, out, err = await vidapi(*args, env=env)
    assert code == 0, err
    assert "Content-Type text/[/x])" in out + err
    assert f"s3://{bucket}/m/[/x]\u202e.txt" in out + err
    assert "Content-Type text/[/x])" in report.read_text(encoding="utf-8")
    code, out, err = await vidapi("--json", *args, env=env)
    assert code == 0, err
    assert {r["status"] for r in json.loads(out)} == {"skipped"}
    assert "Content-Type text/[/x])" in err


def test_an_object_key_keeps_what_a_url_would_drop(tmp_path: Path) -> None:
    """In an ``s3://`` name, ``#`` and ``?X-Amz-...`` are part of the object's key: two
    objects differing there are two jobs, never one."""
    names = [
        "s3://coll2/ep#1.mp4",
        "s3://coll2/ep#2.mp4",
        "s3://coll2/ep?X-Amz-Date=1.mp4",
        "s3://coll2/ep?X-Amz-Date=2.mp4",
    ]
    manifest = tmp_path / "jobs.jsonl"
    manifest.write_text(
        "".join(json.dumps({"url": n, "title": "t", "channel": "news"}) + "\n" for n in names),
        encoding="utf-8",
    )
    jobs = list(jobs_from_manifest(manifest, channel=None))
    assert [j.url for j in jobs] == names
    assert len({_s3_key(j) for j in jobs}) == len(names)


def _s3_key(job: va.UploadJob) -> str:
    from vidapi_async.batch._jobs import url_key

    assert job.url is not None
    return url_key(job.url)


async def test_long_object_keys_differing_after_a_hash_are_two_jobs(
    store: Store, emulator: Emulator, tmp_path: Path
) -> None:
    bucket = store.bucket()
    long = "x" * 200
    store.put(bucket, f"l/{long}#1.mp4", DATA)
    store.put(bucket, f"l/{long}#2.mp4", DATA[::-1])
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    args = ["--json", "batch", f"s3://{bucket}/l/", "--channel", "news"]
    code, out, err = await vidapi(*args, "--journal", str(tmp_path / "j.sqlite"), env=env)
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)] == ["done", "done"]
    stored = sorted(Path(f["path"]).read_bytes() for f in emulator.state.all("file"))
    assert stored == sorted([DATA, DATA[::-1]])


@pytest.mark.parametrize("broken", ["profile", "config"])
async def test_a_broken_aws_configuration_is_a_source_error(
    store: Store,
    emulator: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    broken: str,
) -> None:
    config = tmp_path / "config"
    if broken == "profile":
        monkeypatch.setenv("AWS_PROFILE", "nope")
    else:
        config.write_text("[default\nregion = \n", encoding="utf-8")  # not an ini file
        monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setattr(_s3, "_SESSION", None)  # read the configuration again
    async with client_for(emulator) as client:
        with pytest.raises(va.SourceError, match="AWS configuration"):
            await client.upload_file("s3://bucket/key.mp4")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    env |= {"AWS_PROFILE": "nope"} if broken == "profile" else {"AWS_CONFIG_FILE": str(config)}
    args = ["batch", "s3://bucket/p/", "--channel", "news", "--journal", str(tmp_path / "j.sqlite")]
    code, _, err = await vidapi(*args, env=env)
    assert code != 0
    assert "AWS configuration" in err
    assert "Traceback" not in err


async def test_a_dry_run_of_a_bucket_shows_and_counts_what_it_leaves_out(
    store: Store, emulator: Emulator, tmp_path: Path
) -> None:
    bucket = store.bucket()
    store.put(bucket, "d/clip.mp4", DATA)
    store.put(bucket, "d/notes.txt", b"hello", "text/plain")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    args = ["batch", f"s3://{bucket}/d/", "--channel", "news", "--dry-run"]
    args += ["--journal", str(tmp_path / "j.sqlite")]
    code, out, err = await vidapi(*args, env=env)
    assert code == 0, err
    assert f"skipped s3://{bucket}/d/notes.txt: not a video" in out + err
    assert "left out: 1 skipped" in out
    code, out, err = await vidapi("--json", *args, env=env)
    assert code == 0, err
    [left] = json.loads(out)["left_out"]
    assert left["where"] == f"s3://{bucket}/d/notes.txt"
    assert left["status"] == "skipped"
    assert emulator.videos() == []


async def test_an_object_larger_than_max_source_size_is_refused_before_a_get(
    store: Store, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = store.bucket()
    store.put(bucket, "huge.mp4", DATA)
    opened = spy_on_gets(monkeypatch)
    async with client_for(emulator) as client:
        client.max_source_size = len(DATA) - 1
        for chunked in (False, True):
            with pytest.raises(va.SourceError, match="max_source_size") as info:
                await client.upload_file(f"s3://{bucket}/huge.mp4", chunked=chunked)
            assert f"s3://{bucket}/huge.mp4" in str(info.value)
        client.max_source_size = len(DATA)
        await client.upload_file(f"s3://{bucket}/huge.mp4")
    assert opened == [0]  # the GET of the upload allowed only


async def test_vidapi_upload_of_an_object_says_where_objects_go(emulator: Emulator) -> None:
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    args = ["upload", "s3://bucket/k.mp4", "--title", "T", "--channel", "news"]
    code, _, err = await vidapi(*args, env=env)
    assert code != 0
    assert "no such file" not in err
    assert "vidapi batch" in err
    assert emulator.videos() == []


async def test_an_error_about_a_buckets_manifest_names_the_bucket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import argparse

    from vidapi_async.batch import _bucket
    from vidapi_async.cli import _batch

    async def listed(url: str, folder: str, **_: object) -> str:
        return os.path.join(folder, "bucket.jsonl")

    # the command imports the listing when it runs (its module stays light for --help)
    monkeypatch.setattr(_bucket, "write_bucket_manifest", listed)
    args = argparse.Namespace(source="s3://b/p/", channel="news")
    with pytest.raises(va.InvalidArgumentError) as info:
        async with _batch.feed_source(args, None):  # type: ignore[arg-type]
            raise va.InvalidArgumentError("key", f"{args.source} line 1 and line 2: twice")
    assert info.value.message == "the listing of s3://b/p/ line 1 and line 2: twice"


async def test_a_bucket_prefix_is_the_same_origin_from_any_folder(
    store: Store, emulator: Emulator, tmp_path: Path
) -> None:
    """Issue 40, round three (F6): the origin of ``s3://BUCKET/PREFIX`` was the absolute
    path of that text under the current folder: the same bucket run from another folder
    (a new machine) was another manifest, its every job refused."""
    from tests.integration.test_adopt import posts
    from vidapi_async.cli._batch import origin_of

    bucket = store.bucket()
    for name in ("a", "b"):
        store.put(bucket, f"lib/{name}.mp4", os.urandom(100_000))
    source = f"s3://{bucket}/lib/"
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}

    async def batch_from(folder: Path) -> tuple[int, str, str]:
        folder.mkdir()
        args = ["--json", "batch", source, "--channel", "news", "--journal", "j.sqlite"]
        return await vidapi(*args, env=env, cwd=folder)

    code, _, err = await batch_from(tmp_path / "a")
    assert code == 0, err
    made = {v["title"]: v["id"] for v in emulator.videos()}
    before = posts(emulator)
    code, out, err = await batch_from(tmp_path / "b")  # a new journal, another folder
    assert code == 0, (out, err)
    assert {r["status"] for r in json.loads(out)} == {"adopted"}
    assert posts(emulator) == before
    assert {v["title"]: v["id"] for v in emulator.videos()} == made
    assert origin_of(source) == origin_of(source.upper()[:5] + source[5:]) == source
