"""``vidapi status`` only reads: on a database with no shared batch it prints zero
counts and creates nothing (no schema, no procrastinate tables)."""

from __future__ import annotations

import json

import pytest

from tests.system.test_shared_queue import cli_for
from vidapi_async.emulator import Emulator

pytestmark = pytest.mark.system

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("procrastinate")


async def _tables(where: str) -> list[str]:
    conn = await psycopg.AsyncConnection.connect(where, autocommit=True)
    try:
        rows = await (
            await conn.execute(
                "select table_schema || '.' || table_name from information_schema.tables "
                "where table_schema not in ('pg_catalog', 'information_schema') order by 1"
            )
        ).fetchall()
        schemas = await (
            await conn.execute("select nspname from pg_namespace where nspname = 'vidapi'")
        ).fetchall()
    finally:
        await conn.close()
    return [r[0] for r in rows] + [f"schema {r[0]}" for r in schemas]


async def test_status_of_an_empty_database_creates_nothing(
    emulator: Emulator,
    dsn: str,
) -> None:
    code, out, err = await cli_for(emulator)("status", "--journal", dsn, "--json")
    assert code == 0, err
    counts = json.loads(out)
    assert (counts["queued"], counts["done"], counts["failed"]) == (0, 0, 0)
    assert await _tables(dsn) == []
