"""The test PostgreSQL server: its address (``$VIDAPI_TEST_POSTGRES_DSN``, default
``postgresql://postgres@127.0.0.1:5432/test``), a connection to it or a skip that names the
command that starts one, and two fixtures every test module can use (``tests/conftest.py``
makes them global; ``SYSTEM_FIXTURES`` keeps their tests in the system lane): ``schema``,
a schema name dropped after the test, and ``dsn``, a database of the test's own, dropped
after. psycopg is imported when a test asks for it, not when this module is."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

DSN = os.environ.get("VIDAPI_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def _psycopg() -> Any:
    pytest.importorskip("psycopg.sql")
    import psycopg

    return psycopg


def q(text: str, schema: str) -> object:
    """``text`` with ``{s}`` the schema's name, quoted as an identifier."""
    psycopg = _psycopg()
    return psycopg.sql.SQL(text).format(s=psycopg.sql.Identifier(schema))


async def connect_or_install() -> Any:
    """A connection to the test server, or a skip that names the command that starts
    one (tests install nothing themselves)."""
    psycopg = _psycopg()
    try:
        return await psycopg.AsyncConnection.connect(DSN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.skip(
            f"no PostgreSQL at {DSN} ({type(exc).__name__}): run "
            "scripts/install-test-system-deps (as root) to install and start one, or set "
            "VIDAPI_TEST_POSTGRES_DSN"
        )


@pytest.fixture
async def schema() -> AsyncIterator[str]:
    conn = await connect_or_install()
    name = f"t_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        await conn.execute(q("drop schema if exists {s} cascade", name))
        await conn.close()


@pytest.fixture
async def dsn() -> AsyncIterator[str]:
    psycopg = _psycopg()
    admin = await connect_or_install()
    name = f"t_{uuid.uuid4().hex[:12]}"
    await admin.execute(psycopg.sql.SQL("create database {}").format(psycopg.sql.Identifier(name)))
    try:
        yield DSN.rsplit("/", 1)[0] + "/" + name
    finally:
        await admin.execute(
            psycopg.sql.SQL("drop database if exists {} with (force)").format(
                psycopg.sql.Identifier(name)
            )
        )
        await admin.close()
