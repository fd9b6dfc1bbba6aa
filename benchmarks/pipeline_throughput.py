"""Whole pipelines (upload address, upload, create) per second, and peak memory.

    python benchmarks/pipeline_throughput.py [--files 100] [--size-kib 256]
        [--latencies 0,0.02] [--rounds 2] [--chunked-mib 256] [--server stub|emulator]

Against a server started in its own process for each latency setting (0: loopback as is;
0.02: 20 ms added to every request, a fair WAN), one of:

- ``stub`` (the default, issue #21's setting): an independent minimal aiohttp server that
  imports nothing of ``vidapi_async``. After the injected latency it answers, with fixed
  JSON of the platform's shapes, exactly what the two clients ask: ``POST /oauth/token``
  and ``GET /auth`` (the SDK's password grant), ``GET /channels`` (the batch's channel
  check), ``GET /file/upload`` (an ``upload_url`` on a second port, as the platform's
  upload host is another host), the multipart ``POST /upload`` (body read in chunks and
  discarded; answers ``url``, ``name``, ``size`` and the rest of the upload answer's
  fields) and ``POST /me/videos`` (the fields asked, a fresh id). Its CPU per pipeline
  is a fraction of the clients', so the server does not cap them on a small machine.
- ``emulator``: the bundled ``vidapi_async.emulator.Emulator`` (no ffprobe, plain seals),
  which stores every object in SQLite, hashes every upload and checks seals: closer to
  the platform's behaviour, but its CPU per pipeline is about the clients' own, so on 2
  cores it takes half the machine and caps every client alike.

The chunked rounds (``--chunked-mib``) always run against the emulator.

``--requests`` (stub only) prints, after each client's first round, the requests it made
per method and path, to check the stub serves both clients what they ask.

In the same run:

- vidapi ``BatchUploader`` at concurrency 1, 4, 16 and 64 (no journal);
- the official ``dailymotion`` SDK 0.2.5 doing the same work (``upload`` then
  ``post('/me/videos')``) sequentially, and from a pool of 16 threads.

Each client runs in a fresh child process that reports its own peak RSS; each round
runs every client once, starting with the next one each round. ``x of its 16 threads``
is the ratio of the medians, ``per round`` the median of the rounds' own ratios. With
concurrency N, vidapi keeps N pipelines and up to N fetches of the next jobs' addresses
in flight (on connections of its pool no pipeline needs); the SDK's N threads keep N
requests. Then a chunked
upload of one ``--chunked-mib`` file: vidapi ``upload_file(chunked=True, workers=4)``
beside the SDK's ``upload(workers=4)``.

The SDK is installed with --no-deps into a temporary folder (its declared dependency on
the PyPI ``asyncio`` package is obsolete); what it imports comes from this environment
(``pip install ".[test]"`` has requests, requests-toolbelt, aiofiles).
"""

from __future__ import annotations

import argparse
import asyncio
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


def child_stub(port_file: str, latency: float) -> None:
    """The independent stub: aiohttp only, no ``vidapi_async`` import."""
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

    @web.middleware
    async def latency_mw(request: web.Request, handler):  # type: ignore[no-untyped-def]
        if request.path == "/_stub/requests":
            return await handler(request)
        counts[f"{request.method} {request.path}"] += 1
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
            name = disposition[1].split(b'"', 1)[0].decode("utf-8", "replace").rsplit(".", 1)[0]
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
        if "channel" in form:
            values["channel"] = form["channel"]
        return answer(json.dumps({f: values.get(f) for f in fields}).encode())

    async def stub_requests(request: web.Request) -> web.Response:
        seen = dict(counts)
        counts.clear()
        return answer(json.dumps(seen).encode())

    async def main() -> None:
        app = web.Application(middlewares=[latency_mw], client_max_size=1 << 20)
        app.router.add_post("/oauth/token", oauth_token)
        app.router.add_get("/auth", auth)
        app.router.add_get("/channels", get_channels)
        app.router.add_get("/file/upload", file_upload)
        app.router.add_post("/upload", upload)
        app.router.add_post("/me/videos", create)
        app.router.add_get("/_stub/requests", stub_requests)
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


def child_vidapi(base_url: str, folder: str, concurrency: int) -> None:
    import vidapi_async as va

    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))

    async def main() -> float:
        async with (
            va.Client(access_token="demo-token", base_url=base_url) as client,
            va.BatchUploader(client, concurrency=concurrency) as batch,
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
            start, cpu0 = time.perf_counter(), time.process_time()
            results = [r async for r in batch.run(jobs)]
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
        failed = [r for r in results if not r.ok]
        if failed:
            sys.exit(f"{len(failed)} jobs failed: {failed[0].error}")
        return elapsed, cpu

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
        description=__doc__.split("\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--files", type=int, default=100, help="files a round, each client")
    parser.add_argument("--size-kib", type=int, default=256, help="each file's size")
    parser.add_argument(
        "--latencies", default="0,0.02", help="seconds added to every request, comma-separated"
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each client once a round")
    parser.add_argument("--chunked-mib", type=int, default=256, help="0: no chunked rounds")
    parser.add_argument(
        "--concurrency", default="1,4,16,64", help="the BatchUploader concurrencies to run"
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vidapi-bench-") as tmp:
        folder = os.path.join(tmp, "files")
        make_files(folder, args.files, args.size_kib * 1024)
        sdk_env = {"PYTHONPATH": install_sdk(tmp), "PYTHONWARNINGS": "ignore"}
        levels = [int(c) for c in args.concurrency.split(",")]
        configs: list[tuple[str, list[str], dict[str, str] | None]] = [
            (f"vidapi c={c}", ["--child-vidapi", "BASE", folder, str(c)], None) for c in levels
        ]
        if args.compare:
            configs += [
                (
                    f"compare c={c}",
                    ["--child-vidapi", "BASE", folder, str(c)],
                    {"PYTHONPATH": args.compare},
                )
                for c in levels
            ]
        configs += [
            ("sdk sequential", ["--child-sdk", "BASE", folder, "1"], sdk_env),
            ("sdk 16 threads", ["--child-sdk", "BASE", folder, "16"], sdk_env),
        ]
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
                print(
                    f"\nlatency {latency * 1000:.0f} ms per request, {args.files} files of "
                    f"{args.size_kib} KiB, median of {args.rounds} rounds"
                )
                seq = statistics.median(rates["sdk sequential"])
                pool = statistics.median(rates["sdk 16 threads"])
                for name, _, _ in configs:
                    rate = statistics.median(rates[name])
                    per_round = statistics.median(
                        a / b for a, b in zip(rates[name], rates["sdk 16 threads"], strict=True)
                    )
                    print(
                        f"  {name:16s} {rate:7.1f} pipelines/s  x{rate / seq:5.2f} of sdk "
                        f"sequential  x{rate / pool:5.2f} of its 16 threads "
                        f"(per round {per_round:4.2f})  "
                        f"client CPU {statistics.median(cpus[name]):5.2f} ms/pipeline  "
                        f"server CPU {statistics.median(server_cpus[name]):5.2f}  "
                        f"peak RSS {max(rss[name]):6.1f} MiB"
                    )
            finally:
                emulator.terminate()
                emulator.wait()
        if args.chunked_mib:
            chunked_rounds(args, tmp, sdk_env)
    print(f"\nserver: {args.server}")
    print(f"command: python benchmarks/pipeline_throughput.py {' '.join(sys.argv[1:])}")
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")


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
        child_stub(sys.argv[2], float(sys.argv[3]))
    elif mode == "--child-vidapi":
        child_vidapi(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "--child-vidapi-chunked":
        child_vidapi_chunked(sys.argv[2], sys.argv[3])
    elif mode == "--child-sdk":
        child_sdk(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "--child-sdk-chunked":
        child_sdk_chunked(sys.argv[2], sys.argv[3])
    else:
        main()
