"""The pytest plugin users get by installing the package (entry point pytest11)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import vidapi_async as va
from tests.integration.test_docs import doc_block
from vidapi_async.emulator import Emulator


async def test_fixtures_give_a_running_emulator_and_a_ready_client(
    vidapi_emulator: Emulator, vidapi_client: va.Client, video_file: Path
) -> None:
    video = await vidapi_client.upload_video(video_file, title="plugin", channel="news")
    assert [v["id"] for v in vidapi_emulator.videos()] == [video.id]
    assert vidapi_client.base_url == vidapi_emulator.base_url


def test_the_plugin_is_registered_by_entry_point() -> None:
    from importlib.metadata import entry_points

    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins.get("vidapi") == "vidapi_async._pytest_plugin"


def docs_plugin_example() -> str:
    """The example of docs/guides/testing.md."""
    return doc_block("pytest-plugin")


@pytest.mark.system  # slow by design: a whole pytest run in a child, 4.7 s of CPU each
@pytest.mark.parametrize("mode", ["strict", "auto"])
async def test_the_documented_example_passes_in_a_separate_project(
    tmp_path: Path, mode: str
) -> None:
    """A user's own project (its own pytest.ini, no conftest of ours) in pytest-asyncio's
    strict mode (the default) and in auto mode: the documented example passes as written."""
    (tmp_path / "pytest.ini").write_text(
        f"[pytest]\nasyncio_mode = {mode}\nasyncio_default_fixture_loop_scope = function\n"
        "filterwarnings = error\n",
        encoding="utf-8",
    )
    (tmp_path / "test_mine.py").write_text(docs_plugin_example(), encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out = (await asyncio.wait_for(proc.communicate(), 120))[0].decode()
    assert proc.returncode == 0, out
    assert "1 passed" in out
