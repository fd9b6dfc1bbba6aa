"""The batch journal in PostgreSQL, against a real server.

DSN: ``$VIDAPI_TEST_POSTGRES_DSN`` (default ``postgresql://postgres@127.0.0.1:5432/test``);
each test uses a schema of its own, dropped after. ``scripts/install-test-system-deps``
installs and starts PostgreSQL where none answers (as root); the tests skip, saying
so, where there is still none."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.pg import DSN, q
from vidapi_async.batch._journal import JobLost
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("psycopg.sql")


@pytest.mark.system
async def test_a_batch_records_its_stages_and_a_rerun_skips_done_jobs(
    emulator: Emulator, tmp_path: Path, schema: str
) -> None:
    files = [make_file(tmp_path / f"p{i}.mp4", 3000 + i) for i in range(5)]
    jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    async with client_for(emulator) as client:
        for run in (1, 2):
            journal = va.PostgresJournal(DSN, schema=schema)
            try:
                async with va.BatchUploader(client, concurrency=2, journal=journal) as batch:
                    results = [r async for r in batch.run(jobs)]
            finally:
                await journal.close()  # a journal given is the caller's to close
            expected = va.JobStatus.DONE if run == 1 else va.JobStatus.SKIPPED
            assert [r.status for r in results] == [expected] * 5
    journal = va.PostgresJournal(DSN, schema=schema)
    await journal.open()
    try:
        records = await journal.records()
    finally:
        await journal.close()
    assert sorted(r.stage for r in records) == [va.Stage.DONE] * 5
    assert all(r.video_id for r in records)
    assert {r.runs for r in records} == {1}
    assert len(emulator.videos()) == 5


async def test_an_unreachable_database_is_refused_before_any_upload(
    emulator: Emulator, tmp_path: Path
) -> None:
    journal = va.PostgresJournal("postgresql://u:s3cretpw@127.0.0.1:1/nodb")
    assert "s3cretpw" not in repr(journal)
    async with client_for(emulator) as client:
        with pytest.raises(va.JournalError, match=r"127\.0\.0\.1:1/nodb") as info:
            async with va.BatchUploader(client, journal=journal):
                pass
    assert "s3cretpw" not in str(info.value)
    assert emulator.requests == []


@pytest.mark.system
async def test_a_foreign_or_newer_journal_is_refused(schema: str) -> None:
    journal = va.PostgresJournal(DSN, schema=schema)
    await journal.open()
    await journal.save(va.JobRecord("k"))
    await journal.close()
    conn = await psycopg.AsyncConnection.connect(DSN, autocommit=True)
    try:
        await conn.execute(q("update {s}.jobs set stage = 'teleported'", schema))
        with pytest.raises(va.JournalError, match="unknown stage 'teleported'"):
            await va.PostgresJournal(DSN, schema=schema).open()
        await conn.execute(q("update {s}.jobs set stage = 'done'", schema))
        await conn.execute(q("update {s}.meta set value = '99' where name = 'version'", schema))
        with pytest.raises(va.JournalError, match="newer"):
            await va.PostgresJournal(DSN, schema=schema).open()
    finally:
        await conn.close()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(va.UsageError, match="schema"):
        va.PostgresJournal(DSN, schema="x; drop table")
    with pytest.raises(va.UsageError, match="DSN"):
        va.PostgresJournal("")


@pytest.mark.system
async def test_a_journal_that_cannot_connect_names_the_cause() -> None:
    """No such database, connection refused, authentication failed: each named, and
    never the password."""
    from tests.pg_cluster import pg_cluster

    with pg_cluster() as cluster:
        base = cluster.dsn.rsplit("/", 1)[0]
        conn = await psycopg.AsyncConnection.connect(cluster.dsn, autocommit=True)
        try:
            await conn.execute("create role pw_user login password 'right-pw'")
            hba = Path(cluster.data) / "pg_hba.conf"
            hba.write_text("host all pw_user 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
            await conn.execute("select pg_reload_conf()")
        finally:
            await conn.close()
        port = cluster.port
        cases = {
            f"{base}/no_such_db": "no such database",
            f"postgresql://pw_user:s3cretpw@127.0.0.1:{port}/postgres": "authentication failed",
            f"postgresql://u:s3cretpw@127.0.0.1:{port - 1 if port > 1024 else port + 1}/x": (
                "connection refused"
            ),
        }
        for dsn, cause in cases.items():
            with pytest.raises(va.JournalError) as info:
                await va.PostgresJournal(dsn).open()
            assert cause in str(info.value)
            assert "s3cretpw" not in str(info.value)


@pytest.mark.system
async def test_a_restart_between_two_saves_is_no_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The journal's connection from before a restart fails once on its next use (the
    server's 'terminating connection'): it is replaced at once and nothing is said; the
    database was up whenever anything needed it (it said 'away' then 'back' for it, and
    a second worker-wide 'away' per restart under two workers)."""
    from tests.pg_cluster import pg_cluster

    with pg_cluster() as cluster:
        journal = va.PostgresJournal(cluster.dsn)
        await journal.open()
        try:
            await journal.save(va.JobRecord("before"))
            await asyncio.to_thread(cluster.restart)
            with caplog.at_level("WARNING", logger="vidapi_async.batch"):
                await journal.save(va.JobRecord("after"))
            assert sorted(r.key for r in await journal.records()) == ["after", "before"]
        finally:
            await journal.close()
    assert [r.getMessage() for r in caplog.records if "is away" in r.getMessage()] == []


async def test_a_failure_begun_before_the_database_came_back_is_no_new_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two statements wait out one outage; one is answered (back), the other's attempt,
    begun while the server was still down, fails after that: tried again at once, it
    is not a second outage."""
    from vidapi_async.batch._postgres import Outage

    outage = Outage("postgresql://h:5432/db")
    refused = psycopg.OperationalError("connection refused")
    release = asyncio.Event()
    tries = 0

    async def late() -> str:
        nonlocal tries
        tries += 1
        if tries == 1:
            await release.wait()
            raise refused
        return "late"

    async def down() -> str:
        raise refused

    async def up() -> str:
        return "up"

    with caplog.at_level("WARNING", logger="vidapi_async.batch"):
        outage.gone(refused)  # the first statement saw it go
        pending = asyncio.create_task(outage.patiently(late))
        await asyncio.sleep(0)  # its attempt has begun
        assert await outage.patiently(up) == "up"  # back
        release.set()
        assert await pending == "late"
        outage.give_up.set()
        with pytest.raises(va.JournalError, match="away"):
            await outage.patiently(down)  # a real second outage is still said
    said = [r.getMessage() for r in caplog.records]
    assert sum("is away" in m for m in said) == 2, said
    assert sum("is back" in m for m in said) == 1, said
    assert tries == 2


@pytest.mark.system
def test_fencing_keeps_one_holders_history_in_stage_order() -> None:
    """Hypothesis stateful: two holders of one job claim it and write stages in any
    interleaving; a write lands only while its holder has the newest claim and never
    moves the job to an earlier stage, so the row only ever shows the latest holder's
    writes, in stage order."""
    from hypothesis import settings
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

    try:
        psycopg.connect(DSN, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        pytest.skip(f"no PostgreSQL at {DSN} ({type(exc).__name__})")
    stages = list(va.Stage)

    class TwoHolders(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.loop = asyncio.new_event_loop()
            self.schema = f"t_{uuid.uuid4().hex[:12]}"
            self.journal = va.PostgresJournal(DSN, schema=self.schema)
            self.run(self.journal.open())
            self.held: dict[int, va.JobRecord] = {}  # holder -> its record (its token)
            self.newest = 0  # the newest claim's token
            self.history: list[tuple[int, int]] = []  # (token, stage rank) of each write

        def run(self, coro: object) -> object:
            return self.loop.run_until_complete(coro)  # type: ignore[arg-type]

        @rule(holder=st.integers(0, 1))
        def claim(self, holder: int) -> None:
            record = self.run(self.journal.claim("job"))
            assert isinstance(record, va.JobRecord)
            if record.stage is va.Stage.DONE:
                assert record.runs == self.newest  # a done job is not claimed again
                return
            assert record.runs == self.newest + 1  # the token only grows
            self.newest = record.runs
            self.held[holder] = record

        @rule(holder=st.integers(0, 1), step=st.integers(-2, 3))
        def write(self, holder: int, step: int) -> None:
            record = self.held.get(holder)
            if record is None:
                return
            rank = min(max(record.stage.rank + step, 0), len(stages) - 1)
            record.stage = stages[rank]
            record.file_url = f"holder{holder}-token{record.runs}"
            stored = self.run(self.journal.load("job"))
            assert isinstance(stored, va.JobRecord)
            allowed = record.runs == stored.runs and rank >= stored.stage.rank
            try:
                self.run(self.journal.save(record))
            except JobLost:
                assert not allowed
                return
            assert allowed
            self.history.append((record.runs, rank))

        @invariant()
        def one_history_in_stage_order(self) -> None:
            if not self.history:
                return
            assert self.history == sorted(self.history)  # by token, then by stage
            stored = self.run(self.journal.load("job"))
            assert isinstance(stored, va.JobRecord)
            token, rank = self.history[-1]
            # the row is the last landed write (a later claim only raises its token)
            assert stored.runs >= token
            assert stored.stage.rank == rank
            assert stored.file_url is not None and stored.file_url.endswith(f"token{token}")

        def teardown(self) -> None:
            async def drop() -> None:
                conn = await psycopg.AsyncConnection.connect(DSN, autocommit=True)
                try:
                    await conn.execute(q("drop schema if exists {s} cascade", self.schema))
                finally:
                    await conn.close()

            try:
                self.run(self.journal.close())
                self.run(drop())
            finally:
                self.loop.close()

    TwoHolders.TestCase.settings = settings(max_examples=25, stateful_step_count=25, deadline=None)
    TwoHolders.TestCase().runTest()
