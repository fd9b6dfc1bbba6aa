"""The README's quickstart in API v2 against the emulator, with only the client's
arguments changed (``api="v2"`` and the demo API key, nothing else: the key asks for
``live.manage``, a plan feature its default scopes leave out, when the live stream
needs it). It runs end to end: its subtitle step is guarded by
``client.offers(client.create_subtitle)`` (v2 has no subtitle files), and its live
stream is v2's livestream resource. Its environment is what the README tells a user:
the lines ``vidapi serve`` prints, with its API v2 line in place of the first."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_readme import quickstart
from vidapi_async._protocol import _v2 as v2
from vidapi_async.cli._serve import exports, v2_exports
from vidapi_async.emulator import Emulator

V2_CLIENT = 'auth=va.ApiKey("demo-api-key", "demo-api-secret"), api="v2",'


def in_v2(script: str) -> str:
    old = 'access_token=os.environ["VIDAPI_TOKEN"],'
    assert script.count(old) == 1
    return script.replace(old, V2_CLIENT)


async def run(emulator: Emulator, folder: Path, script: str) -> tuple[int, str, str]:
    (folder / "quickstart.py").write_text(script, encoding="utf-8")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VIDAPI_")},
        **dict(exports(emulator)),  # as `vidapi serve` prints them
        **dict(v2_exports(emulator)),  # its API v2 line, in place of the first
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "quickstart.py",
        cwd=folder,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_quickstart_in_v2(emulator: Emulator, tmp_path: Path) -> None:
    make_file(tmp_path / "movie.mp4", 100_000)
    code, out, err = await run(emulator, tmp_path, in_v2(quickstart()))
    assert code == 0, err
    assert "100000/100000 bytes sent" in out
    assert "password protected: True" in out
    assert re.search(r"^live stream x\w+ live$", out, re.M), out
    assert '<iframe frameborder="0"' in out
    assert emulator.state.count("subtitle") == 0  # guarded: not offered in v2
    vods = [v for v in emulator.videos() if v["mode"] == "vod"]
    lives = [v for v in emulator.videos() if v["mode"] == "live"]
    assert len(vods) == 1 and len(lives) == 1 and vods[0]["password"] is None
    assert (vods[0]["tags"], vods[0]["language"]) == (["trains", "travel"], "en")
    assert lives[0]["title"] == "Tonight" and lives[0]["channel"] == "news"


def test_the_banner_v2_line_is_the_emulator_v2_root(emulator: Emulator) -> None:
    assert dict(v2_exports(emulator)) == {"VIDAPI_BASE_URL": f"{emulator.base_url}/v2"}


async def test_the_quickstart_base_url_unset_is_the_dialect_own_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without VIDAPI_BASE_URL (production) the quickstart's base_url argument names the
    root of the client's dialect: v2's own in v2, the legacy one as written."""
    match = re.search(r"base_url=([^\n]*?),(?:\s*#[^\n]*)?\n", quickstart())
    assert match is not None
    monkeypatch.delenv("VIDAPI_BASE_URL", raising=False)
    given = eval(match.group(1), {"os": os, "va": va})  # noqa: S307 - the README's own code
    async with va.Client(auth=va.ApiKey("k", "s"), api="v2", base_url=given) as client:
        assert client.base_url == v2.DEFAULT_BASE_URL
    async with va.Client(access_token="t", base_url=given) as client:
        assert client.base_url == va.DEFAULT_BASE_URL
