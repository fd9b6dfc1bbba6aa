"""A fresh user's review of the vidapi command: each finding, run as a user runs it."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi, vidapi_process
from tests.conftest import client_for, make_file
from vidapi_async.cli._exit import EXIT_JOBS_FAILED, EXIT_OTHER, EXIT_USAGE
from vidapi_async.emulator import Emulator


def env_for(emulator: Emulator) -> dict[str, str]:
    return {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}


def uploads(emulator: Emulator) -> list[object]:
    return [r for r in emulator.requests if r.host == "upload"]


async def test_upload_checks_the_channel_against_the_platform_before_a_byte(
    emulator: Emulator, tmp_path: Path
) -> None:
    movie = make_file(tmp_path / "m.mp4", 50_000)
    code, _, err = await vidapi(
        "upload", str(movie), "--title", "T", "--channel", "unknowncat", env=env_for(emulator)
    )
    assert code == EXIT_USAGE, err
    assert "unknowncat" in err and "news" in err
    assert uploads(emulator) == []
    assert emulator.videos() == []


async def test_batch_checks_each_channel_once_before_uploading(
    emulator: Emulator, tmp_path: Path
) -> None:
    for name in ("a", "b"):
        make_file(tmp_path / f"{name}.mp4", 30_000)
    manifest = tmp_path / "jobs.csv"
    manifest.write_text("path,title,channel\na.mp4,A,unknowncat\nb.mp4,B,news\n", encoding="utf-8")
    code, out, err = await vidapi(
        "--json",
        "batch",
        str(manifest),
        "--journal",
        str(tmp_path / "j.sqlite"),
        env=env_for(emulator),
    )
    assert code == EXIT_JOBS_FAILED, err
    results = {r["path"].rsplit("/", 1)[-1]: r for r in json.loads(out)}
    assert results["b.mp4"]["status"] == "done"
    bad = results["a.mp4"]
    assert (bad["status"], bad["stage"]) == ("failed", "pending")
    assert "not a category" in bad["error"] and "news" in bad["error"]
    assert [v["title"] for v in emulator.videos()] == ["B"]
    assert len([r for r in emulator.requests if r.path == "/channels"]) == 1
    # one upload session for b only: a's file never left the disk
    assert len([r for r in uploads(emulator) if r.method == "POST"]) == 1


@pytest.mark.parametrize("content", [b"root:x:0:0:root:/root:/bin/bash\n", b"path,title\n"])
async def test_status_of_a_file_that_is_not_a_journal_says_so(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "not.db"
    path.write_bytes(content)
    code, _, err = await vidapi("status", "--journal", str(path))
    assert code == EXIT_OTHER, err  # as 'vidapi batch' gives for the same journal
    assert "JournalError" in err and "Traceback" not in err
    assert str(path) in err.replace("\n", "") and "not a" in err


async def test_status_of_another_programs_database_and_a_directory(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("create table users (name text)")
    db.commit()
    db.close()
    code, _, err = await vidapi("status", "--journal", str(other))
    assert code == EXIT_OTHER, err
    assert "not a vidapi journal" in err
    folder = tmp_path / "vids.db"
    folder.mkdir()
    code, _, err = await vidapi("status", "--journal", str(folder))
    assert code == EXIT_OTHER, err
    assert "is a directory" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--port", "99999"],
        ["--port", "-5"],
        ["--upload-port", "70000"],
        ["--encoding-delay", "nan"],
        ["--latency", "inf"],
        ["--error-rate", "-1"],
    ],
)
async def test_serve_refuses_bad_numbers_as_usage_errors(args: list[str]) -> None:
    code, _, err = await vidapi("serve", *args)
    assert code == EXIT_USAGE, err
    assert "Traceback" not in err
    assert args[0] in err


async def test_serve_on_the_last_port_says_the_upload_port_does_not_fit() -> None:
    code, _, err = await vidapi_process("serve", "--port", "65535")  # serve handles SIGTERM
    assert code == EXIT_USAGE, err
    assert "Traceback" not in err
    assert "--upload-port" in err


async def test_serve_names_a_missing_certificate_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nonexist.pem")
    code, _, err = await vidapi("serve", "--tls-cert", missing, "--tls-key", missing)
    assert code == EXIT_USAGE, err
    assert "--tls-cert" in err and "nonexist.pem" in err


LOGIN = {"VIDAPI_CLIENT_ID": "cid", "VIDAPI_CLIENT_SECRET": "secret"}


async def test_login_on_a_busy_port_says_so_at_once() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = await vidapi("login", "--no-browser", "--port", str(port), env=LOGIN)
    assert code == EXIT_USAGE, err
    assert "Traceback" not in err
    assert str(port) in err and "in use" in err


@pytest.mark.parametrize("args", [["--port", "99999"], ["--timeout", "-1"], ["--timeout", "nan"]])
async def test_login_refuses_bad_numbers(args: list[str]) -> None:
    code, _, err = await vidapi("login", "--no-browser", *args, env=LOGIN)
    assert code == EXIT_USAGE, err
    assert args[0] in err


async def test_embed_sdk_comes_from_the_embed_host() -> None:
    code, out, _ = await vidapi("embed", "x7tgad0", "--sdk", "--embed-url", "http://127.0.0.1:8400")
    assert code == 0
    assert '<script src="http://127.0.0.1:8400/js/all.js">' in out
    code, out, _ = await vidapi("embed", "x7tgad0", "--sdk")
    assert "https://api.dmcdn.net/all.js" in out


async def test_a_manifest_saved_by_excel_is_read(emulator: Emulator, tmp_path: Path) -> None:
    make_file(tmp_path / "a.mp4", 30_000)
    manifest = tmp_path / "jobs.csv"
    manifest.write_bytes(b"\xef\xbb\xbfpath,title,channel\r\na.mp4,First,news\r\n")
    code, out, err = await vidapi(
        "--json",
        "batch",
        str(manifest),
        "--journal",
        str(tmp_path / "j.sqlite"),
        env=env_for(emulator),
    )
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)] == ["done"]
    assert [v["title"] for v in emulator.videos()] == ["First"]


async def test_batch_and_status_agree_on_failures(emulator: Emulator, tmp_path: Path) -> None:
    make_file(tmp_path / "a.mp4", 30_000)
    manifest = tmp_path / "jobs.csv"
    manifest.write_text("path,title,channel\na.mp4,A,news\nmissing.mp4,M,news\n", encoding="utf-8")
    journal = str(tmp_path / "j.sqlite")
    args = ("--json", "batch", str(manifest), "--journal", journal)
    code, out, err = await vidapi(*args, env=env_for(emulator))
    assert code == EXIT_JOBS_FAILED, err
    code, out, err = await vidapi("--json", "status", "--journal", journal)
    assert code == 0, err
    status = json.loads(out)
    assert (status["done"], status["failed"]) == (1, 1)
    code, out, err = await vidapi("status", "--journal", journal)
    assert "sqlite journal" in out.lower() and "shared batch" not in out
    # a re-run retries the failed job (and skips the done one): it works once the file is there
    make_file(tmp_path / "missing.mp4", 30_000)
    code, out, err = await vidapi(*args, env=env_for(emulator))
    assert code == 0, err
    assert sorted(r["status"] for r in json.loads(out)) == ["done", "skipped"]
    code, out, _ = await vidapi("--json", "status", "--journal", journal)
    status = json.loads(out)
    assert (status["done"], status["failed"]) == (2, 0)


async def test_cli_messages_give_cli_advice(emulator: Emulator, tmp_path: Path) -> None:
    movie = make_file(tmp_path / "m.mp4", 30_000)
    code, _, err = await vidapi(
        "upload",
        str(movie),
        "--title",
        "T",
        "--channel",
        "news",
        "--password",
        env=env_for(emulator),
        stdin=b"",
    )
    assert code == EXIT_USAGE, err
    assert "pass None" not in err and "--password" in err
    folder = tmp_path / "f"
    folder.mkdir()
    code, _, err = await vidapi(
        "batch",
        str(folder),
        "--channel",
        "news",
        "--concurrency",
        "1000",
        "--journal",
        str(tmp_path / "j.sqlite"),
        env=env_for(emulator),
    )
    assert code == EXIT_USAGE, err
    assert "Client(" not in err and "--concurrency" in err


async def test_a_bad_proxy_is_named(emulator: Emulator) -> None:
    code, _, err = await vidapi("--proxy", "notaurl", "video", "x1", env=env_for(emulator))
    assert code == EXIT_USAGE, err
    assert "--proxy" in err


async def test_set_thumbnail_takes_a_video_as_playlists_do(emulator: Emulator) -> None:
    async with client_for(emulator) as client:
        video = await client.create_video(
            url=(await client.upload_file(b"x" * 1000, filename="a.mp4")).url,
            title="T",
            channel="news",
        )
        thumb = await client.set_thumbnail(video, "https://example.com/t.jpg")
        assert isinstance(thumb, va.Video)
        assert thumb.id == video.id


def test_the_scope_error_says_before_sending_once() -> None:
    from vidapi_async._models import AccessToken
    from vidapi_async._protocol import Request
    from vidapi_async._requester import Requester

    request = Request("GET", "https://api.example/x", scope="manage_playlists")
    with pytest.raises(va.InsufficientScopeError) as caught:
        Requester.check_scope(request, AccessToken("t", scopes=frozenset({"manage_videos"})))
    assert str(caught.value).count("before sending") == 1, str(caught.value)
