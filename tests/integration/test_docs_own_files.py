"""No documented block writes over a file the reader may own: run in a folder holding
the reader's ``movie.mp4`` (and a ``vidapi-sample.webm`` of theirs), the getting-started
page's blocks and the README's quickstart line leave both as they were."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from importlib import resources
from pathlib import Path

import pytest

from tests.integration.test_docs import doc_block, run_program
from tests.integration.test_readme import README, quickstart
from vidapi_async.emulator import Emulator

THEIRS = b"the reader's own movie, not to be touched"
GETTING_STARTED = README.parent / "docs" / "getting-started.md"


def sample_line(page: Path) -> str:
    """The quickstart's one-liner that writes the emulator's sample to a file."""
    text = page.read_text(encoding="utf-8")
    [line] = re.findall(r"^`(python -c .*sample\.webm.*)`\.?$", text, re.M)
    return line


async def shell(command: str, cwd: Path, env: dict[str, str] | None = None) -> int:
    return (await shell_out(command, cwd, env))[0]


async def shell_out(command: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_shell(
        command.replace("python ", f"{sys.executable} ", 1),
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


async def test_the_first_upload_block_leaves_the_readers_movie_alone(tmp_path: Path) -> None:
    (tmp_path / "movie.mp4").write_bytes(THEIRS)
    out = await run_program(doc_block("first-upload"), tmp_path)
    assert re.fullmatch(r"x[0-9a-z]+ My movie ready\n", out), out
    assert (tmp_path / "movie.mp4").read_bytes() == THEIRS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["movie.mp4", "program.py"]


@pytest.mark.parametrize("page", [README, GETTING_STARTED], ids=["readme", "getting-started"])
async def test_the_sample_line_writes_a_name_of_its_own_and_never_over_a_file(
    tmp_path: Path, page: Path
) -> None:
    line = sample_line(page)
    sample = resources.files("vidapi_async.emulator").joinpath("sample.webm").read_bytes()
    (tmp_path / "movie.mp4").write_bytes(THEIRS)
    assert await shell(line, tmp_path) == 0
    assert (tmp_path / "movie.mp4").read_bytes() == THEIRS
    written = [p for p in tmp_path.iterdir() if p.name != "movie.mp4"]
    assert [p.read_bytes() for p in written] == [sample]
    # run again over a file of that name the reader made: refused, their file as it was
    written[0].write_bytes(THEIRS)
    assert await shell(line, tmp_path) != 0
    assert written[0].read_bytes() == THEIRS


async def test_the_quickstart_uploads_the_sample_it_is_given(
    emulator: Emulator, tmp_path: Path
) -> None:
    """``python quickstart.py vidapi-sample.webm``, as the page says, after its line."""
    assert await shell(sample_line(README), tmp_path) == 0
    (tmp_path / "quickstart.py").write_text(quickstart(), encoding="utf-8")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, out = await shell_out("python quickstart.py vidapi-sample.webm", tmp_path, env)
    assert code == 0, out
    size = (tmp_path / "vidapi-sample.webm").stat().st_size
    assert f"{size}/{size} bytes sent" in out
    [video] = [v for v in emulator.videos() if v["mode"] == "vod"]
    assert video["title"] == "My movie"
