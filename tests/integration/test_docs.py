"""The documentation's code: every block in docs/ is run here against the emulator, or
marked as not runnable with a reason.

The marker is an HTML comment on the line before the block's fence (invisible on the
site): ``<!-- run: ID -->`` for a block that ``doc_block("ID")`` below hands to a test,
``<!-- not run: REASON -->`` for one that cannot run here (a diagram, a shell command that
installs, a fragment of someone else's program). A block with neither, an ID that no
test takes, or an empty reason fails ``test_every_block_is_run_or_marked``.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlencode

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_readme import quickstart
from vidapi_async.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
MARKER = re.compile(r"^<!--\s*(run|not run):\s*(.*?)\s*-->$")


class Block(NamedTuple):
    where: str  # docs/path.md:line
    marker: str | None  # "run", "not run" or None
    label: str  # the ID or the reason
    code: str


def blocks_of(text: str, name: str) -> Iterator[Block]:
    """The fenced blocks of one Markdown text, each with the marker before it."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        before = next((line.strip() for line in reversed(lines[:i]) if line.strip()), "")
        found = MARKER.match(before)
        end = next(
            (j for j in range(i + 1, len(lines)) if lines[j].strip() == opened.group(1)),
            len(lines),
        )
        yield Block(
            f"{name}:{i + 1}",
            found.group(1) if found else None,
            found.group(2) if found else "",
            "\n".join(lines[i + 1 : end]) + "\n",
        )
        i = end + 1


def all_blocks() -> list[Block]:
    return [
        block
        for path in sorted(DOCS.rglob("*.md"))
        for block in blocks_of(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]


def doc_block(block_id: str) -> str:
    """The code of the one block marked ``<!-- run: block_id -->``."""
    [code] = [b.code for b in all_blocks() if b.marker == "run" and b.label == block_id]
    return code


def ids_run_by_tests() -> set[str]:
    """Every literal ID passed to doc_block() in the test files."""
    ids = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "doc_block"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                ids.add(node.args[0].value)
    return ids


def problems(blocks: list[Block], run_ids: set[str]) -> list[str]:
    found = []
    for block in blocks:
        if block.marker is None:
            found.append(f"{block.where}: neither <!-- run: ID --> nor <!-- not run: REASON -->")
        elif block.marker == "not run" and len(block.label.split()) < 2:
            found.append(f"{block.where}: 'not run' needs a reason")
        elif block.marker == "run" and block.label not in run_ids:
            found.append(f"{block.where}: no test runs doc_block({block.label!r})")
    ids = [b.label for b in blocks if b.marker == "run"]
    found += [f"run ID {i!r} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    return found


def test_every_block_is_run_or_marked() -> None:
    blocks = all_blocks()
    assert len(blocks) > 10
    assert problems(blocks, ids_run_by_tests()) == []


def test_the_check_finds_an_unmarked_block_an_unknown_id_and_a_missing_reason() -> None:
    text = (
        "# t\n\n```python\nprint(1)\n```\n\n<!-- run: nobody -->\n```sh\nls\n```\n"
        "<!-- not run: -->\n````text\n```\n````\n<!-- not run: a diagram -->\n```\nx\n```\n"
    )
    blocks = list(blocks_of(text, "t.md"))
    assert [b.code for b in blocks] == ["print(1)\n", "ls\n", "```\n", "x\n"]
    assert problems(blocks, set()) == [
        "t.md:3: neither <!-- run: ID --> nor <!-- not run: REASON -->",
        "t.md:8: no test runs doc_block('nobody')",
        "t.md:12: 'not run' needs a reason",
    ]


# -- running the blocks -------------------------------------------------------------------


def emulator_env(emulator: Emulator) -> dict[str, str]:
    """What `vidapi serve` tells a user to export."""
    return {
        **os.environ,
        "VIDAPI_TOKEN": emulator.token,
        "VIDAPI_BASE_URL": emulator.base_url,
        "VIDAPI_EMBED_URL": emulator.embed_url,
    }


async def run_program(
    code: str, cwd: Path, env: dict[str, str] | None = None, *args: str, timeout: float = 120
) -> str:
    """Run a block as a program of its own, as a user would save and run it; its output."""
    (cwd / "program.py").write_text(code, encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "program.py",
        *args,
        cwd=cwd,
        env=env or dict(os.environ),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def run_fragment(code: str, **names: Any) -> None:
    """Run a block that is the body of a coroutine, with ``names`` (and ``va``) in scope."""
    source = "async def __fragment__():\n" + textwrap.indent(code, "    ")
    scope: dict[str, Any] = {"va": va, "Path": Path, **names}
    exec(compile(source, "<docs>", "exec"), scope)  # noqa: S102 - the docs' own code
    await scope["__fragment__"]()


def test_the_getting_started_quickstart_is_the_readme_one() -> None:
    assert doc_block("quickstart") == quickstart()  # tests/integration/test_readme.py runs it


async def test_first_upload_runs(tmp_path: Path) -> None:
    out = await run_program(doc_block("first-upload"), tmp_path)
    assert re.fullmatch(r"x[0-9a-z]+ My movie ready\n", out), out


def test_embeds_block_gives_what_its_comments_say(capsys: pytest.CaptureFixture[str]) -> None:
    code = doc_block("embeds")
    namespace: dict[str, Any] = {}
    exec(compile(code, "<docs>", "exec"), namespace)  # noqa: S102 - the docs' own code
    said = re.search(r"^# (https://\S+)$", code, re.M)
    assert said is not None
    first_call = code.splitlines()[2]
    assert eval(first_call, namespace) == said.group(1)  # noqa: S307 - the docs' own code


async def test_the_uploads_guide_first_block_uploads_with_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from vidapi_async.testing import client_for

    make_file(tmp_path / "clip.mp4", 3000)
    monkeypatch.chdir(tmp_path)
    async with Emulator() as emu, client_for(emu) as client:
        await run_fragment(doc_block("uploads-first"), client=client)
        videos = list(emu.state.all("video"))
    assert capsys.readouterr().out == "3000/3000 bytes\n"
    assert [v["title"] for v in videos] == ["Clip"]


async def test_emulator_fragment_runs() -> None:
    code = doc_block("emulator-fragment")
    seen: list[Any] = []
    body = code.replace("emu.requests  #", "seen.append(emu.requests)  #")
    assert body != code
    await run_fragment(body, seen=seen)
    assert seen and isinstance(seen[0], list)


async def test_batch_fragment_uploads_every_file_with_its_subtitles(
    client: va.Client,
    emulator: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "videos").mkdir()
    for name in ("a", "b"):
        make_file(tmp_path / "videos" / f"{name}.mp4", 10_000)
        (tmp_path / "videos" / f"{name}.srt").write_text(
            "1\n00:00:01,000 --> 00:00:02,000\nHello\n", encoding="utf-8"
        )
    monkeypatch.chdir(tmp_path)
    await run_fragment(doc_block("batch-fragment"), client=client)
    assert sorted(v["title"] for v in emulator.videos()) == ["a", "b"]
    assert emulator.state.count("subtitle") == 2
    assert capsys.readouterr().out.count(" done ") == 2
    assert (tmp_path / "migration.sqlite").exists()


def test_the_readme_links_into_the_site_and_every_link_resolves() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert {"docs/getting-started.md", "docs/reference/cli.md", "docs/recipes/index.md"} <= set(
        local
    )
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_no_page_tells_users_to_install_from_an_index() -> None:
    # the package is on no index: every install is from a checkout or the built wheel
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    told = [
        f"{page.relative_to(ROOT)}: {line.strip()}"
        for page in pages
        for line in page.read_text(encoding="utf-8").splitlines()
        if "vidapi-async[" in line
    ]
    assert told == []


def test_the_errors_reference_shows_the_tree_it_speaks_of() -> None:
    from vidapi_async import _errors

    doc = _errors.__doc__ or ""
    drawing = doc.split("The tree::\n\n", 1)[1].split("\n\n", 1)[0]
    tree = textwrap.dedent(drawing).strip("\n")
    page = (DOCS / "reference" / "errors.md").read_text(encoding="utf-8")
    assert f"<!-- not run: a drawing -->\n```text\n{tree}\n```" in page


async def test_the_observability_traces_program_prints_its_spans(
    tmp_path: Path, emulator: Emulator
) -> None:
    out = await run_program(doc_block("observe-traces"), tmp_path, emulator_env(emulator))
    [me] = [r for r in emulator.requests if r.path == "/me"]
    query = urlencode(me.query)  # plain parameters: as sent, none redacted
    assert out.splitlines() == [f"GET 200 {emulator.base_url}/me?{query}", "vidapi me - -"]
    assert emulator.token not in out


async def test_the_observability_metrics_program_prints_both_sides(
    tmp_path: Path, emulator: Emulator
) -> None:
    for name in ("a.mp4", "b.mp4"):
        make_file(tmp_path / name, 3000)
    out = await run_program(
        doc_block("observe-metrics"), tmp_path, emulator_env(emulator), "a.mp4", "b.mp4"
    )
    lines = out.splitlines()
    assert sorted(lines[:2]) == ["a.mp4 done", "b.mp4 done"]
    assert lines[2:] == [
        'vidapi_jobs_total{outcome="done"} 2',
        'vidapi_job_duration_seconds_count{outcome="done"} 2',
        "vidapi.jobs {'outcome': 'done'} 2",
    ]
    assert len(emulator.videos()) == 2
