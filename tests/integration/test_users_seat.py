"""From the user's seat: what a plain install, the README's commands and the test command
do on a machine that holds nothing but what they install."""

from __future__ import annotations

import ast
import asyncio
import io
import json
import os
import re
import shutil
import socket
import sys
from importlib.metadata import version
from pathlib import Path

import aiohttp
import pytest

import vidapi_async as va
from tests.cli_run import start_serve, upload_argv, vidapi
from tests.conftest import make_file
from vidapi_async import _validate as check
from vidapi_async._convert import structure
from vidapi_async._models import Video
from vidapi_async.batch import JobRecord, SQLiteJournal, Stage
from vidapi_async.cli._exit import EXIT_OK
from vidapi_async.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"
SCRIPT = ROOT / "scripts" / "install-test-system-deps"


async def python(code: str, **env: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


# -- defect 1: client_for and the demo need no pytest ---------------------------------


async def test_testing_and_the_demo_import_without_pytest() -> None:
    code, out = await python(
        "import sys\n"
        "sys.modules['pytest'] = None\n"  # an import of pytest now raises ImportError
        "sys.modules['pytest_asyncio'] = None\n"
        "from vidapi_async.testing import client_for\n"
        "from vidapi_async.cli._demo import run_demo\n"
        "import vidapi_async, vidapi_async.emulator, vidapi_async.embed, vidapi_async.cli\n"
        "print('imported', client_for.__name__)\n"
    )
    assert code == 0, out
    assert "imported client_for" in out


def test_only_the_entry_point_loads_the_plugin() -> None:
    from importlib.metadata import entry_points

    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins.get("vidapi") == "vidapi_async._pytest_plugin"
    tree = ast.parse((ROOT / "vidapi_async" / "testing.py").read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (
            node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
        )
    }
    assert not imported & {"pytest", "pytest_asyncio"}


# -- defect 2: global options anywhere; status of a SQLite journal ----------------------


async def test_global_options_are_accepted_after_the_subcommand(emulator: Emulator) -> None:
    code, out, err = await vidapi(
        "video",
        "x1",
        "--json",
        "--token",
        emulator.token,
        "--base-url",
        emulator.base_url,
        "--retries",
        "1",
        env={"VIDAPI_TOKEN": "", "VIDAPI_BASE_URL": "http://127.0.0.1:9"},
    )
    # parsed (not exit 2): the token and base URL given after the subcommand were used,
    # and the emulator answered that x1 does not exist
    assert "unrecognized arguments" not in err
    assert "NotFoundError" in err, err
    assert [r for r in emulator.requests if r.path.startswith("/video/x1")]
    code2, _, err2 = await vidapi("--json", "video", "x1", "--json", env={"VIDAPI_TOKEN": ""})
    assert "unrecognized arguments" not in err2
    assert "VIDAPI_TOKEN" in err2  # the missing token is what stops it
    del code, out, code2


async def test_status_counts_a_sqlite_journal(tmp_path: Path) -> None:
    path = tmp_path / "vidapi-journal.sqlite"
    journal = SQLiteJournal(path)
    try:
        await journal.save(JobRecord("a", Stage.DONE, video_id="x1"))
        await journal.save(JobRecord("b", Stage.DONE, video_id="x2"))
        await journal.save(JobRecord("c", Stage.UPLOADED, error="HTTP 500"))
        await journal.save(JobRecord("d", Stage.UPLOADING))
    finally:
        await journal.close()
    code, out, err = await vidapi("status", "--journal", str(path), "--json")
    assert code == EXIT_OK, err
    assert json.loads(out) == {
        "done": 2,
        "failed": 1,
        "unfinished": 1,
        "stages": {"done": 2, "uploaded": 1, "uploading": 1},
    }
    code, out, err = await vidapi("status", "--journal", str(path))
    assert code == EXIT_OK, err
    assert re.search(r"done\W+2", err + out)
    code, _, err = await vidapi("status", "--journal", str(tmp_path / "none.sqlite"))
    assert code == 2
    assert "none.sqlite" in err and "no journal" in err


# -- defect 3: pytest installs nothing; the script says what it installs and why --------


def test_no_test_runs_the_install_script() -> None:
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name == Path(__file__).name:
            continue  # below, the script runs with fake tools and installs nothing
        text = path.read_text(encoding="utf-8")
        if "install-test-system-deps" not in text:
            continue  # no function of it can run the script: no need to parse it
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = ast.get_source_segment(text, node) or ""
                if "install-test-system-deps" in body and "subprocess" in body:
                    offenders.append(f"{path.name}:{node.name}")
    assert offenders == []


def postgres_answers() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=2).close()
    except OSError:
        return False
    return True


async def run_script(tmp_path: Path, tools: tuple[str, ...], fakes: dict[str, str]) -> str:
    """The script with a PATH of only these tools (and this Python as python3) and
    these fake commands; its output."""
    if not postgres_answers():
        pytest.skip("needs PostgreSQL on 127.0.0.1:5432: run scripts/install-test-system-deps")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    for tool in tools:
        found = shutil.which(tool, path="/usr/bin:/bin")
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    for name, script in fakes.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{script}\n")
        (bin_dir / name).chmod(0o755)
    proc = await asyncio.create_subprocess_exec(
        str(SCRIPT),
        env={"PATH": str(bin_dir)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out = (await asyncio.wait_for(proc.communicate(), 60))[0].decode()
    assert proc.returncode == 0, out
    return out


@pytest.mark.system
async def test_the_install_script_says_what_it_installs_and_why(tmp_path: Path) -> None:
    # none of the tools, root, and an apt-get that only records its arguments
    log = tmp_path / "apt.log"
    out = await run_script(
        tmp_path,
        ("bash", "cat", "ls", "sort", "tail"),
        {"id": "echo 0", "apt-get": f'echo "$@" >> {log}'},
    )
    for package, why in (
        ("chromium", "browser"),
        ("chromium-driver", "browser"),
        ("ffmpeg", "ffprobe"),
    ):
        assert re.search(rf"{re.escape(package)}\b.*{why}", out), out
    installs = [line for line in log.read_text().splitlines() if line.startswith("install")]
    assert installs and {"chromium", "chromium-driver", "ffmpeg"} <= set(installs[0].split())


@pytest.mark.system
async def test_the_install_script_is_a_quiet_no_op_when_all_is_there(tmp_path: Path) -> None:
    tools = ("chromium", "chromedriver", "ffprobe", "pg_ctlcluster")
    out = await run_script(tmp_path, ("bash",), dict.fromkeys(tools, ""))
    assert "nothing to install" in out


# -- defect 5: the version; the README says how to install ------------------------------


async def test_vidapi_version_needs_no_extra() -> None:
    code, out = await python(
        "import sys; sys.modules['rich'] = None\n"
        "from vidapi_async.cli import main\n"
        "sys.exit(main(['--version']))"
    )
    assert code == 0, out
    assert out.strip() == f"vidapi-async {version('vidapi-async')}"


def test_readme_says_how_to_install_from_a_checkout_and_a_wheel() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert 'pip install ".[cli]"' in section
    assert "python -m build" in section
    assert re.search(r"pip install .*dist/vidapi_async-.*\.whl", section)
    assert "twine check" in section


# -- CI from the user's seat ------------------------------------------------------------


def readme_commands() -> list[str]:
    text = README.read_text(encoding="utf-8").split("## Two commands", 1)[1].split("\n## ")[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", text, re.S)]


def test_ci_runs_the_readme_commands_as_written() -> None:
    demo, tests = readme_commands()
    assert demo.endswith("vidapi demo")
    assert "scripts/install-test-system-deps" in tests and tests.endswith("-m pytest")
    ci = CI.read_text(encoding="utf-8")
    lines = [line.strip() for line in ci.splitlines()]
    assert demo + " --no-serve" in lines
    assert tests in lines
    # the test command comes last, so that pytest's closing line ends the output
    assert lines.index(tests) > lines.index(demo + " --no-serve")


def test_ci_checks_every_public_module_and_the_wheel() -> None:
    ci = CI.read_text(encoding="utf-8")
    for module in (
        "vidapi_async",
        "vidapi_async.testing",
        "vidapi_async.emulator",
        "vidapi_async.embed",
        "vidapi_async.cli",
    ):
        assert re.search(rf"\b{re.escape(module)}\b", ci), module
    for step in ("-m build", "twine check", "vidapi --version", "vidapi demo --no-serve"):
        assert step in ci, step
    assert '".[release]"' in ci


# -- defect 6: errors that say what happened --------------------------------------------


async def test_iter_videos_with_a_few_fields_asks_for_the_id_too(
    client: va.Client, emulator: Emulator, video_file: Path
) -> None:
    made = await client.upload_video(video_file, title="Listed", channel="news")
    listed = [v async for v in client.iter_videos(fields=["title"])]
    assert [(v.id, v.title) for v in listed] == [(made.id, "Listed")]
    [request] = [
        r for r in emulator.requests if r.method == "GET" and r.path.rstrip("/") == "/me/videos"
    ]
    assert "id" in request.query["fields"].split(",")


def test_an_unusable_answer_is_not_said_to_be_before_sending() -> None:
    with pytest.raises(va.UnexpectedResponseError) as caught:
        structure({"title": "no id"}, Video, what="GET /me/videos")
    assert "before sending" not in str(caught.value)
    assert "answer" in str(caught.value)
    scope = va.InsufficientScopeError("needs manage_videos", scope="manage_videos", status=None)
    assert "before sending" in str(scope)


async def test_password_from_an_empty_input_speaks_cli(emulator: Emulator) -> None:
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, _, err = await vidapi("password", "x1", env=env, stdin=b"\n")
    assert code == 2, err
    assert "--remove" in err
    assert "None" not in err
    assert not [r for r in emulator.requests if r.path.startswith("/video/")]


@pytest.mark.parametrize(
    ("value", "hint"),
    [("not_a_channel!", None), ("News", "news"), (" Tech ", "tech"), ("Nouvelles", None)],
)
def test_a_channel_suggestion_is_a_listed_category_or_absent(value: str, hint: str | None) -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        check.channel(value)
    message = str(caught.value)
    if hint is None:
        assert "did you mean" not in message
    else:
        assert f"did you mean {hint!r}" in message


# -- defect 8: the emulator for other clients -------------------------------------------


async def test_serve_prints_the_environment_and_takes_plain_seals(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc, banner = await start_serve("--port", str(port), "--upload-port", "0", "--plain-seals")
    try:
        env = dict(re.findall(r"^export (VIDAPI_\w+)=(\S+)$", banner, re.M))
        assert env.keys() == {"VIDAPI_BASE_URL", "VIDAPI_TOKEN", "VIDAPI_EMBED_URL"}, banner
        assert env["VIDAPI_BASE_URL"] == f"http://127.0.0.1:{port}"
        async with (
            aiohttp.ClientSession() as http,
            http.get(
                f"{env['VIDAPI_BASE_URL']}/file/upload",
                headers={"Authorization": f"Bearer {env['VIDAPI_TOKEN']}"},
            ) as answer,
        ):
            upload_url = (await answer.json())["upload_url"]
        assert "%" not in upload_url  # plain seals: nothing a client could re-encode
        code, out, err = await vidapi("embed", "x7tgad0", env=env)
        assert code == 0, err
        assert f'src="{env["VIDAPI_EMBED_URL"]}/embed/video/x7tgad0"' in out
    finally:
        proc.terminate()
        await proc.communicate()


# -- defect 9: the CLI says enough -------------------------------------------------------


async def test_upload_confirms_subtitles_and_password_with_labelled_progress(
    emulator: Emulator, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "clip.mp4", 100_000)
    srt = tmp_path / "fr.srt"
    srt.write_text("1\n00:00:01,000 --> 00:00:02,000\nBonjour\n", encoding="utf-8")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, out, err = await vidapi(*upload_argv(src, srt), env=env, stdin=b"pw-from-stdin\n")
    assert code == 0, err
    [video] = emulator.videos()
    [subtitle] = emulator.state.all("subtitle")
    assert f"created video {video['id']}" in out
    assert f"subtitle fr attached ({subtitle['id']})" in out
    assert "password set: the video is password protected" in out
    assert "pw-from-stdin" not in out + err
    bar = err.splitlines()[-1]
    assert "elapsed" in bar or "took" in bar, bar
    assert "rate" in bar and "?" not in bar, bar


async def test_a_folder_batch_lists_what_it_skipped_and_help_names_the_journal(
    emulator: Emulator, tmp_path: Path
) -> None:
    folder = tmp_path / "videos"
    folder.mkdir()
    make_file(folder / "a.mp4", 5000)
    (folder / "subs").mkdir()
    (folder / "notes.txt").write_text("not a video", encoding="utf-8")
    (folder / ".hidden.mp4").write_bytes(b"x")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    journal = tmp_path / "j.sqlite"
    code, out, err = await vidapi(
        "batch", str(folder), "--channel", "news", "--journal", str(journal), env=env
    )
    assert code == 0, err
    text = out + err
    assert re.search(r"skipped subs/?: a folder", text), text
    assert re.search(r"skipped notes\.txt: not a video", text), text
    assert re.search(r"skipped \.hidden\.mp4: hidden", text), text
    assert "skipped a.mp4" not in text
    code, out, _ = await vidapi("batch", "--help")
    assert code == 0
    assert "vidapi-journal.sqlite" in " ".join(out.split())
    assert "current folder" in " ".join(out.split())


def test_the_worker_view_keeps_one_live_line_on_a_terminal() -> None:
    from rich.console import Console

    from vidapi_async.batch import BatchProgress, QueueStatus
    from vidapi_async.cli._shared import WorkerView

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)

    def progress(done: int) -> BatchProgress:
        return BatchProgress(
            started=3, done=done, skipped=0, failed=0, bytes_sent=0, bytes_total=0,
            elapsed=60.0, files={},
        )  # fmt: skip

    with WorkerView(console) as view:
        view(progress(1))
        view(progress(2))
    text = screen.getvalue()
    assert "worker: 2 done, 0 failed, 1 running, 2.0 jobs/min" in text
    # redrawn in place (cursor moves), not one log line per job
    assert "\x1b[" in text
    assert "this worker: 2 done, 0 failed in 60 s" in view.totals(
        QueueStatus(queued=0, running=0, done=5, failed=0, stages={})
    )
