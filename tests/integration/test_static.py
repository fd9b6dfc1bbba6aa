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
        [sys.executable, "-m", "mypy"],
    ],
    ids=["ruff-check", "ruff-format", "mypy-strict"],
)
def test_static_check(command: list[str]) -> None:
    if command[0] == "ruff":
        ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
        command = [ruff, *command[1:]]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
