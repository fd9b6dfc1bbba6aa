"""Whole pipelines (upload address, upload, create) per second: the batch beside a lean
client of its shape on bare aiohttp (issue 33), the latency bound, and the official SDK.

    python benchmarks/pipeline_throughput.py        (issue 33's row: ~1.5 min on 2 cores)
        [--files 1000] [--size-kib 64] [--latencies 0.02] [--concurrency 16] [--rounds 3]
        [--sdk none|threads|both] [--no-gather] [--journal memory|sqlite]
        [--chunked-mib 0] [--server stub|emulator] [--server-cpu-ms 0] [--compare DIR]
        [--requests]
    python benchmarks/pipeline_throughput.py --trace [--files 1000] [--rounds 3]

Against a server started in its own process for each latency setting (0: loopback as is;
0.02: 20 ms added to every request, a fair WAN), one of:

- ``stub`` (the default, issue #21's setting): an independent minimal aiohttp server that
  imports nothing of ``vidapi_async``. After the injected latency it answers, with fixed
  JSON of the platform's shapes, exactly what the clients ask: ``POST /oauth/token``
  and ``GET /auth`` (the SDK's password grant), ``GET /channels`` (the batch's channel
  check), ``GET /file/upload`` (an ``upload_url`` on a second port, as the platform's
  upload host is another host), the multipart ``POST /upload`` (body read in chunks and
  discarded; answers ``url``, ``name``, ``size`` and the rest of the upload answer's
  fields) and ``POST /me/videos`` (the fields asked, a fresh id). Its CPU per pipeline
  is a fraction of the clients', so the server does not cap them on a small machine.
  ``--server-cpu-ms MS`` makes it spend MS more of CPU a pipeline (a busy loop, half in
  the upload, half in the create, on its loop): a server that costs about what the
  client does (issue 43: 0.6 brings it to the lean client's CPU), sharing the 2 cores,
  where a client's extra CPU no longer hides in an idle core.
- ``emulator``: the bundled ``vidapi_async.emulator.Emulator`` (no ffprobe, plain seals),
  which stores every object in SQLite, hashes every upload and checks seals: closer to
  the platform's behaviour, but its CPU per pipeline is about the clients' own, so on 2
  cores it takes half the machine and caps every client alike.

The chunked rounds (``--chunked-mib``) always run against the emulator.

``--requests`` (stub only) prints, after each client's first round, the requests it made
per method and path, to check the stub serves the clients what they ask.

The rows, each client in a fresh child process that reports its own CPU and peak RSS;
each round runs every client once, starting with the next one each round (alternating):

- ``lean c=N``: the practical limit, a client of the batch's shape written on bare
  aiohttp (``child_lean``; it shares no code with ``vidapi_async``): the same requests
  and bytes (the channel list once; per file an address from a pool fetching them ahead,
  one multipart POST of the same body, one create POST of the same form);
- ``vidapi c=N``: ``BatchUploader`` at concurrency N (journal in memory, its default;
  ``--journal sqlite``: an SQLite file);
- ``gather c=N``: ``Client.upload_video`` for each file, N at once in ``asyncio.gather``
  (three requests in a row: its bound is two thirds of the others');
- ``sdk 16 threads`` (and with ``--sdk both`` ``sdk sequential``): the official
  ``dailymotion`` SDK 0.2.5 doing the same work (``upload`` then ``post('/me/videos')``),
  printed beside, not judged (its rate swings by a quarter between runs).

Printed: each row's median rate and its share of its latency bound (concurrency over
the requests in a row times the latency: 16 / (2 x 20 ms) = 400/s with addresses fetched
ahead), client and server CPU per pipeline, and ``vidapi / lean``: the ratio of the
medians and each round's own ratio (issue 33's target: >= 0.95). With concurrency N,
vidapi and the lean client keep N pipelines and up to N fetches of the next jobs'
addresses in flight; the SDK's N threads keep N requests. ``--chunked-mib``: a chunked
upload of one file, vidapi ``upload_file(chunked=True, workers=4)`` beside the SDK's
``upload(workers=4)``.

``--trace``: instead of the rounds, the lean client and the batch alternate ``--rounds``
times with every pipeline's stages stamped, in the children only (the batch's by
wrapping library functions in its child; nothing in the library is instrumented) and at
the stub (arrival and answer of each upload and create; the clocks are the system's
monotonic clock, shared by the processes). Printed: per stage the median and p90 over
the middle 80% of the jobs, each side's loop lag (a 5 ms sleeper's overshoot), and the
run's start-up, steady rate and tail.

The SDK is installed with --no-deps into a temporary folder (its declared dependency on
the PyPI ``asyncio`` package is obsolete); what it imports comes from this environment
(``pip install ".[test]"`` has requests, requests-toolbelt, aiofiles).

Until issue 33 the defaults were ``--files 100 --size-kib 256 --latencies 0,0.02
--rounds 2 --chunked-mib 256 --concurrency 1,4,16,64`` with no lean row: the commands
recorded in ``benchmarks/README.md`` before then give every flag they need but those.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from _checkout import checkout  # benchmarks/_checkout.py (sys.path[0] is this folder)

SDK_VERSION = "0.2.5"


# --- children --------------------------------------------------------------------------


def child_emulator(port_file: str, latency: float) -> None:
    from vidapi_async.emulator import Emulator, Faults

    async def main() -> None:
        # no ffprobe: its ~0.1 s per upload would hide what the clients cost; plain seals,
        # since the SDK's chunked mode re-encodes escaped ones (%2F sent as /)
        async with Emulator(
            faults=Faults(latency=latency), probe=False, escaped_seals=False
        ) as emu:
            write_atomically(port_file, emu.base_url)
            await asyncio.Event().wait()

    asyncio.run(main())


def child_emulator_tls(port_file: str, latency: float) -> None:
    """``child_emulator`` over https (its own self-signed certificate): the port file
    holds the base url and, after a space, the certificate's file for clients to trust."""
    from vidapi_async.emulator import Emulator, Faults

    async def main() -> None:
        async with Emulator(
            faults=Faults(latency=latency), probe=False, escaped_seals=False, tls=True
        ) as emu:
            write_atomically(port_file, f"{emu.base_url} {emu.ca_file}")
            await asyncio.Event().wait()

    asyncio.run(main())


def child_stub(port_file: str, latency: float, trace: bool = False) -> None:
    """The independent stub: aiohttp only, no ``vidapi_async`` import. ``trace``: each
    upload's and create's arrival and answer are stamped (``time.perf_counter``, the
    system's monotonic clock, which the clients' stamps share) and handed out by
    ``GET /_stub/trace``."""
    import itertools
    from collections import Counter

    from aiohttp import web

    counts: Counter[str] = Counter()
    serial = itertools.count(1)
    ports: dict[str, int] = {}
    channels = json.dumps(
        {
            "page": 1,
            "limit": 100,
            "total": 3,
            "has_more": False,
            "list": [
                {"id": c, "name": c.title(), "description": ""} for c in ("music", "news", "tech")
            ],
        }
    ).encode()
    token = json.dumps(
        {
            "access_token": "stub-access-token",
            "token_type": "Bearer",
            "expires_in": 36000,
            "scope": "manage_videos",
            "uid": "xstubu",
            "refresh_token": "stub-refresh-token",
        }
    ).encode()
    me = json.dumps(
        {"id": "xstubu", "username": "demo", "screenname": "Demo", "scope": "manage_videos"}
    ).encode()
    video = {
        "title": "",
        "channel": "news",
        "owner": "xstubu",
        "published": True,
        "mode": "vod",
        "status": "processing",
        "password_protected": False,
        "encoding_progress": 0,
    }

    def answer(body: bytes) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    stamps: list[tuple[str, str, float, float]] = []
    # --server-cpu-ms: CPU the stub spends per pipeline, half in each upload and create
    # (a busy loop on its own thread's CPU clock, on the loop: a server that costs CPU)
    burn = float(os.environ.get("STUB_CPU_MS", "0")) / 2 / 1000

    @web.middleware
    async def latency_mw(request: web.Request, handler):  # type: ignore[no-untyped-def]
        if request.path.startswith("/_stub/"):
            return await handler(request)
        counts[f"{request.method} {request.path}"] += 1
        if burn and request.path in ("/upload", "/me/videos"):
            until = time.thread_time() + burn
            while time.thread_time() < until:
                pass
        if trace:
            arrived = time.perf_counter()
            if latency > 0:
                await asyncio.sleep(latency)
            response = await handler(request)
            stamps.append((request.path, request.get("job", ""), arrived, time.perf_counter()))
            return response
        if latency > 0:
            await asyncio.sleep(latency)
        return await handler(request)

    async def oauth_token(request: web.Request) -> web.Response:
        await request.read()
        return answer(token)

    async def auth(request: web.Request) -> web.Response:
        return answer(me)

    async def get_channels(request: web.Request) -> web.Response:
        return answer(channels)

    async def file_upload(request: web.Request) -> web.Response:
        n = next(serial)
        base = f"http://127.0.0.1:{ports['upload']}"
        return answer(
            json.dumps(
                {
                    "upload_url": f"{base}/upload?uuid=u{n:031d}&seal=s{n:031d}",
                    "progress_url": f"{base}/progress?uuid=u{n:031d}",
                }
            ).encode()
        )

    async def upload(request: web.Request) -> web.Response:
        # multipart with one part: the file's bytes lie between the part's headers and
        # the closing boundary; read the body in chunks, keep none of it
        boundary = request.headers.get("Content-Type", "").split("boundary=", 1)[-1].strip('"')
        head, total = b"", 0
        async for chunk in request.content.iter_chunked(1 << 16):
            if len(head) < 4096:
                head += chunk[:4096]
            total += len(chunk)
        start = head.find(b"\r\n\r\n") + 4
        name = "file"
        disposition = head[:start].split(b'filename="', 1)
        if len(disposition) == 2:
            request["job"] = disposition[1].split(b'"', 1)[0].decode("utf-8", "replace")
            name = request["job"].rsplit(".", 1)[0]
        size = total - start - len(f"\r\n--{boundary}--\r\n")
        uuid = request.query.get("uuid", "")
        return answer(
            json.dumps(
                {
                    "acodec": "",
                    "bitrate": "",
                    "dimension": "",
                    "duration": "",
                    "format": "mp4",
                    "hash": "0" * 40,
                    "name": name,
                    "seal": "0" * 32,
                    "size": str(size),
                    "streamable": "No",
                    "vcodec": "",
                    "url": f"http://127.0.0.1:{ports['upload']}/files/{uuid}.mp4#stub",
                }
            ).encode()
        )

    async def create(request: web.Request) -> web.Response:
        form = await request.post()
        fields = request.query.get("fields", "id,title,channel,owner").split(",")
        values = {**video, "id": f"x{next(serial):06d}", "title": form.get("title", "")}
        request["job"] = values["title"]
        if "channel" in form:
            values["channel"] = form["channel"]
        return answer(json.dumps({f: values.get(f) for f in fields}).encode())

    async def my_videos(request: web.Request) -> web.Response:
        # The batch's adoption lists the account's videos once per run (none here).
        return answer(json.dumps({"list": [], "has_more": False, "page": 1}).encode())

    async def stub_requests(request: web.Request) -> web.Response:
        seen = dict(counts)
        counts.clear()
        return answer(json.dumps(seen).encode())

    async def stub_trace(request: web.Request) -> web.Response:
        seen = list(stamps)
        stamps.clear()
        return answer(json.dumps(seen).encode())

    async def main() -> None:
        app = web.Application(middlewares=[latency_mw], client_max_size=1 << 20)
        app.router.add_post("/oauth/token", oauth_token)
        app.router.add_get("/auth", auth)
        app.router.add_get("/channels", get_channels)
        app.router.add_get("/file/upload", file_upload)
        app.router.add_post("/upload", upload)
        app.router.add_post("/me/videos", create)
        app.router.add_get("/me/videos", my_videos)
        app.router.add_get("/me", auth)  # (the adoption's look at the account)
        app.router.add_get("/_stub/requests", stub_requests)
        app.router.add_get("/_stub/trace", stub_trace)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        for role in ("api", "upload"):  # the upload host apart, as on the platform
            site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
            await site.start()
            ports[role] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        write_atomically(port_file, f"http://127.0.0.1:{ports['api']}")
        await asyncio.Event().wait()

    asyncio.run(main())


def write_atomically(path: str, text: str) -> None:
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def counted_from_here() -> None:
    """Under ``pipeline_instructions.py`` (``PIPE_COUNT`` set: callgrind started with
    instrumentation off), the count starts here: the start-up's garbage collected and
    frozen (no full collection walks the imports' objects at a moment that depends on
    the run), then callgrind's instrumentation switched on (``callgrind_control``, from
    this process, which waits for it). Everything after is counted, the exit included."""
    if not os.environ.get("PIPE_COUNT"):
        return
    import gc

    gc.collect()
    gc.freeze()
    subprocess.run(
        ["callgrind_control", "--instr=on", str(os.getpid())],
        stdout=subprocess.DEVNULL,
        check=True,
    )


def child_vidapi(base_url: str, folder: str, concurrency: int) -> None:
    import vidapi_async as va

    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))
    journal = None  # in memory, the default
    if os.environ.get("PIPE_JOURNAL") == "sqlite":
        journal = os.path.join(os.path.dirname(folder), f"journal-{time.time_ns()}.sqlite")
    if TRACE:
        trace_batch()

    async def main() -> float:
        if TRACE:
            watch_loop()
        async with (
            va.Client(access_token="demo-token", base_url=base_url) as client,
            va.BatchUploader(client, concurrency=concurrency, journal=journal) as batch,
        ):
            jobs = (
                va.UploadJob(
                    path=p,
                    title=os.path.basename(p),
                    channel="news",
                    key=f"{p}-{time.time_ns()}",
                )
                for p in files
            )
            counted_from_here()
            start, cpu0 = time.perf_counter(), time.process_time()
            mark("run", "start")
            results = [r async for r in batch.run(jobs)]
            mark("run", "end")
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
        failed = [r for r in results if not r.ok]
        if failed:
            sys.exit(f"{len(failed)} jobs failed: {failed[0].error}")
        return elapsed, cpu

    elapsed, cpu = asyncio.run(main())
    report(elapsed, len(files), cpu)


# --- tracing (--trace): stamps in the children, read by trace_main --------------------

TRACE = os.environ.get("PIPE_TRACE")
"""In a child: the file its stamps go to (``--trace``); unset, nothing is stamped."""
_stamps: list[tuple[str, str, float]] = []
_lags: list[float] = []


def mark(job: str, event: str) -> None:
    """Stamp ``event`` of ``job`` (a file's name) now; nothing unless tracing. Called
    from the loop and from threads (``list.append`` is atomic)."""
    if TRACE:
        _stamps.append((job, event, time.perf_counter()))


def mark_worker(job: str) -> None:
    """The job's start, with the task that runs it (the worker, to find its next job)."""
    task = asyncio.current_task()
    mark(job, "J0")
    mark(job, "W:" + (task.get_name() if task is not None else "?"))


def watch_loop() -> None:
    """A task that sleeps 5 ms again and again and keeps how late it wakes (the loop's
    queue: callbacks and steps ahead of it), and writes the stamps as the process ends."""

    async def sleeper() -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.005)
            _lags.append(time.perf_counter() - t - 0.005)

    task = asyncio.create_task(sleeper())
    _keep.append(task)
    import atexit

    atexit.register(_dump)


_keep: list[object] = []


def _dump() -> None:
    assert TRACE
    with open(TRACE, "w") as f:
        json.dump({"stamps": _stamps, "lags": _lags}, f)


def trace_batch() -> None:
    """Stamp a batch job's stages by wrapping the library's functions in this child
    only (nothing in the library is instrumented): the job, its disk checks in a worker
    thread, the address taken, the upload (on the loop, and in the pump's thread), the
    create, each journal save."""
    import contextvars
    import functools

    import vidapi_async._transfer.uploads as calls
    from vidapi_async._aio import _pump
    from vidapi_async.batch import _journal, _runner, _spares

    current: contextvars.ContextVar[str] = contextvars.ContextVar("job", default="?")

    def around(owner: object, name: str, start: str, end: str, key: object) -> None:
        inner = getattr(owner, name)

        @functools.wraps(inner)
        async def wrapped(*args: object, **kwargs: object) -> object:
            job = key(*args) if callable(key) else current.get()
            mark(job, start)
            try:
                return await inner(*args, **kwargs)
            finally:
                mark(job, end)

        setattr(owner, name, wrapped)

    inner_job = _runner.BatchUploader._run_job_inner

    async def run_job(self: object, job: object, *args: object) -> object:
        name = os.path.basename(job.path)  # type: ignore[attr-defined]
        current.set(name)
        mark_worker(name)
        try:
            return await inner_job(self, job, *args)  # type: ignore[arg-type]
        finally:
            mark(name, "J1")

    _runner.BatchUploader._run_job_inner = run_job  # type: ignore[method-assign]
    prepare = _runner._prepare

    def traced_prepare(job: object) -> object:  # in the worker thread
        name = os.path.basename(job.path)  # type: ignore[attr-defined]
        mark(name, "P0")
        try:
            return prepare(job)  # type: ignore[arg-type]
        finally:
            mark(name, "P1")

    _runner._prepare = traced_prepare  # type: ignore[assignment]
    around(_spares.Spares, "take", "T0", "T1", None)
    around(calls.Uploads, "_send_file", "U0", "U1", None)
    around(_runner.BatchUploader, "_create", "C0", "C1", None)
    for journal in (_journal.MemoryJournal, _journal.SQLiteJournal):
        around(journal, "save", "S0", "S1", None)
    run = _pump._Job.run

    def traced_run(self: object) -> object:  # in the pump's thread
        name = os.path.basename(self.region.path)  # type: ignore[attr-defined]
        mark(name, "R0")
        try:
            return run(self)  # type: ignore[arg-type]
        finally:
            mark(name, "R1")

    _pump._Job.run = traced_run  # type: ignore[method-assign]


def child_lean(base_url: str, folder: str, concurrency: int) -> None:
    """The practical limit: a lean client of the batch's shape on bare aiohttp, sharing
    no code with ``vidapi_async``. The same wire work as ``BatchUploader`` (checked with
    ``--requests``): the channel list once, then per file an upload address from a pool
    that fetches them ahead (at most ``concurrency`` ready or under way, never more than
    the files left), one multipart POST to the upload address (the batch's body, byte
    for byte: a ``vidapi``-style boundary, the part's headers, the file, the closing
    boundary; the file read in a worker thread, so the loop never reads the disk) and
    one create POST with the batch's form (url, title, channel, published,
    is_created_for_kids, the job's tag) and ``fields`` query."""
    import hashlib
    import secrets
    import urllib.parse

    import aiohttp
    import yarl

    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))
    api = {"Authorization": "Bearer demo-token", "Accept": "application/json"}
    fields = "id,title,channel,owner,published,mode,status,password_protected,encoding_progress"
    stamp = time.time_ns()

    def tag_of(path: str) -> bytes:  # the batch's tag of a key with '/': a digest
        return f"{path}-{stamp}".encode()

    def body_of(path: str, boundary: str) -> bytes:  # in a worker thread
        name = os.path.basename(path)
        mark(name, "P0")
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="{name}"\r\nContent-Type: video/mp4\r\n\r\n'
        ).encode()
        with open(path, "rb") as f:
            body = head + f.read() + f"\r\n--{boundary}--\r\n".encode()
        mark(name, "P1")
        return body

    async def main() -> tuple[float, float]:
        if TRACE:
            watch_loop()
        connector = aiohttp.TCPConnector(limit=100)
        async with aiohttp.ClientSession(connector=connector) as session:
            counted_from_here()
            start, cpu0 = time.perf_counter(), time.process_time()
            mark("run", "start")
            async with session.get(f"{base_url}/channels?page=1&limit=100", headers=api) as r:
                r.raise_for_status()
                assert any(c["id"] == "news" for c in (await r.json())["list"])
            addresses: asyncio.Queue[str] = asyncio.Queue()
            left = [len(files)]  # addresses still to fetch
            fetchers: set[asyncio.Task[None]] = set()

            async def fetch_one() -> None:
                async with session.get(f"{base_url}/file/upload", headers=api) as r:
                    r.raise_for_status()
                    addresses.put_nowait((await r.json())["upload_url"])

            def ahead() -> None:  # keep `concurrency` addresses ready or coming
                while left[0] and addresses.qsize() + len(fetchers) < concurrency:
                    left[0] -= 1
                    task = asyncio.create_task(fetch_one())
                    fetchers.add(task)
                    task.add_done_callback(fetchers.discard)

            async def one(path: str) -> None:
                name = os.path.basename(path)
                mark_worker(name)
                ahead()
                mark(name, "T0")
                upload_url = await addresses.get()
                mark(name, "T1")
                ahead()
                boundary = "vidapi" + secrets.token_hex(16)
                body = await asyncio.to_thread(body_of, path, boundary)
                mark(name, "U0")
                async with session.post(
                    yarl.URL(upload_url, encoded=True),
                    data=body,
                    headers={
                        "Accept": "application/json",
                        "Content-Type": f"multipart/form-data; boundary={boundary}",
                    },
                ) as r:
                    r.raise_for_status()
                    file_url = (await r.json())["url"]
                mark(name, "U1")
                mark(name, "C0")
                form = urllib.parse.urlencode(
                    [
                        ("url", file_url),
                        ("title", os.path.basename(path)),
                        ("channel", "news"),
                        ("published", "true"),
                        ("is_created_for_kids", "false"),
                        ("tags", f"vidapih-{hashlib.sha256(tag_of(path)).hexdigest()[:32]}"),
                    ]
                )
                async with session.post(
                    f"{base_url}/me/videos?fields={fields}",
                    data=form,
                    headers={**api, "Content-Type": "application/x-www-form-urlencoded"},
                ) as r:
                    r.raise_for_status()
                    assert (await r.json())["id"]
                mark(name, "C1")
                mark(name, "J1")

            todo = iter(files)

            async def worker() -> None:
                for path in todo:
                    await one(path)

            await asyncio.gather(*(worker() for _ in range(concurrency)))
            mark("run", "end")
            return time.perf_counter() - start, time.process_time() - cpu0

    elapsed, cpu = asyncio.run(main())
    report(elapsed, len(files), cpu)


def child_gather(base_url: str, folder: str, concurrency: int) -> None:
    """``Client.upload_video`` (address, upload, create: three requests in a row) for
    every file, ``concurrency`` at once in ``asyncio.gather``."""
    import vidapi_async as va

    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))

    async def main() -> tuple[float, float]:
        async with va.Client(access_token="demo-token", base_url=base_url) as client:
            limit = asyncio.Semaphore(concurrency)

            async def one(path: str) -> None:
                async with limit:
                    await client.upload_video(path, title=os.path.basename(path), channel="news")

            start, cpu0 = time.perf_counter(), time.process_time()
            await asyncio.gather(*(one(p) for p in files))
            return time.perf_counter() - start, time.process_time() - cpu0

    elapsed, cpu = asyncio.run(main())
    report(elapsed, len(files), cpu)


def child_vidapi_chunked(base_url: str, path: str) -> None:
    import vidapi_async as va

    async def main() -> float:
        async with va.Client(access_token="demo-token", base_url=base_url) as client:
            start = time.perf_counter()
            await client.upload_file(path, chunked=True, workers=4)
            return time.perf_counter() - start

    report(asyncio.run(main()), 1)


def _sdk(base_url: str):  # type: ignore[no-untyped-def]
    import dailymotion

    d = dailymotion.Dailymotion(
        api_base_url=base_url, oauth_token_endpoint_url=base_url + "/oauth/token"
    )
    d.set_grant_type(
        "password",
        api_key="demo-client",
        api_secret="demo-secret",
        scope=["manage_videos"],
        info={"username": "demo", "password": "demo-password"},
    )
    return d


def child_sdk(base_url: str, folder: str, threads: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))
    d = _sdk(base_url)
    d.get("/auth")  # fetch the token before timing, as our client's first call would

    def one(path: str) -> None:
        url = d.upload(path)
        d.post(
            "/me/videos",
            {
                "url": url,
                "title": os.path.basename(path),
                "channel": "news",
                "published": "true",
                "is_created_for_kids": "false",
            },
        )

    start, cpu0 = time.perf_counter(), time.process_time()
    if threads <= 1:
        for p in files:
            one(p)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, files))
    report(time.perf_counter() - start, len(files), time.process_time() - cpu0)


def child_sdk_chunked(base_url: str, path: str) -> None:
    d = _sdk(base_url)
    d.get("/auth")
    start = time.perf_counter()
    d.upload(path, workers=4)
    report(time.perf_counter() - start, 1)


def report(elapsed: float, count: int, cpu: float = 0.0) -> None:
    """``cpu``: the client process's CPU seconds over the timed part."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "count": count, "peak_rss_kib": peak, "cpu": cpu}))


# --- the parent ------------------------------------------------------------------------


def run_child(args: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=3600,
    )
    if out.returncode != 0:
        raise SystemExit(f"child {args[0]} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def start_emulator(
    tmp: str, latency: float, server: str = "emulator"
) -> tuple[subprocess.Popen[bytes], str]:
    port_file = os.path.join(tmp, f"emu-{time.time_ns()}")
    proc = subprocess.Popen(
        [sys.executable, __file__, f"--child-{server}", port_file, str(latency)]
    )
    while not os.path.exists(port_file):
        time.sleep(0.05)
    with open(port_file) as f:
        return proc, f.read()


def stub_requests(base: str) -> dict[str, int]:
    """The stub's requests per method and path since the last call (then forgotten)."""
    import urllib.request

    with urllib.request.urlopen(base + "/_stub/requests") as r:  # noqa: S310 (our stub)
        return dict(sorted(json.loads(r.read()).items()))


def process_cpu(pid: int) -> float:
    """A process's CPU seconds so far (user + system; Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def install_sdk(tmp: str) -> str:
    target = os.path.join(tmp, "sdk")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            target,
            f"dailymotion=={SDK_VERSION}",
        ],
        check=True,
    )
    return target


def make_files(folder: str, count: int, size: int) -> None:
    os.makedirs(folder, exist_ok=True)
    for i in range(count):
        with open(os.path.join(folder, f"clip{i:04d}.mp4"), "wb") as f:
            f.write(os.urandom(size))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--files", type=int, default=1000, help="files a round, each client")
    parser.add_argument("--size-kib", type=int, default=64, help="each file's size")
    parser.add_argument(
        "--latencies", default="0.02", help="seconds added to every request, comma-separated"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each client once a round")
    parser.add_argument("--chunked-mib", type=int, default=0, help="0: no chunked rounds")
    parser.add_argument(
        "--concurrency", default="16", help="the concurrencies to run (comma-separated)"
    )
    parser.add_argument(
        "--compare",
        default=None,
        type=checkout,
        metavar="DIR",
        help="another checkout (another commit): its BatchUploader, alike, beside",
    )
    parser.add_argument(
        "--server",
        choices=("stub", "emulator"),
        default="stub",
        help="stub: an independent minimal server (default); emulator: the bundled one",
    )
    parser.add_argument(
        "--requests", action="store_true", help="stub: print each client's requests per path"
    )
    parser.add_argument(
        "--server-cpu-ms",
        type=float,
        default=0.0,
        metavar="MS",
        help="stub: CPU it spends per pipeline besides its own (half in each upload and "
        "create, a busy loop): about 0.6 makes it cost what the lean client does",
    )
    parser.add_argument(
        "--no-gather", action="store_true", help="leave out the upload_video x N gather row"
    )
    parser.add_argument(
        "--sdk",
        choices=("none", "threads", "both"),
        default="threads",
        help="the official SDK's rows: none, its 16 threads, or also sequential (slow)",
    )
    parser.add_argument(
        "--journal",
        choices=("memory", "sqlite"),
        default="memory",
        help="the batch's journal: in memory (BatchUploader's default) or an SQLite file",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="instead of the rounds: one batch and one lean run with each stage of every "
        "pipeline timed (where a pipeline waits), at the first latency and concurrency",
    )
    args = parser.parse_args()
    os.environ["STUB_CPU_MS"] = str(args.server_cpu_ms)  # read by the stub's process
    if args.trace:
        trace_main(args)
        return
    with tempfile.TemporaryDirectory(prefix="vidapi-bench-") as tmp:
        folder = os.path.join(tmp, "files")
        make_files(folder, args.files, args.size_kib * 1024)
        sdk_env: dict[str, str] = {}
        if args.sdk != "none" or args.chunked_mib:
            sdk_env = {"PYTHONPATH": install_sdk(tmp), "PYTHONWARNINGS": "ignore"}
        levels = [int(c) for c in args.concurrency.split(",")]
        journal_env = {"PIPE_JOURNAL": "sqlite"} if args.journal == "sqlite" else None
        configs: list[tuple[str, list[str], dict[str, str] | None]] = []
        for c in levels:
            configs += [
                (f"lean c={c}", ["--child-lean", "BASE", folder, str(c)], None),
                (f"vidapi c={c}", ["--child-vidapi", "BASE", folder, str(c)], journal_env),
            ]
            if args.compare:
                compare_env = {"PYTHONPATH": args.compare}
                configs.append(
                    (f"compare c={c}", ["--child-vidapi", "BASE", folder, str(c)], compare_env)
                )
            if not args.no_gather:
                configs.append((f"gather c={c}", ["--child-gather", "BASE", folder, str(c)], None))
        if args.sdk == "both":
            configs.append(("sdk sequential", ["--child-sdk", "BASE", folder, "1"], sdk_env))
        if args.sdk != "none":
            configs.append(("sdk 16 threads", ["--child-sdk", "BASE", folder, "16"], sdk_env))
        for latency in (float(x) for x in args.latencies.split(",")):
            emulator, base = start_emulator(tmp, latency, args.server)
            try:
                rates: dict[str, list[float]] = {name: [] for name, _, _ in configs}
                rss: dict[str, list[float]] = {name: [] for name, _, _ in configs}
                cpus: dict[str, list[float]] = {name: [] for name, _, _ in configs}
                server_cpus: dict[str, list[float]] = {name: [] for name, _, _ in configs}
                for round_ in range(args.rounds):
                    # Each round starts with the next client: none always runs first or
                    # always after the same one.
                    shift = round_ % len(configs)
                    for name, child, env in configs[shift:] + configs[:shift]:
                        if args.requests and args.server == "stub":
                            stub_requests(base)  # forget what came before
                        server_cpu0 = process_cpu(emulator.pid)
                        result = run_child([base if a == "BASE" else a for a in child], env)
                        server_cpu = process_cpu(emulator.pid) - server_cpu0
                        server_cpus[name].append(server_cpu / result["count"] * 1000)
                        if args.requests and args.server == "stub" and round_ == 0:
                            print(f"  requests of {name}: {stub_requests(base)}")
                        rates[name].append(result["count"] / result["seconds"])
                        rss[name].append(result["peak_rss_kib"] / 1024)
                        cpus[name].append(result["cpu"] / result["count"] * 1000)
                print_rows(args, latency, levels, configs, rates, rss, cpus, server_cpus)
            finally:
                emulator.terminate()
                emulator.wait()
        if args.chunked_mib:
            chunked_rounds(args, tmp, sdk_env)
    print(
        f"\nserver: {args.server}"
        + (f", {args.server_cpu_ms} ms of CPU a pipeline added" if args.server_cpu_ms else "")
    )
    print(f"command: python benchmarks/pipeline_throughput.py {' '.join(sys.argv[1:])}")
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


TRACE_SEGMENTS = (
    ("job start -> its upload reaches the server", "J0", "Ua"),
    ("  start -> its file work in a thread is done", "J0", "P1"),  # < 0: done ahead
    ("  file work in the thread (checks / read)", "P0", "P1"),
    ("  waiting for an address (take)", "T0", "T1"),
    ("  upload call -> pump thread runs it", "U0", "R0"),
    ("  pump thread starts -> request at the server", "R0", "Ua"),
    ("upload at the server (latency + body)", "Ua", "Ud"),
    ("upload answered -> back on the loop", "Ud", "U1"),
    ("  answered -> pump thread has the answer", "Ud", "R1"),
    ("  pump thread done -> its task resumes", "R1", "U1"),
    ("upload back -> create reaches the server", "U1", "Ca"),
    ("  upload back -> create call", "U1", "C0"),
    ("  create call -> at the server", "C0", "Ca"),
    ("create at the server (latency)", "Ca", "Cd"),
    ("create answered -> create call returns", "Cd", "C1"),
    ("create call returns -> job done", "C1", "J1"),
    ("job done -> the worker's next job starts", "J1", "next"),
    ("pipeline: job start -> done", "J0", "J1"),
    ("cycle: job start -> the worker's next start", "J0", "next"),
)


def trace_main(args: argparse.Namespace) -> None:
    """One lean and one batch run at the first latency and concurrency, alternating
    twice, with every pipeline's stages stamped (the children's stamps and the stub's
    share the system's monotonic clock): per stage, the median and p90 over the jobs
    of the middle 80% (the ramp-up and the tail left out), and the loop's lag."""
    import urllib.request

    latency = float(args.latencies.split(",")[0])
    concurrency = int(args.concurrency.split(",")[0])
    with tempfile.TemporaryDirectory(prefix="vidapi-trace-") as tmp:
        folder = os.path.join(tmp, "files")
        make_files(folder, args.files, args.size_kib * 1024)
        port_file = os.path.join(tmp, "stub")
        stub = subprocess.Popen(
            [sys.executable, __file__, "--child-stub", port_file, str(latency), "trace"]
        )
        try:
            while not os.path.exists(port_file):
                time.sleep(0.05)
            with open(port_file) as f:
                base = f.read()
            results: dict[str, list[dict[str, float]]] = {"lean": [], "vidapi": []}
            lags: dict[str, list[float]] = {"lean": [], "vidapi": []}
            rates: dict[str, list[float]] = {"lean": [], "vidapi": []}
            phases: dict[str, list[dict[str, float]]] = {"lean": [], "vidapi": []}
            for _ in range(max(1, args.rounds)):
                for kind in ("lean", "vidapi"):
                    out = os.path.join(tmp, f"trace-{kind}.json")
                    env = {"PIPE_TRACE": out}
                    if args.journal == "sqlite":
                        env["PIPE_JOURNAL"] = "sqlite"
                    got = run_child([f"--child-{kind}", base, folder, str(concurrency)], env)
                    rates[kind].append(got["count"] / got["seconds"])
                    with urllib.request.urlopen(base + "/_stub/trace") as r:  # noqa: S310
                        server = json.loads(r.read())
                    with open(out) as f:
                        traced = json.load(f)
                    results[kind] += segments_of(traced["stamps"], server)
                    phases[kind].append(phases_of(traced["stamps"]))
                    lags[kind] += traced["lags"]
        finally:
            stub.terminate()
            stub.wait()
    print(
        f"\nwhere a pipeline's time goes: {args.files} files of {args.size_kib} KiB, "
        f"c={concurrency}, {latency * 1000:.0f} ms a request, {max(1, args.rounds)} runs each "
        f"(journal: {args.journal}); ms, median / p90 over the middle 80% of the jobs"
    )
    print(f"  {'':48s} {'lean':>15s} {'vidapi batch':>15s} {'batch - lean':>13s}")
    for label, _, _ in TRACE_SEGMENTS:
        cells, medians = [], []
        for kind in ("lean", "vidapi"):
            values = sorted(r[label] for r in results[kind] if label in r)
            if values:
                med, p90 = statistics.median(values), values[int(len(values) * 0.9)]
                cells.append(f"{med * 1000:6.2f} / {p90 * 1000:6.2f}")
                medians.append(med)
            else:
                cells.append(f"{'-':>15s}")
        diff = f"{(medians[1] - medians[0]) * 1000:+7.2f}" if len(medians) == 2 else ""
        print(f"  {label:48s} {cells[0]:>15s} {cells[1]:>15s} {diff:>13s}")
    for kind in ("lean", "vidapi"):
        saves = [r["saves"] for r in results[kind] if "saves" in r]
        if saves:
            print(
                f"  {kind}: journal saves a job {statistics.median(saves):.0f}, their time "
                f"{statistics.median(r['saved'] for r in results[kind]) * 1000:.2f} ms"
            )
        ordered = sorted(lags[kind])
        if ordered:
            print(
                f"  {kind}: loop lag (a 5 ms sleeper's overshoot) p50 "
                f"{statistics.median(ordered) * 1000:.2f} ms, p90 "
                f"{ordered[int(len(ordered) * 0.9)] * 1000:.2f}, p99 "
                f"{ordered[int(len(ordered) * 0.99)] * 1000:.2f}; rates "
                + " ".join(f"{r:.0f}/s" for r in rates[kind])
            )
        for name in phases[kind][0]:
            print(
                f"  {kind}: {name}: "
                + " ".join(f"{p[name] * (1000 if 'ms' in name else 1):.1f}" for p in phases[kind])
            )
    print(f"command: python benchmarks/pipeline_throughput.py {' '.join(sys.argv[1:])}")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def phases_of(stamps: list[tuple[str, str, float]]) -> dict[str, float]:
    """The run's start-up, steady part and tail: when the first job started and ended,
    the rate of jobs done between the 10% and 90% marks, the time after the last start."""
    run = {event: at for job, event, at in stamps if job == "run"}
    starts = sorted(at for job, event, at in stamps if event == "J0")
    ends = sorted(at for job, event, at in stamps if event == "J1")
    n = len(ends)
    a, b = n // 10, n - n // 10 - 1
    return {
        "ms to the first job's start": starts[0] - run["start"],
        "ms to the first job done": ends[0] - run["start"],
        "steady rate /s (10%-90% of jobs done)": (b - a) / (ends[b] - ends[a]),
        "overall rate /s": n / (run["end"] - run["start"]),
        "ms from the last start to the end": run["end"] - starts[-1],
    }


def segments_of(
    stamps: list[tuple[str, str, float]], server: list[tuple[str, str, float, float]]
) -> list[dict[str, float]]:
    """Per job (of the middle 80% by start), each ``TRACE_SEGMENTS`` span it has."""
    events: dict[str, dict[str, float]] = {}
    workers: dict[str, str] = {}
    saves: dict[str, list[float]] = {}
    for job, event, at in stamps:
        if event.startswith("W:"):
            workers[job] = event
        elif event in ("S0", "S1"):
            saves.setdefault(job, []).append(at if event == "S1" else -at)
        else:
            events.setdefault(job, {}).setdefault(event, at)  # the first of each
    for path, job, arrived, answered in server:
        kind = {"/upload": "U", "/me/videos": "C"}.get(path)
        if kind is not None:
            events.setdefault(job, {}).setdefault(kind + "a", arrived)
            events[job].setdefault(kind + "d", answered)
    by_worker: dict[str, list[tuple[float, str]]] = {}
    for job, seen in events.items():
        if "J0" in seen and job in workers:
            by_worker.setdefault(workers[job], []).append((seen["J0"], job))
    for started in by_worker.values():
        started.sort()
        for (_, job), (at, _) in itertools.pairwise(started):
            events[job]["next"] = at
    order = sorted((seen["J0"], job) for job, seen in events.items() if "J0" in seen)
    cut = len(order) // 10
    out = []
    for _, job in order[cut : len(order) - cut]:
        seen = events[job]
        row = {
            label: seen[b] - seen[a] for label, a, b in TRACE_SEGMENTS if a in seen and b in seen
        }
        if job in saves:
            row["saves"] = len(saves[job]) / 2
            row["saved"] = sum(saves[job])
        out.append(row)
    return out


def print_rows(
    args: argparse.Namespace,
    latency: float,
    levels: list[int],
    configs: list[tuple[str, list[str], dict[str, str] | None]],
    rates: dict[str, list[float]],
    rss: dict[str, list[float]],
    cpus: dict[str, list[float]],
    server_cpus: dict[str, list[float]],
) -> None:
    """Each client's median rate, its share of the latency bound, and each batch's
    ratio to the lean client of the same concurrency (of the medians, and per round)."""
    print(
        f"\nlatency {latency * 1000:.0f} ms per request, {args.files} files of "
        f"{args.size_kib} KiB, median of {args.rounds} alternating rounds"
    )
    for c in levels:
        if latency > 0:
            print(
                f"  latency bound at c={c}: {c}/(2 x {latency * 1000:.0f} ms) = "
                f"{c / (2 * latency):.0f}/s with the address fetched ahead (upload, create); "
                f"{c / (3 * latency):.0f}/s for upload_video (address, upload, create)"
            )
    for name, _, _ in configs:
        rate = statistics.median(rates[name])
        share = ""
        if latency > 0:
            c = 16 if name.startswith("sdk") else int(name.rsplit("=", 1)[1])
            steps = 2 if name.startswith(("lean", "vidapi", "compare")) else 3
            share = f"  {rate / (c / (steps * latency)):4.2f} of its bound"
        print(
            f"  {name:16s} {rate:7.1f} pipelines/s{share}  "
            f"client CPU {statistics.median(cpus[name]):5.2f} ms/pipeline  "
            f"server CPU {statistics.median(server_cpus[name]):5.2f}  "
            f"peak RSS {max(rss[name]):6.1f} MiB  (rounds: "
            + " ".join(f"{r:.0f}" for r in rates[name])
            + ")"
        )
    for c in levels:
        lean = rates[f"lean c={c}"]
        for who in ("vidapi", "compare"):
            if f"{who} c={c}" not in rates:
                continue
            mine = rates[f"{who} c={c}"]
            per_round = [a / b for a, b in zip(mine, lean, strict=True)]
            of_medians = statistics.median(mine) / statistics.median(lean)
            print(
                f"  {who} c={c} / lean c={c}: x{of_medians:.2f} (medians); per round "
                + " ".join(f"{r:.2f}" for r in per_round)
                + f", median x{statistics.median(per_round):.2f} (target >= 0.95)"
            )


def chunked_rounds(args: argparse.Namespace, tmp: str, sdk_env: dict[str, str]) -> None:
    """One big file, ours and the SDK's parallel mode, at no added latency."""
    big = os.path.join(tmp, "big.mp4")
    with open(big, "wb") as f:
        for _ in range(args.chunked_mib):
            f.write(os.urandom(1 << 20))
    emulator, base = start_emulator(tmp, 0.0)
    try:
        print(
            f"\nchunked upload of {args.chunked_mib} MiB, 4 workers, median of "
            f"{args.rounds} rounds (alternating)"
        )
        speeds: dict[str, list[float]] = {"vidapi chunked": [], "sdk workers=4": []}
        peaks: dict[str, list[float]] = {"vidapi chunked": [], "sdk workers=4": []}
        for _ in range(args.rounds):
            for name, child, env in (
                ("vidapi chunked", ["--child-vidapi-chunked", base, big], None),
                ("sdk workers=4", ["--child-sdk-chunked", base, big], sdk_env),
            ):
                result = run_child(child, env)
                speeds[name].append(args.chunked_mib * 1.048576 / result["seconds"])
                peaks[name].append(result["peak_rss_kib"] / 1024)
        for name in speeds:
            print(
                f"  {name:16s} {statistics.median(speeds[name]):7.0f} MB/s  "
                f"peak RSS {max(peaks[name]):6.1f} MiB"
            )
    finally:
        emulator.terminate()
        emulator.wait()


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "--child-emulator":
        child_emulator(sys.argv[2], float(sys.argv[3]))
    elif mode == "--child-emulator-tls":
        child_emulator_tls(sys.argv[2], float(sys.argv[3]))
    elif mode == "--child-stub":
        child_stub(sys.argv[2], float(sys.argv[3]), trace=sys.argv[4:] == ["trace"])
    elif mode == "--child-vidapi":
        child_vidapi(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "--child-lean":
        child_lean(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "--child-gather":
        child_gather(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "--child-vidapi-chunked":
        child_vidapi_chunked(sys.argv[2], sys.argv[3])
    elif mode == "--child-sdk":
        child_sdk(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "--child-sdk-chunked":
        child_sdk_chunked(sys.argv[2], sys.argv[3])
    else:
        main()
