"""Peak memory of many concurrent large uploads.

    python benchmarks/concurrent_uploads_memory.py [--uploads 64] [--size-mib 1024]
        [--mode single|chunked]

A sink server (its own process on 127.0.0.1) reads and discards every body. A fresh
child process starts ``--uploads`` uploads of ``--size-mib`` each at once with
``Client.upload_file`` and reports its own peak RSS; the same child with 1 MiB files
gives the baseline. The files are sparse (no disk space, read as zeros): what is measured
is the client's memory, which does not depend on the bytes.

Target (issue #4): 64 concurrent 1 GiB uploads under 256 MiB peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

MiB = 1 << 20


def write_atomically(path: str, text: str) -> None:
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def run_sink(port_file: str) -> None:
    from aiohttp import web

    held: dict[str, int] = {}  # uuid -> bytes received (ranges never overlap here)

    async def upload(request: web.Request) -> web.Response:
        received = 0
        async for chunk in request.content.iter_any():
            received += len(chunk)
        rng = request.headers.get("Content-Range")
        if rng:  # the chunked protocol: 200 once every byte of the file has arrived
            uuid = request.query["uuid"]
            total = int(rng.rsplit("/", 1)[1])
            held[uuid] = held.get(uuid, 0) + received
            if held[uuid] < total:
                return web.json_response({}, status=202, headers={"Range": f"0-0/{total}"})
        return web.json_response({"url": f"http://127.0.0.1/f#{received}", "size": "1"})

    async def main() -> None:
        app = web.Application(client_max_size=1 << 40)
        app.router.add_post("/upload", upload)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0, backlog=1024).start()
        write_atomically(port_file, str(runner.addresses[0][1]))
        await asyncio.Event().wait()

    asyncio.run(main())


def run_client(url: str, folder: str, mode: str, sendfile: bool) -> None:
    import vidapi_async as va

    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))

    async def main() -> float:
        async with va.Client(  # sendfile off: the path TLS connections take
            access_token="unused",
            base_url="http://127.0.0.1:9",
            connection_limit=256,
            sendfile=sendfile,
        ) as client:
            start = time.perf_counter()
            await asyncio.gather(
                *(
                    client.upload_file(
                        p,
                        upload_session=va.UploadSession(f"{url}&uuid={i}", url),
                        chunked=mode == "chunked",
                        workers=2,
                    )
                    for i, p in enumerate(files)
                )
            )
            return time.perf_counter() - start

    elapsed = asyncio.run(main())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "peak_rss_kib": peak}))


def sparse_files(folder: str, count: int, size: int) -> None:
    os.makedirs(folder, exist_ok=True)
    for i in range(count):
        with open(os.path.join(folder, f"f{i:03d}.bin"), "wb") as f:
            f.truncate(size)


def child(url: str, folder: str, mode: str, sendfile: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child-client", url, folder, mode, str(sendfile)],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--uploads", type=int, default=64)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--mode", choices=("single", "chunked"), default="single")
    parser.add_argument(
        "--no-sendfile", action="store_true", help="read chunks in worker threads, as over TLS"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vidapi-bench-") as tmp:
        big, small = os.path.join(tmp, "big"), os.path.join(tmp, "small")
        sparse_files(big, args.uploads, args.size_mib * MiB)
        sparse_files(small, args.uploads, MiB)
        port_file = os.path.join(tmp, "port")
        sink = subprocess.Popen([sys.executable, __file__, "--child-sink", port_file])
        try:
            while not os.path.exists(port_file):
                time.sleep(0.05)
            with open(port_file) as f:
                url = f"http://127.0.0.1:{f.read()}/upload?seal=x"
            base = child(url, small, args.mode, not args.no_sendfile)
            run = child(url, big, args.mode, not args.no_sendfile)
        finally:
            sink.terminate()
            sink.wait()
    total = args.uploads * args.size_mib * MiB
    path = "thread reads" if args.no_sendfile else "sendfile"
    print(
        f"{args.uploads} concurrent uploads of {args.size_mib} MiB ({args.mode}, {path}): "
        f"{run['seconds']:.1f} s, {total / run['seconds'] / 1e6:.0f} MB/s in all"
    )
    print(
        f"peak RSS {run['peak_rss_kib'] / 1024:.1f} MiB (target < 256); the same with "
        f"1 MiB files {base['peak_rss_kib'] / 1024:.1f} MiB"
    )
    print(
        f"command: python benchmarks/concurrent_uploads_memory.py --uploads {args.uploads} "
        f"--size-mib {args.size_mib} --mode {args.mode}"
        + (" --no-sendfile" if args.no_sendfile else "")
    )
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child-sink":
        run_sink(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "--child-client":
        run_client(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "True")
    else:
        main()
