"""The README's quickstart, run exactly as written against the emulator."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from tests.conftest import make_file
from vidapi_async.emulator import Emulator

README = Path(__file__).resolve().parents[2] / "README.md"


def quickstart() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


async def test_quickstart_runs_as_written(emulator: Emulator, tmp_path: Path) -> None:
    (tmp_path / "quickstart.py").write_text(quickstart(), encoding="utf-8")
    make_file(tmp_path / "movie.mp4", 200_000)
    env = {
        **os.environ,
        "VIDAPI_TOKEN": emulator.token,
        "VIDAPI_BASE_URL": emulator.base_url,
        "VIDAPI_EMBED_URL": emulator.embed_url,  # as `vidapi serve` prints them
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "quickstart.py",
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert "200000/200000 bytes sent" in text
    assert "password protected: True" in text
    assert "live stream" in text and " live" in text
    assert '<iframe frameborder="0"' in text
    assert f'src="{emulator.embed_url}/embed/video/' in text  # the emulator's player
    [video] = [v for v in emulator.videos() if v["mode"] == "vod"]
    assert video["password"] is None
    assert (video["tags"], video["language"]) == (["trains", "travel"], "en")
    assert emulator.state.count("subtitle") == 1


def test_readme_states_exactly_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8").split("## Two commands", 1)[1].split("\n## ")[0]
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    assert "vidapi demo" in blocks[0]
    assert "pytest" in blocks[1]
    assert "pytest" in (README.parent / ".ci" / "run").read_text(encoding="utf-8")
