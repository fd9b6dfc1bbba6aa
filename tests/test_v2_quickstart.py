"""The README's quickstart in API v2 against the emulator, with only the client's
arguments changed (``api="v2"`` and the demo API key). v2 offers no subtitle files and
no live-as-a-video (the spec's §4): as written, the script stops at
``create_subtitle`` with ``UnsupportedOperationError`` before sending it; with those
two calls taken out, the rest runs as it does in the legacy API."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from vidapi_async.emulator import Emulator

from .conftest import make_file
from .test_readme import quickstart

V2_CLIENT = 'auth=va.ApiKey("demo-api-key", "demo-api-secret"), api="v2",'


def in_v2(script: str) -> str:
    old = 'access_token=os.environ["VIDAPI_TOKEN"],'
    assert script.count(old) == 1
    return script.replace(old, V2_CLIENT)


def without_v2_less_calls(script: str) -> str:
    script = re.sub(r"\n *await client\.create_subtitle\(\n.*?\n *\)\n", "\n", script, flags=re.S)
    script = re.sub(r"\n *live = await client\.create_live_stream\(.*?\n.*?\n", "\n", script)
    assert "create_subtitle" not in script and "create_live_stream" not in script
    return script


async def run(emulator: Emulator, folder: Path, script: str) -> tuple[int, str, str]:
    (folder / "quickstart.py").write_text(script, encoding="utf-8")
    env = {
        **{k: v for k, v in os.environ.items() if k != "VIDAPI_API"},
        "VIDAPI_BASE_URL": emulator.v2_base_url,
        "VIDAPI_EMBED_URL": emulator.embed_url,
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
    assert code != 0 and "UnsupportedOperationError: create_subtitle" in err, err
    assert "100000/100000 bytes sent" in out
    assert emulator.state.count("subtitle") == 0
    code, out, err = await run(emulator, tmp_path, without_v2_less_calls(in_v2(quickstart())))
    assert code == 0, err
    assert "password protected: True" in out
    assert '<iframe frameborder="0"' in out
    videos = list(emulator.videos())
    assert len(videos) == 2 and all(v["password"] is None for v in videos[1:])
    assert (videos[1]["tags"], videos[1]["language"]) == (["trains", "travel"], "en")
