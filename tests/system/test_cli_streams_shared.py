"""The shared queue's commands keep the rule of every ``vidapi`` command: results on
stdout, progress and diagnostics on stderr. ``vidapi batch --journal DSN
--enqueue-only`` has one result, how many jobs it enqueued; ``vidapi worker`` ends with
its totals."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import vidapi_process
from tests.conftest import make_file
from vidapi_async.emulator import Emulator

pytestmark = pytest.mark.system  # PostgreSQL


async def test_enqueued_counts_and_worker_totals_go_to_stdout(
    emulator: Emulator, tmp_path: Path, dsn: str
) -> None:
    folder = tmp_path / "videos"
    folder.mkdir()
    for name in ("a.mp4", "b.mp4"):
        make_file(folder / name, 20_000)
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, out, err = await vidapi_process(
        "batch", str(folder), "--channel", "news", "--journal", dsn, "--enqueue-only", env=env
    )
    assert code == 0, err
    assert "enqueued 2 job(s)" in out, (out, err)
    assert "enqueued" not in err
    code, out, err = await vidapi_process("worker", "--journal", dsn, "--until-empty", env=env)
    assert code == 0, err
    assert "this worker: 2 done, 0 failed" in out, (out, err)
    assert "this worker:" not in err
