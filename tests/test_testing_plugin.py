"""The pytest plugin users get by installing the package (entry point pytest11)."""

from __future__ import annotations

from pathlib import Path

import vidapi_async as va
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
    assert plugins.get("vidapi") == "vidapi_async.testing"
