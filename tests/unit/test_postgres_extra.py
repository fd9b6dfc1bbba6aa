"""Without the postgres extra, every command that reads a shared queue says what to
install (a ``MissingExtraError``), never a traceback of a missing module."""

from __future__ import annotations

import sys

import pytest

import vidapi_async as va
from vidapi_async.batch import SharedBatch
from vidapi_async.batch._shared import batch_exists

DSN = "postgresql://postgres@127.0.0.1:1/test"  # never reached: the extra is missing


@pytest.fixture(name="no_postgres_extra")
def no_postgres_extra_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("psycopg", "psycopg_pool", "procrastinate", "vidapi_async.batch._queue"):
        monkeypatch.setitem(sys.modules, name, None)  # an import of it raises ImportError


@pytest.mark.usefixtures("no_postgres_extra")
async def test_status_of_a_shared_queue_says_what_to_install() -> None:
    with pytest.raises(va.MissingExtraError, match=r"\[postgres\]") as info:
        await batch_exists(DSN)
    assert info.value.extra == "postgres"


@pytest.mark.usefixtures("no_postgres_extra")
async def test_opening_a_shared_queue_says_what_to_install() -> None:
    with pytest.raises(va.MissingExtraError, match=r"\[postgres\]"):
        async with SharedBatch(DSN):
            pass
