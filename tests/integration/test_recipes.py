"""The recipes of docs/recipes/, each run as the complete program it is, against the
emulator (pointed at it through VIDAPI_BASE_URL and VIDAPI_TOKEN, as `vidapi serve`
prints them), and checked from outside: what the emulator stored, what a browser or a
source server sees."""

from __future__ import annotations

import argparse
import asyncio
import configparser
import hashlib
import hmac
import os
import re
import shlex
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web

import vidapi_async as va
from tests.children import default_signals
from tests.conftest import make_file, stored_bytes
from tests.integration.test_docs import doc_block, emulator_env, run_program
from vidapi_async.emulator import Emulator


@asynccontextmanager
async def serving(code: str, cwd: Path, env: dict[str, str]) -> AsyncIterator[str]:
    """Run a program that serves until SIGTERM; its 'listening on URL' address. It must
    then exit 0."""
    (cwd / "program.py").write_text(code, encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "program.py",
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=default_signals,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        found = re.match(r"listening on (http://\S+)", line)
        if found is None:
            proc.kill()
            raise AssertionError(line + (await proc.stderr.read()).decode())
        yield found.group(1)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()


@pytest.mark.usefixtures("parent_ignores_signals")
async def test_web_upload_streams_a_browser_upload_and_answers_the_embed(
    emulator: Emulator, tmp_path: Path
) -> None:
    movie = make_file(tmp_path / "holiday.mp4", 300_000)
    env = {**emulator_env(emulator), "PORT": "0"}
    async with (
        serving(doc_block("web-upload"), tmp_path, env) as address,
        aiohttp.ClientSession() as browser,
    ):
        async with browser.get(address) as page:
            assert 'enctype="multipart/form-data"' in await page.text()
        form = aiohttp.FormData()
        form.add_field("title", "Holiday <3")
        form.add_field("file", movie.read_bytes(), filename="holiday.mp4")
        async with browser.post(f"{address}/upload", data=form) as answer:
            assert answer.status == 200, await answer.text()
            text = await answer.text()
        form = aiohttp.FormData()
        form.add_field("title", "   ")
        form.add_field("file", b"x", filename="x.mp4")
        async with browser.post(f"{address}/upload", data=form) as refused:
            assert refused.status == 400
            assert "title" in await refused.text()
    [video] = emulator.videos()
    assert video["title"] == "Holiday <3"
    assert "<p>Holiday &lt;3</p>" in text
    assert f'src="{emulator.embed_url}/embed/video/{video["id"]}"' in text
    assert stored_bytes(emulator, video["url"]) == movie.read_bytes()


@pytest.mark.usefixtures("parent_ignores_signals")
async def test_webhook_receiver_publishes_once_encoding_is_done(
    emulator: Emulator, client: va.Client, video_file: Path, tmp_path: Path
) -> None:
    env = {**emulator_env(emulator), "PORT": "0", "WEBHOOK_SECRET": "s" * 32}
    async with serving(doc_block("webhook-publish"), tmp_path, env):
        hook = await client.get_webhook()
        assert hook is not None and hook.url.startswith("http://127.0.0.1:")
        video = await client.upload_video(
            video_file, title="later", channel="news", published=False
        )
        assert emulator.videos()[0]["published"] is False
        for _ in range(600):  # until the receiver has published it, or 60 s
            if emulator.videos()[0]["published"]:
                break
            await asyncio.sleep(0.1)
    assert emulator.videos()[0]["published"] is True
    assert emulator.videos()[0]["id"] == video.id
    delivered = [d for d in emulator.webhook_deliveries if d["status"] == 204]
    assert delivered, emulator.webhook_deliveries
    assert await client.get_webhook() is None  # removed on SIGTERM


@asynccontextmanager
async def object_store(objects: dict[str, bytes]) -> AsyncIterator[tuple[str, list[str]]]:
    """An S3-style store on 127.0.0.1 that serves an object only to a request whose
    signature (an HMAC of its path and expiry) is right; its address and the paths asked."""
    asked: list[str] = []

    async def get(request: web.Request) -> web.Response:
        asked.append(request.path)
        expected = sign(request.path, request.query.get("X-Amz-Expires", ""))
        if request.query.get("X-Amz-Signature") != expected or request.path not in objects:
            return web.Response(status=403, text="SignatureDoesNotMatch")
        return web.Response(body=objects[request.path])

    app = web.Application()
    app.router.add_get("/{name:.*}", get)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}", asked
    finally:
        await runner.cleanup()


def sign(path: str, expires: str) -> str:
    return hmac.new(b"store-secret", f"{path}:{expires}".encode(), hashlib.sha256).hexdigest()


def presigned(store: str, path: str, expires: str) -> str:
    return f"{store}{path}?X-Amz-Expires={expires}&X-Amz-Signature={sign(path, expires)}"


async def test_presigned_urls_are_streamed_through_and_a_resigned_list_is_skipped(
    emulator: Emulator, tmp_path: Path
) -> None:
    objects = {"/bucket/a.mp4": os.urandom(150_000), "/bucket/b.mp4": os.urandom(90_000)}
    env = emulator_env(emulator)
    async with object_store(objects) as (store, asked):
        listing = tmp_path / "presigned.txt"
        listing.write_text(
            "# signed for an hour\n" + "".join(presigned(store, p, "3600") + "\n" for p in objects)
        )
        out = await run_program(doc_block("presigned-urls"), tmp_path, env, "presigned.txt")
        assert sorted(line.split()[0] for line in out.splitlines()) == ["done", "done"]
        assert "X-Amz-Signature" not in out and sign("/bucket/a.mp4", "3600") not in out
        stored = {v["title"]: stored_bytes(emulator, v["url"]) for v in emulator.videos()}
        assert stored == {"a": objects["/bucket/a.mp4"], "b": objects["/bucket/b.mp4"]}
        # the old signatures expired: the list is signed again, and nothing is done twice
        listing.write_text("".join(presigned(store, p, "7200") + "\n" for p in objects))
        asked.clear()
        out = await run_program(doc_block("presigned-urls"), tmp_path, env, "presigned.txt")
        assert sorted(line.split()[0] for line in out.splitlines()) == ["skipped", "skipped"]
        assert asked == []
        assert len(emulator.videos()) == 2
        journal = (tmp_path / "presigned.sqlite").read_bytes()
        assert sign("/bucket/a.mp4", "3600").encode() not in journal


@pytest.mark.usefixtures("parent_ignores_signals")
async def test_csv_migration_stopped_by_ctrl_c_resumes_with_one_video_per_row(
    emulator: Emulator, tmp_path: Path
) -> None:
    rows = [f"clip{i}.mp4" for i in range(6)]
    for name in rows:
        make_file(tmp_path / name, 50_000)
    (tmp_path / "manifest.csv").write_text(
        "path,title,channel\n" + "".join(f"{n},Clip {n[4]},news\n" for n in rows)
    )
    (tmp_path / "program.py").write_text(doc_block("csv-migration"), encoding="utf-8")
    emulator.faults.latency = 0.3  # every request takes a while: Ctrl-C lands mid-batch
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "program.py",
        "manifest.csv",
        cwd=tmp_path,
        env=emulator_env(emulator),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=default_signals,
    )
    assert proc.stdout is not None
    first = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    assert first.startswith("done "), first
    proc.send_signal(signal.SIGINT)  # Ctrl-C, after one job is done and others under way
    rest, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 130, err.decode()
    assert "run the same command again" in rest.decode()
    before = len(emulator.videos())
    assert before < len(rows)
    emulator.faults.latency = 0.0
    out = await run_program(
        doc_block("csv-migration"), tmp_path, emulator_env(emulator), "manifest.csv"
    )
    statuses = sorted(line.split()[0] for line in out.splitlines())
    assert statuses.count("skipped") >= 1 and "failed" not in statuses
    assert len(statuses) == len(rows)
    titles = sorted(v["title"] for v in emulator.videos())
    assert titles == sorted(f"Clip {i}" for i in range(6))  # one video per row


def vidapi_parses(argv: list[str]) -> argparse.Namespace:
    from vidapi_async.cli._main import _parser

    return _parser().parse_args(argv)


def test_the_fleet_unit_runs_a_worker_the_parser_accepts() -> None:
    unit = configparser.ConfigParser(interpolation=None)
    unit.read_string(doc_block("fleet-unit"))
    exec_start = shlex.split(unit["Service"]["ExecStart"])
    assert Path(exec_start[0]).name == "vidapi"
    args = vidapi_parses(exec_start[1:])
    assert (args.command, args.concurrency) == ("worker", 8)
    assert args.journal.kind == "postgresql"
    assert ":" not in args.journal.where.split("@")[0][len("postgresql://") :]  # no password
    assert unit["Service"]["KillSignal"] == "SIGTERM"  # the worker finishes its jobs on it
    assert "VIDAPI_TOKEN" not in doc_block("fleet-unit").replace("`", "")


def test_the_fleet_compose_file_runs_workers_beside_postgres() -> None:
    compose = yaml.safe_load(doc_block("fleet-compose"))
    worker = compose["services"]["worker"]
    args = vidapi_parses(worker["command"][1:])
    assert args.command == "worker"
    assert args.journal.kind == "postgresql" and "@db:5432/" in args.journal.where
    assert ":" not in args.journal.where.split("@")[0][len("postgresql://") :]  # no password
    assert worker["deploy"]["replicas"] == 3
    assert worker["depends_on"]["db"]["condition"] == "service_healthy"
    assert worker["environment"]["VIDAPI_TOKEN"] == "${VIDAPI_TOKEN}"  # from the shell
    assert "POSTGRES_PASSWORD" not in compose["services"]["db"]["environment"]


async def test_fastapi_upload_answers_the_embed(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx

    for name in ("VIDAPI_TOKEN", "VIDAPI_BASE_URL", "VIDAPI_EMBED_URL"):
        monkeypatch.setenv(name, emulator_env(emulator)[name])
    module: dict[str, Any] = {"__name__": "upload_app"}
    exec(compile(doc_block("fastapi-upload"), "upload_app.py", "exec"), module)  # noqa: S102
    app = module["app"]
    movie = make_file(tmp_path / "holiday.mp4", 2_500_000)  # over 1 MiB: spooled to disk
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://app"
        ) as web_client,
    ):
        page = await web_client.get("/")
        assert 'enctype="multipart/form-data"' in page.text
        with movie.open("rb") as body:
            answer = await web_client.post(
                "/upload", data={"title": "Holiday <3"}, files={"file": ("holiday.mp4", body)}
            )
        assert answer.status_code == 200, answer.text
        refused = await web_client.post(
            "/upload", data={"title": " "}, files={"file": ("x.mp4", b"x")}
        )
        assert refused.status_code == 400
        assert "title" in refused.text
    [video] = emulator.videos()
    assert video["title"] == "Holiday <3"
    assert "<p>Holiday &lt;3</p>" in answer.text
    assert f'src="{emulator.embed_url}/embed/video/{video["id"]}"' in answer.text
    assert stored_bytes(emulator, video["url"]) == movie.read_bytes()
