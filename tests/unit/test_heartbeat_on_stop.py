"""A worker stopping while the database is away does not let procrastinate log an
``update_heartbeats error`` traceback: the heartbeat it cannot send is skipped (its
row is left to be pruned, its jobs to be taken over), as the other stopping calls."""

from __future__ import annotations

import logging

import pytest

from vidapi_async.batch._postgres import Outage

pytest.importorskip("procrastinate")


async def test_a_heartbeat_while_stopping_with_the_database_away_is_quiet(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from vidapi_async.batch._queue import PatientConnector

    outage = Outage("postgresql://127.0.0.1:1/x")
    outage.away = "timed out"
    outage.give_up.set()
    connector = PatientConnector(outage=outage, conninfo="postgresql://127.0.0.1:1/x")
    with caplog.at_level(logging.DEBUG):
        # procrastinate's heartbeat: a statement with no result (no JournalError)
        await connector.execute_query_async("select 1")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
