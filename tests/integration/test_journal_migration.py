"""A journal written before it kept metadata (schema 1) is migrated in place: its done
jobs stay done, and a re-run converges them on the manifest with one update each."""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

# The version 1 schema, as 0.1 wrote it (typed here, not imported: the oracle).
V1 = """
create table jobs (
    key text primary key, stage text not null, upload_url text, progress_url text,
    file_url text, video_id text, subtitles_done text not null, runs integer not null,
    error text, updated real not null
)
"""


async def made_before(emu: Emulator, client: va.Client, tmp_path: Path) -> tuple[str, Path]:
    """A video made by a batch of 0.1 (the journal row written as it wrote it)."""
    clip = make_file(tmp_path / "a.mp4", 4000)
    video = await client.upload_video(clip, title="Old title", channel="news")
    return video.id, clip


async def test_a_version_1_sqlite_journal_is_migrated_and_its_done_job_converges(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite"
    async with Emulator() as emu, client_for(emu) as client:
        video_id, clip = await made_before(emu, client, tmp_path)
        db = sqlite3.connect(path)
        db.execute(V1)
        db.execute(
            "insert into jobs values ('k1', 'done', null, null, null, ?, '[]', 1, null, 0)",
            (video_id,),
        )
        db.execute("pragma user_version = 1")
        db.commit()
        db.close()
        # read-only tools read it as it is (no metadata yet)
        [record] = va.SQLiteJournal(path).records_sync()
        assert record.video_id == video_id and record.metadata is None

        job = va.UploadJob(path=clip, key="k1", title="New title", channel="news", tags=["t"])
        async with va.BatchUploader(client, journal=path) as batch:
            [result] = [r async for r in batch.run([job])]
        assert result.status is va.JobStatus.UPDATED and result.video_id == video_id
        [video] = emu.videos()  # no second video
        # the update keeps the job's bookkeeping tag (issue 40)
        assert video["title"] == "New title" and video["tags"] == ["t", "vidapi-k1"]
        db = sqlite3.connect(path)
        assert db.execute("pragma user_version").fetchone()[0] == 4
        assert "metadata" in {r[1] for r in db.execute("pragma table_info(jobs)")}
        db.close()
        [record] = va.SQLiteJournal(path).records_sync()
        assert record.metadata is not None and record.metadata["title"] == "New title"
        async with va.BatchUploader(client, journal=path) as batch:
            [again] = [r async for r in batch.run([job])]
        assert again.status is va.JobStatus.SKIPPED


@pytest.mark.system
async def test_a_version_1_postgres_journal_is_migrated_in_place(tmp_path: Path) -> None:
    psycopg = pytest.importorskip("psycopg")
    dsn = os.environ.get("VIDAPI_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    try:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError:
        pytest.skip(f"no PostgreSQL at {dsn}")
    try:
        await conn.execute(f'create schema "{schema}"')
        await conn.execute(f'create table "{schema}".meta (name text primary key, value text)')
        await conn.execute(f"insert into \"{schema}\".meta values ('version', '1')")  # noqa: S608
        await conn.execute(
            V1.replace("create table jobs", f'create table "{schema}".jobs').replace(
                "updated real not null", "updated timestamptz not null default now()"
            )
        )
        async with Emulator() as emu, client_for(emu) as client:
            video_id, clip = await made_before(emu, client, tmp_path)
            await conn.execute(
                f'insert into "{schema}".jobs (key, stage, video_id, subtitles_done, runs) '  # noqa: S608
                "values ('k1', 'done', %s, '[]', 1)",
                (video_id,),
            )
            journal = va.PostgresJournal(dsn, schema=schema)
            job = va.UploadJob(path=clip, key="k1", title="New title", channel="news")
            async with va.BatchUploader(client, journal=journal) as batch:
                [result] = [r async for r in batch.run([job])]
            await journal.close()
            assert result.status is va.JobStatus.UPDATED
            assert [v["title"] for v in emu.videos()] == ["New title"]
        row = await (
            await conn.execute(f"select metadata from \"{schema}\".jobs where key = 'k1'")  # noqa: S608
        ).fetchone()
        assert row is not None and '"New title"' in row[0]
        version = await (
            await conn.execute(f"select value from \"{schema}\".meta where name = 'version'")  # noqa: S608
        ).fetchone()
        assert version == ("4",)
    finally:
        await conn.execute(f'drop schema if exists "{schema}" cascade')
        await conn.close()
