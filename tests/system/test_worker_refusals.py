"""A worker waits for a server that is away (refusing connections, starting up, too
many clients), not for one that refuses it for a reason waiting cannot mend: a
``pg_hba.conf`` ``reject``, ``sslmode=require`` against a server without SSL, a
``REVOKE CONNECT``. Those end ``open(wait=True)`` at once in ``JournalError``.

On a throwaway cluster (tests/pg_cluster.py), never the shared server."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest

from tests.pg_cluster import Cluster, _free_port, pg_cluster
from vidapi_async._errors import JournalError
from vidapi_async.batch import PostgresJournal
from vidapi_async.batch._postgres import _WAITED, connect_cause

pytestmark = pytest.mark.system

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with pg_cluster() as c:
        hba = os.path.join(c.data, "pg_hba.conf")
        with open(hba) as f:
            rules = f.read()
        with open(hba, "w") as f:
            f.write("host all rejected 127.0.0.1/32 reject\n" + rules)
        c._run("pg_ctl", "-D", c.data, "reload")
        yield c


async def _admin(cluster: Cluster, statement: str) -> None:
    conn = await psycopg.AsyncConnection.connect(cluster.dsn, autocommit=True)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


def _dsn(cluster: Cluster, user: str, extra: str = "") -> str:
    return f"postgresql://{user}@127.0.0.1:{cluster.port}/postgres{extra}"


async def _refused_at_once(dsn: str) -> JournalError:
    journal = PostgresJournal(dsn, schema="refusals")
    with pytest.raises(JournalError) as caught:
        # a wait would never end: wait_for's TimeoutError fails the test instead
        await asyncio.wait_for(journal.open(wait=True), 20)
    await journal.close()
    return caught.value


async def test_pg_hba_reject_is_not_waited_for(cluster: Cluster) -> None:
    error = await _refused_at_once(_dsn(cluster, "rejected"))
    assert "refused by the server's pg_hba.conf" in str(error)  # the cause, said


async def test_ssl_required_by_a_server_without_ssl_is_not_waited_for(cluster: Cluster) -> None:
    error = await _refused_at_once(_dsn(cluster, "postgres", "?sslmode=require"))
    assert "the server does not support SSL" in str(error)


async def test_revoked_connect_is_not_waited_for(cluster: Cluster) -> None:
    await _admin(cluster, "create role revoked login")
    await _admin(cluster, "revoke connect on database postgres from public")
    try:
        error = await _refused_at_once(_dsn(cluster, "revoked"))
        assert "no CONNECT privilege" in str(error)
    finally:
        await _admin(cluster, "grant connect on database postgres to public")


async def test_a_refused_connection_is_waited_for() -> None:
    journal = PostgresJournal(f"postgresql://postgres@127.0.0.1:{_free_port()}/x")
    opening = asyncio.ensure_future(journal.open(wait=True))
    done, _ = await asyncio.wait({opening}, timeout=1.5)
    opening.cancel()
    await asyncio.gather(opening, return_exceptions=True)
    assert not done  # still waiting for the server
    assert journal.outage.away == "connection refused"


def test_too_many_clients_is_waited_for() -> None:
    error = psycopg.OperationalError("FATAL:  sorry, too many clients already")
    assert connect_cause(error) in _WAITED


@pytest.mark.parametrize(
    "message",
    [
        "FATAL:  the database system is not yet accepting connections\n"
        "DETAIL:  Consistent recovery state has not been yet reached.",
        "FATAL:  the database system is in recovery mode",
    ],
)
def test_a_server_recovering_from_a_crash_is_waited_for(message: str) -> None:
    assert connect_cause(psycopg.OperationalError(message)) in _WAITED
