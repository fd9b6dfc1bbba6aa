"""The static checks are part of the test run: ruff and mypy --strict stay clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        # slow by design (5 to 25 s from a cold cache, more on a loaded machine): the
        # system lane's; ruff's two take a fraction of a second
        pytest.param([sys.executable, "-m", "mypy"], marks=pytest.mark.system),
    ],
    ids=["ruff-check", "ruff-format", "mypy-strict"],
)
def test_static_check(command: list[str]) -> None:
    if command[0] == "ruff":
        ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
        command = [ruff, *command[1:]]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
