"""Every Python block of the README and the docs type-checks under ``mypy --strict`` and
pyright, as a user's checkers would read it.

A block that compiles as a module (a program) is checked as it stands. A fragment (the
body of a coroutine: ``await`` at its top, names the reader has) is checked as the body
of ``async def`` whose parameters are the names it takes from its surroundings, typed:
``FRAGMENT_NAMES`` below, keyed by the block's marker label (its run ID, or its
``not run`` reason), ``client: va.Client`` by default; ``va`` and ``Path`` are imported,
as ``tests/integration/test_docs.py``'s ``run_fragment`` has them.

Both checkers run once over every block, each block a module of its own in a temporary
folder, the package found on their path (an editable install is an import hook neither
can follow). pyright comes from the ``test`` extra (``pip install pyright``: it runs on
node, and fetches its own code on first use); where it is missing its test is skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.integration.test_docs import ROOT, Block, blocks_of
from tests.system.test_typing import run_mypy

pytestmark = pytest.mark.system  # two checkers from scratch over two dozen modules: ~30 s

PYTHON = {"python", "py", "python3"}
FRAGMENT_NAMES = {
    # label: (imports, the names it takes from its surroundings)
    "a fragment of the quickstart": ("", "client: va.Client, video: va.Video, srt_url: str"),
    "a fragment of a web app (app, SECRET, video_id are yours); the webhook recipe runs it whole": (
        "from aiohttp import web\nfrom vidapi_async import webhooks",
        "client: va.Client, app: web.Application, SECRET: str, video_id: str",
    ),
    "an outline of the calls, not a program (Getting started has the whole one)": (
        "",
        "TOKEN: str",
    ),
    "emulator-fragment": ("", ""),
    "needs an API key of the platform": ("", "API_KEY: str, API_SECRET: str"),
}
DEFAULT_NAMES = ("", "client: va.Client")


class Checked(NamedTuple):
    block: Block
    module: str  # the module's name in the folder
    offset: int  # a module's line N is the block's line N - offset


def python_blocks() -> list[Block]:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [
        block
        for path in paths
        for block in blocks_of(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
        if _language(path, block) in PYTHON
    ]


def _language(path: Path, block: Block) -> str:
    line = int(block.where.rsplit(":", 1)[1])
    fence = path.read_text(encoding="utf-8").splitlines()[line - 1]
    return re.sub(r"^[`~]+\s*", "", fence).split()[0] if fence.strip("`~ ") else ""


def is_program(code: str) -> bool:
    try:
        compile(code, "<block>", "exec")
    except SyntaxError:
        return False
    return True


def module_of(block: Block) -> tuple[str, int]:
    """The module a block is checked as, and how many lines come before its code."""
    if block.label not in FRAGMENT_NAMES and is_program(block.code):
        return block.code, 0
    imports, names = FRAGMENT_NAMES.get(block.label, DEFAULT_NAMES)
    head = (
        "from pathlib import Path\n\nimport vidapi_async as va\n"
        + (imports + "\n" if imports else "")
        + f"\n\nasync def __fragment__({names}) -> None:\n"
    )
    return head + textwrap.indent(block.code, "    "), head.count("\n")


def write_modules(folder: Path) -> list[Checked]:
    checked = []
    for i, block in enumerate(python_blocks()):
        name = f"block_{i:02d}"
        text, offset = module_of(block)
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
        checked.append(Checked(block, name, offset))
    return checked


def where(checked: list[Checked], module: str, line: int) -> str:
    """A checker's ``module:line`` as the doc's ``path.md:line``."""
    found = next(c for c in checked if c.module == module)
    path, fence = found.block.where.rsplit(":", 1)
    return f"{path}:{int(fence) + line - found.offset}"


def test_the_blocks_are_found_and_fragments_are_told_apart() -> None:
    blocks = python_blocks()
    assert len(blocks) >= 20
    assert any(b.where.startswith("README.md:") for b in blocks)
    labels = {b.label for b in blocks}
    assert set(FRAGMENT_NAMES) <= labels  # no name kept for a block that is gone
    assert is_program("import asyncio\nasyncio.run(main())\n")
    assert not is_program("await client.me()\n")
    text, offset = module_of(Block("x.md:3", "run", "batch-fragment", "x = 1\nawait f(x)\n"))
    assert text.splitlines()[offset] == "    x = 1"
    assert "client: va.Client" in text


def test_every_block_passes_mypy_strict(tmp_path: Path) -> None:
    checked = write_modules(tmp_path)
    done = run_mypy(tmp_path, *(f"{c.module}.py" for c in checked))
    errors = []
    for line in done.stdout.splitlines():
        found = re.match(r"(block_\d+)\.py:(\d+): error: (.*)", line)
        if found:
            errors.append(f"{where(checked, found[1], int(found[2]))}: {found[3]}")
    assert not errors, "\n".join(errors)
    assert done.returncode == 0, done.stdout + done.stderr


def pyright() -> str:
    found = shutil.which("pyright", path=f"{Path(sys.executable).parent}{os.pathsep}")
    found = found or shutil.which("pyright")
    if found is None:
        pytest.skip(
            "pyright is not installed: `pip install pyright` (the test extra has it; it "
            "needs node), or `npm install --prefix ~/.cache/vidapi-pyright pyright` and "
            "~/.cache/vidapi-pyright/node_modules/.bin on PATH"
        )
    return found


def test_every_block_passes_pyright(tmp_path: Path) -> None:
    program = pyright()
    checked = write_modules(tmp_path)
    config = {"extraPaths": [str(ROOT)], "pythonVersion": "3.11", "typeCheckingMode": "standard"}
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    done = subprocess.run(
        [program, "--outputjson", "--pythonpath", sys.executable],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = json.loads(done.stdout)
    errors = [
        f"{where(checked, Path(d['file']).stem, d['range']['start']['line'] + 1)}: "
        f"{d['message'].splitlines()[0]} ({d.get('rule', '')})"
        for d in report["generalDiagnostics"]
        if d["severity"] in ("error", "warning")
    ]
    assert not errors, "\n".join(errors)
    assert report["summary"]["filesAnalyzed"] == len(checked)
