"""The emulator accepts the official ``dailymotion`` SDK (0.2.5): its plain multipart
upload and its parallel chunked upload. That keeps the emulator faithful beyond our own
client. The SDK declares the obsolete ``asyncio`` package from PyPI as a dependency, so
it is installed with --no-deps into a folder of its own; what it really imports
(requests, requests-toolbelt, aiohttp, aiofiles) comes from the test extra."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_file
from vidapi_async.emulator import Emulator

pytestmark = pytest.mark.system  # the official SDK, installed with pip


SDK_LOGIN = """
import json, os, sys
import dailymotion

d = dailymotion.Dailymotion(
    api_base_url=os.environ["BASE"],
    oauth_token_endpoint_url=os.environ["BASE"] + "/oauth/token",
)
d.set_grant_type(
    "password", api_key="demo-client", api_secret="demo-secret",
    scope=["manage_videos", "userinfo"],
    info={"username": "demo", "password": "demo-password"},
)
"""
"""The SDK's password grant against the emulator, as its README shows it."""

SDK_SCRIPT = (
    SDK_LOGIN
    + """
workers = int(sys.argv[2])
url = d.upload(sys.argv[1], workers=workers)
video = d.post("/me/videos", {"url": url, "title": "from the SDK", "channel": "news",
                              "published": "true", "is_created_for_kids": "false"})
print(json.dumps({"url": url, "video": video}))
"""
)

SDK_FLOWS = (
    SDK_LOGIN
    + """
out = {"me": d.get("/me/", {"fields": "id,fullname"})}
url = d.upload(sys.argv[1])
fields = {"url": url, "channel": "news", "published": "true", "is_created_for_kids": "false"}
first = d.post("/videos", dict(fields, title="posted to /videos"))
second = d.post("/me/videos", dict(fields, title="posted to /me/videos"))
out["listed"] = d.get("/videos", {"fields": "id,title", "limit": 10})
out["deleted"] = d.delete("/video/" + first["id"])
out["after"] = d.get("/videos", {"fields": "id,title"})
try:
    d.get("/video/" + first["id"])
except dailymotion.DailymotionApiError as exc:
    out["gone"] = str(exc)
print(json.dumps(out))
"""
)


@pytest.fixture(scope="session")
def sdk_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("dailymotion-sdk")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            "dailymotion==0.2.5",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        pytest.skip(
            f"cannot install the dailymotion SDK from the package index: {result.stderr[-300:]}"
        )
    return target


async def run_sdk(
    sdk: Path, emu: Emulator, path: Path, workers: int, source: str = SDK_SCRIPT
) -> dict[str, object]:
    script = path.parent / "sdk_upload.py"
    script.write_text(source)
    env = {
        **os.environ,
        "BASE": emu.base_url,
        "PYTHONPATH": os.pathsep.join([str(sdk), os.environ.get("PYTHONPATH", "")]),
        "PYTHONWARNINGS": "ignore",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        str(path),
        str(workers),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 180)
    assert proc.returncode == 0, err.decode()[-2000:]
    return json.loads(out.decode().strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("workers", [0, 3], ids=["multipart", "chunked-3-workers"])
async def test_the_official_sdk_uploads_and_creates(
    sdk_path: Path, tmp_path: Path, workers: int
) -> None:
    # The SDK's chunked mode posts through aiohttp without encoded=True: yarl re-encodes
    # the address (%2F goes out as /) and an escaped seal would be refused. Its requests
    # (multipart) mode keeps the address as returned, so it meets the escaped seals.
    async with Emulator(escaped_seals=workers == 0) as emulator:
        await _sdk_round(sdk_path, emulator, tmp_path, workers)


async def _sdk_round(sdk_path: Path, emulator: Emulator, tmp_path: Path, workers: int) -> None:
    # 13 MiB + a bit: three 4 MiB-aligned regions for the chunked mode.
    src = make_file(tmp_path / "sdk-clip.mp4", 13 * 1024 * 1024 + 333)
    result = await run_sdk(sdk_path, emulator, src, workers)
    stored = emulator.state.get("file", str(result["url"]).split("#")[0])
    assert stored is not None
    assert Path(stored["path"]).read_bytes() == src.read_bytes()
    video = result["video"]
    assert isinstance(video, dict)
    assert emulator.state.get("video", video["id"]) is not None
    chunked = [r for r in emulator.requests if r.host == "upload" and "Content-Range" in r.headers]
    assert (len(chunked) > 1) == (workers > 0)


async def test_the_official_sdk_documented_flows(
    sdk_path: Path, emulator: Emulator, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "flows.mp4", 200_000)
    out: dict[str, Any] = await run_sdk(sdk_path, emulator, src, 0, SDK_FLOWS)
    assert out["me"] == {"id": "xdemou", "fullname": "Demo User"}
    titles = [v["title"] for v in out["listed"]["list"]]
    assert titles == ["posted to /videos", "posted to /me/videos"]
    assert out["deleted"] == {}
    assert [v["title"] for v in out["after"]["list"]] == ["posted to /me/videos"]
    assert "Can't find object video" in out["gone"]
    assert len(emulator.videos()) == 1


SDK_RESOURCES = (
    SDK_LOGIN.replace(
        'scope=["manage_videos", "userinfo"]',
        'scope=["manage_videos", "manage_playlists", "manage_players", "userinfo"]',
    )
    + """
out = {}
url = d.upload(sys.argv[1])
video = d.post("/me/videos", {"url": url, "title": "in a playlist", "channel": "news",
                              "published": "true", "is_created_for_kids": "false"})
playlist = d.post("/me/playlists", {"name": "from the SDK", "private": "false"})
d.post("/playlist/%s/videos/%s" % (playlist["id"], video["id"]))
out["videos"] = d.get("/playlist/%s/videos" % playlist["id"], {"fields": "id,title"})
out["renamed"] = d.post("/playlist/" + playlist["id"], {"name": "renamed", "fields": "name"})
out["mine"] = d.get("/me/playlists", {"fields": "id,name"})
out["removed"] = d.delete("/playlist/%s/videos/%s" % (playlist["id"], video["id"]))
player = d.post("/me/players", {"label": "SDK player", "autostart": "off"})
out["player"] = d.get("/player/" + player["id"], {"fields": "label,autostart"})
out["players"] = d.get("/me/players")
out["deleted"] = [d.delete("/playlist/" + playlist["id"]), d.delete("/player/" + player["id"])]
out["left"] = [d.get("/me/playlists")["list"], d.get("/me/players")["list"]]
out["hook"] = d.post("/me", {"webhook_url": "https://hooks.example/h",
                             "webhook_events": "video.created,video.format.ready",
                             "fields": "webhook_url,webhook_events"})
out["thumb"] = d.post("/video/" + video["id"], {"thumbnail_url": url,
                                               "fields": "thumbnail_url"})
print(json.dumps(out))
"""
)


async def test_the_official_sdk_reaches_playlists_and_players(
    sdk_path: Path, emulator: Emulator, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "res.mp4", 50_000)
    out: dict[str, Any] = await run_sdk(sdk_path, emulator, src, 0, SDK_RESOURCES)
    assert [v["title"] for v in out["videos"]["list"]] == ["in a playlist"]
    assert out["renamed"] == {"name": "renamed"}
    assert [p["name"] for p in out["mine"]["list"]] == ["renamed"]
    assert out["removed"] == {}
    assert out["player"] == {"label": "SDK player", "autostart": "off"}
    assert [p["label"] for p in out["players"]["list"]] == ["SDK player"]
    assert out["deleted"] == [{}, {}]
    assert out["left"] == [[], []]
    assert out["hook"] == {
        "webhook_url": "https://hooks.example/h",
        "webhook_events": "video.created,video.format.ready",
    }
    assert out["thumb"]["thumbnail_url"] == str(out["thumb"]["thumbnail_url"]).split("#")[0]
    assert emulator.state.get("file", out["thumb"]["thumbnail_url"]) is not None
