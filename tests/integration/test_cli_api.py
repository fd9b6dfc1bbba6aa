"""``vidapi api``: any path from a terminal, against the emulator, run as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_run import vidapi
from tests.conftest import make_file
from vidapi_async.cli._exit import EXIT_API, EXIT_USAGE
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def test_api_reads_writes_pages_and_deletes(emulator: Emulator, tmp_path: Path) -> None:
    async with client_for(emulator) as client:
        uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 1000))
        ids = [
            (await client.create_video(url=uploaded.url, title=f"v{n}", channel="news")).id
            for n in range(3)
        ]
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}

    code, out, err = await vidapi("api", "/me", "--fields", "id,username", env=env)
    assert code == 0, err
    assert json.loads(out)["username"] == "demo"

    code, out, err = await vidapi(
        "api", "/me/videos", "--fields", "id,title", "--paginate", "-f", "sort=old", env=env
    )
    assert code == 0, err
    assert [v["id"] for v in json.loads(out)] == ids

    code, out, err = await vidapi("api", f"/video/{ids[0]}", "-f", "title=Renamé", env=env)
    assert code == 0, err
    code, out, err = await vidapi(
        "api", "-X", "GET", f"/video/{ids[0]}", "-f", "fields=title", env=env
    )
    assert (code, json.loads(out)) == (0, {"title": "Renamé"}), err
    code, out, err = await vidapi("api", "-X", "delete", f"/video/{ids[1]}", env=env)
    assert (code, json.loads(out)) == (0, {}), err

    async with client_for(emulator) as client:
        assert (await client.get_video(ids[0])).title == "Renamé"
        assert [v.id async for v in client.iter_videos()] == [ids[0], ids[2]]


async def test_api_errors_exit_with_their_codes(emulator: Emulator) -> None:
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, _, err = await vidapi("api", "/video/xnothere", env=env)
    assert code == EXIT_API, err
    assert "NotFoundError" in err
    for bad in (
        ["api", "//evil.example/x"],
        ["api", "/me", "-f", "novalue"],
        ["api", "-X", "POST", "/me/videos", "--paginate"],
    ):
        code, _, err = await vidapi(*bad, env=env)
        assert code == EXIT_USAGE, (bad, err)
