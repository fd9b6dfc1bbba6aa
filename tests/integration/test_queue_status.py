"""``SharedBatch.status()`` is a typed model (issue 30), every field documented."""

from __future__ import annotations

import inspect
from pathlib import Path

import attrs
import pytest

from tests.conftest import make_file
from tests.system.test_shared_queue import jobs_for
from vidapi_async.batch import QueueStatus, SharedBatch

pytest.importorskip("procrastinate")


def test_every_field_has_a_docstring() -> None:
    source = inspect.getsource(QueueStatus)
    for field in attrs.fields(QueueStatus):
        after = source.split(f"    {field.name}:", 1)[1].splitlines()
        assert after[1].strip().startswith('"""'), field.name


@pytest.mark.system
async def test_status_is_a_queue_status(
    tmp_path: Path,
    dsn: str,
) -> None:
    files = [make_file(tmp_path / f"s{i}.mp4", 1000 + i) for i in range(3)]
    async with SharedBatch(dsn) as shared:
        await shared.enqueue(jobs_for(files))
        status = await shared.status()
    assert isinstance(status, QueueStatus)
    assert (status.queued, status.running, status.done, status.failed) == (3, 0, 0, 0)
    assert status.stages == {}
    assert status.as_dict() == {"queued": 3, "running": 0, "done": 0, "failed": 0, "stages": {}}
