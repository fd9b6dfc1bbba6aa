"""The vidapi command: what it does, run in this process (``tests.cli_run.vidapi``), and
what only a process shows (a signal, ``serve``, the extra missing, the first command a
user runs) in a child."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.children import default_signals
from tests.cli_run import start_serve, upload_argv, vidapi, vidapi_process
from tests.conftest import make_file
from vidapi_async.cli._exit import EXIT_API, EXIT_JOBS_FAILED, EXIT_TRANSPORT, EXIT_USAGE
from vidapi_async.emulator import Emulator


async def test_demo_runs_every_step_and_exits() -> None:
    # what a user runs first (the README's), as they run it: a process
    code, out, err = await vidapi_process("demo", "--no-serve")
    assert code == 0, err
    for words in (
        "uploaded it",
        "created video",
        "attached subtitle",
        "password_protected = True",
        "password_protected = False",
        "mode = live",
        "embed URL",
        "every step done",
    ):
        assert words in err + out, words


async def test_upload_password_and_read_with_json(emulator: Emulator, tmp_path: Path) -> None:
    src = make_file(tmp_path / "clip.mp4", 100_000)
    srt = tmp_path / "fr.srt"
    srt.write_text("1\n00:00:01,000 --> 00:00:02,000\nBonjour\n", encoding="utf-8")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, out, err = await vidapi(
        "--json", *upload_argv(src, srt), env=env, stdin=b"pw-from-stdin\n"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["password_protected"] is True
    assert result["subtitles"][0]["language"] == "fr"
    assert "100.0/100.0 kB" in err  # the progress bar reached the end
    code, out, _ = await vidapi(
        "--json", "video", result["id"], "--fields", "title,password_protected", env=env
    )
    assert json.loads(out) == {"id": result["id"], "title": "Clip", "password_protected": True}
    code, out, _ = await vidapi("password", result["id"], "--remove", env=env)
    assert code == 0
    assert "password_protected = False" in out
    assert emulator.token not in out + err


async def test_exit_codes_tell_usage_api_and_network_apart(emulator: Emulator) -> None:
    code, _, err = await vidapi("video", "x1", env={"VIDAPI_TOKEN": ""})
    assert code == EXIT_USAGE
    assert "VIDAPI_TOKEN" in err
    env = {"VIDAPI_TOKEN": "wrong-token-value", "VIDAPI_BASE_URL": emulator.base_url}
    code, out, err = await vidapi("video", "x1", env=env)
    assert code == EXIT_API
    assert "wrong-token-value" not in out + err
    code, _, _ = await vidapi(
        "--retries", "1", "video", "x1", env={**env, "VIDAPI_BASE_URL": "http://127.0.0.1:9"}
    )
    assert code == EXIT_TRANSPORT
    code, _, err = await vidapi("video", "../x", env=env)
    assert code == EXIT_USAGE


async def test_embed_prints_the_iframe() -> None:
    code, out, _ = await vidapi("embed", "x7tgad0", "--autoplay", "--mute")
    assert code == 0
    assert 'src="https://www.dailymotion.com/embed/video/x7tgad0?autoplay=1&amp;mute=1"' in out
    code, out, _ = await vidapi("embed", "x7tgad0", "--player-id", "xabc1", "--mute")
    assert 'data-video="x7tgad0"' in out


async def test_without_the_cli_extra_it_says_how_to_install() -> None:
    code = "import sys; sys.modules['rich'] = None; from vidapi_async.cli import main; sys.exit(main(['demo']))"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    _, err = await proc.communicate()
    assert proc.returncode == EXIT_USAGE
    assert 'pip install ".[cli]"' in err.decode()


async def test_batch_from_a_folder_resumes_and_summarises(
    emulator: Emulator, tmp_path: Path
) -> None:
    folder = tmp_path / "videos"
    folder.mkdir()
    for i in range(5):
        make_file(folder / f"clip{i}.mp4", 50_000 + i)
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    journal = str(tmp_path / "j.sqlite")
    code, out, err = await vidapi(
        "batch",
        str(folder),
        "--channel",
        "news",
        "--journal",
        journal,
        "--concurrency",
        "3",
        env=env,
    )
    assert code == 0, err
    assert "batch summary" in out and "batch summary" not in err  # output on stdout
    assert sorted(v["title"] for v in emulator.videos()) == [f"clip{i}" for i in range(5)]
    code, out, _ = await vidapi(
        "--json", "batch", str(folder), "--channel", "news", "--journal", journal, env=env
    )
    assert code == 0
    assert {r["status"] for r in json.loads(out)} == {"skipped"}
    assert len(emulator.videos()) == 5


async def test_batch_from_a_manifest_with_a_failing_row(emulator: Emulator, tmp_path: Path) -> None:
    make_file(tmp_path / "a.mp4", 40_000)
    (tmp_path / "en.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nHi\n", encoding="utf-8")
    manifest = tmp_path / "jobs.csv"
    manifest.write_text(
        "path,title,channel,published,password,subtitles\n"
        "a.mp4,First,news,true,pw1,en=en.srt\n"
        "missing.mp4,Second,sport,false,,\n",
        encoding="utf-8",
    )
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, out, err = await vidapi(
        "--json", "batch", str(manifest), "--journal", str(tmp_path / "j.sqlite"), env=env
    )
    assert code == 6
    results = {r["path"].rsplit("/", 1)[-1]: r for r in json.loads(out)}
    assert results["a.mp4"]["status"] == "done"
    assert results["missing.mp4"]["status"] == "failed"
    [video] = emulator.videos()
    assert (video["title"], video["password"]) == ("First", "pw1")
    assert emulator.state.count("subtitle") == 1
    assert "pw1" not in out + err


async def test_batch_manifest_errors_name_the_line(tmp_path: Path) -> None:
    manifest = tmp_path / "bad.csv"
    manifest.write_text("path,title,channel,published\na.mp4,T,news,maybe\n", encoding="utf-8")
    code, _, err = await vidapi("batch", str(manifest), env={"VIDAPI_TOKEN": "t"})
    assert code == EXIT_JOBS_FAILED  # the row fails alone (issue 39); nothing else to run
    assert "line 2" in err and "published" in err


async def test_serve_runs_standalone_and_keeps_state_in_the_data_dir(tmp_path: Path) -> None:
    import socket

    import vidapi_async as va

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = tmp_path / "emu"
    src = make_file(tmp_path / "kept.mp4", 30_000)
    video_id = None
    for _ in range(2):
        proc, banner = await start_serve(
            "--port", str(port), "--upload-port", "0", "--data-dir", str(data)
        )
        assert f"127.0.0.1:{port}" in banner
        async with va.Client(
            access_token="demo-token", base_url=f"http://127.0.0.1:{port}", retry=va.NO_RETRY
        ) as client:
            if video_id is None:
                video_id = (await client.upload_video(src, title="kept", channel="news")).id
            else:
                assert (await client.get_video(video_id, ["title"])).title == "kept"
        proc.terminate()
        await proc.communicate()
    assert (data / "state.sqlite").exists()


def test_the_demo_video_is_made_with_ffmpeg_or_taken_from_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil
    from importlib import resources

    from vidapi_async.cli import _demo

    sample = (resources.files("vidapi_async.emulator") / "sample.webm").read_bytes()
    if shutil.which("ffmpeg"):
        made = Path(_demo._make_video(str(tmp_path)))
        assert made.read_bytes()[:4] == b"\x1a\x45\xdf\xa3"  # a WebM (EBML) file
    monkeypatch.setattr(_demo.shutil, "which", lambda name: None)
    (tmp_path / "vidapi-demo.webm").unlink(missing_ok=True)
    assert Path(_demo._make_video(str(tmp_path))).read_bytes() == sample


@pytest.mark.usefixtures("parent_ignores_signals")
async def test_ctrl_c_stops_a_batch_promptly_and_a_rerun_finishes_it(tmp_path: Path) -> None:
    import signal
    from collections import Counter

    import vidapi_async as va
    from vidapi_async.emulator import Faults

    folder = tmp_path / "videos"
    folder.mkdir()
    for i in range(30):
        make_file(folder / f"v{i:02d}.mp4", 20_000)
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False, faults=Faults(latency=0.1)) as emu:
        env = {**os.environ, "VIDAPI_TOKEN": emu.token, "VIDAPI_BASE_URL": emu.base_url}
        args = [
            "-m",
            "vidapi_async.cli",
            "batch",
            str(folder),
            "--channel",
            "news",
            "--journal",
            str(journal),
            "--concurrency",
            "4",
        ]
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *args,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=default_signals,
        )
        while not (  # noqa: ASYNC110 - the journal is another process's file: poll it
            journal.exists()
            and any(r.stage is va.Stage.DONE for r in va.SQLiteJournal(journal).records_sync())
        ):
            await asyncio.sleep(0.05)  # waiting for the first job to finish; not a check
        proc.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(proc.communicate(), 20)
        assert proc.returncode == 130, err.decode()[-1000:]
        said = " ".join(err.decode().split())
        lines = err.decode().splitlines()  # not a terminal: on a line of its own
        assert any(line.startswith("stopped; to resume") for line in lines), lines[-3:]
        assert "to resume, run the same command again" in said, said[-1000:]
        assert f"batch {folder} --channel news --journal {journal}" in said
        stages = Counter(r.stage for r in va.SQLiteJournal(journal).records_sync())
        assert stages[va.Stage.DONE] < 30
        rerun = await asyncio.create_subprocess_exec(
            sys.executable,
            *args,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await rerun.communicate()
        assert rerun.returncode == 0, err.decode()[-1000:]
        titles = Counter(v["title"] for v in emu.videos())
        assert sorted(titles) == [f"v{i:02d}" for i in range(30)]
        assert set(titles.values()) == {1}


async def test_upload_checks_every_input_before_sending_a_byte(
    emulator: Emulator, tmp_path: Path
) -> None:
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    movie = str(make_file(tmp_path / "m.mp4", 50_000))
    broken = tmp_path / "broken.srt"
    broken.write_text("1\n00:00:01,000 --> later\nHi\n", encoding="utf-8")

    def argv(change: dict[str, str | None]) -> list[str]:
        """``vidapi upload`` with good options, some changed (``None``: a bare flag)."""
        opts = {"file": movie, "--title": "t", "--channel": "news", **change}
        args = ["upload", str(opts.pop("file"))]
        for flag, value in opts.items():
            args += [flag] if value is None else [flag, value]
        return args

    changes: list[tuple[dict[str, str | None], str]] = [
        ({"file": str(tmp_path / "missing.mp4")}, "no such file"),
        ({"--channel": "Bad Channel"}, "channel"),
        ({"--title": " "}, "title"),
        ({"--subtitle": f"en={broken}"}, "cue 1"),
        ({"--subtitle": f"english={broken}"}, "language"),
        ({"--password": None, "--subtitle": f"en={tmp_path / 'none.srt'}"}, "no such file"),
    ]
    cases = [(argv(change), words) for change, words in changes]
    for args, words in cases:
        code, _, err = await vidapi(*args, env=env, stdin=b"hunter22\n")
        assert code == EXIT_USAGE, (args, err)
        assert words in err, err
        assert "Traceback" not in err
    assert [r for r in emulator.requests if r.host == "upload"] == []
    assert emulator.videos() == []


async def test_upload_with_a_password_creates_the_video_protected(
    emulator: Emulator, tmp_path: Path, srt_file: Path
) -> None:
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    movie = str(make_file(tmp_path / "m.mp4", 50_000))
    code, out, err = await vidapi(
        "--json", "upload", movie, "--title", "t", "--channel", "news", "--password",
        "--subtitle", f"en={srt_file}", env=env, stdin=b"hunter22\n",
    )  # fmt: skip
    assert code == 0, err
    video_id = json.loads(out)["id"]
    assert json.loads(out)["password_protected"] is True  # as the create answered
    [video] = emulator.videos()
    assert video["password"] == "hunter22"
    writes = [
        r.path for r in emulator.requests if r.method == "POST" and r.path.startswith("/video/")
    ]
    assert writes == [f"/video/{video_id}/subtitles"]  # no window before a later password write


@pytest.mark.usefixtures("parent_ignores_signals")
async def test_sigterm_stops_the_demo_midway_and_leaves_no_folder(tmp_path: Path) -> None:
    """SIGTERM (a process manager's stop) at any point, not only once it serves: the
    demo stops as on Ctrl-C, its emulator closes and no folder of its is left in the
    temp folder (before: SIGTERM before "Ctrl-C to stop" killed it mid-way and left
    the emulator's and the demo's folders)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vidapi_async.cli", "demo",
        env={**os.environ, "TMPDIR": str(temp)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        preexec_fn=default_signals,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert b"Emulator API at" in first  # then the demo's steps, seconds of them
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    assert "stopped" in err.decode()
    assert list(temp.iterdir()) == []


async def test_a_sigterm_while_ctrl_c_stops_the_command_does_not_cut_its_close() -> None:
    """Ctrl-C cancels the command and it closes what it opened; a SIGTERM meanwhile is
    ignored (before: it cancelled the close and swallowed Ctrl-C's cancellation, exit 0
    with the emulator's folder left)."""
    import io

    from rich.console import Console

    from vidapi_async.cli._serve import stops_on_sigterm

    closed: list[bool] = []

    async def command() -> None:
        async with stops_on_sigterm(Console(file=io.StringIO())):
            try:
                await asyncio.Event().wait()
            finally:
                os.kill(os.getpid(), signal.SIGTERM)  # while it closes
                await asyncio.sleep(0.05)  # the close's own awaits: the signal comes in
                closed.append(True)

    task = asyncio.create_task(command())
    await asyncio.sleep(0)
    task.cancel()  # what Ctrl-C does to the command's task
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed == [True]
