"""Single-file upload: throughput and peak memory of vidapi_async beside curl.

    python benchmarks/upload_throughput.py [--size-mib 1024] [--rounds 3]

A sink server (a separate process on 127.0.0.1) reads each multipart body and throws
it away. In the same run, alternating rounds, it times:

- ``vidapi``: ``Client.upload_file`` in a fresh child process that reports its own peak
  RSS; the same child uploading a 1 MiB file gives the baseline, so the growth is what
  the file size costs;
- ``curl``: ``curl -F file=@PATH URL`` (a C client) against the same server.

It prints MB/s per round, the medians, the vidapi/curl ratio, and the RSS growth.
Targets (issue #2): ratio >= 0.9, RSS growth <= 32 MiB whatever the file size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MiB = 1024 * 1024


# --- the sink server (its own process) ----------------------------------------------------


def run_sink(port_file: str) -> None:
    from aiohttp import web

    async def upload(request: web.Request) -> web.Response:
        if "chunked" in request.headers.get("Transfer-Encoding", ""):
            return web.json_response({"error": "chunked refused"}, status=411)
        received = 0
        async for chunk in request.content.iter_any():
            received += len(chunk)
        return web.json_response(
            {"url": f"http://127.0.0.1/files/x.mp4#{received}", "size": str(received)}
        )

    async def main() -> None:
        app = web.Application(client_max_size=1 << 40)
        app.router.add_post("/upload", upload)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = runner.addresses[0][1]
        write_text(port_file, str(port))
        await asyncio.Event().wait()

    asyncio.run(main())


# --- the measured client (its own fresh process per run) -----------------------------------


def run_client(url: str, path: str, chunk_size: int, sendfile: bool) -> None:
    import vidapi_async as va

    async def main() -> tuple[float, int | None]:
        session = va.UploadSession(upload_url=url, progress_url=url)
        token = "unused"  # the upload host never sees a token
        # sendfile off: the path TLS connections take
        async with va.Client(
            access_token=token, base_url="http://127.0.0.1:9", sendfile=sendfile
        ) as client:
            start = time.perf_counter()
            # Single-shot at every size (files of 64 MiB or more go chunked by default,
            # and this sink answers each request with a descriptor: no chunked protocol).
            uploaded = await client.upload_file(
                path, upload_session=session, read_size=chunk_size, chunked=False
            )
            elapsed = time.perf_counter() - start
        return elapsed, uploaded.size

    elapsed, received = asyncio.run(main())
    if received is None or received <= os.path.getsize(path):
        sys.exit(f"the sink received {received} bytes: less than the file")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "peak_rss_kib": peak_kib}))


def client_run(url: str, path: str, chunk_size: int, sendfile: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child-client", url, path, str(chunk_size), str(sendfile)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def curl_run(url: str, path: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["curl", "-sS", "-o", "/dev/null", "-F", f"file=@{path}", url],
        check=True,
    )
    return time.perf_counter() - start


def write_text(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def read_text(path: str) -> str:
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        return f.read()


def make_file(path: str, size: int) -> None:
    with open(path, "wb") as f:
        block = os.urandom(MiB)
        for _ in range(size // MiB):
            f.write(block)
        f.write(os.urandom(size % MiB))


def warm(path: str) -> None:
    with open(path, "rb") as f:
        while f.read(8 * MiB):
            pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunk-kib", type=int, default=1024)
    parser.add_argument(
        "--no-sendfile",
        action="store_true",
        help="read chunks in a worker thread, as over TLS, instead of sendfile(2)",
    )
    args = parser.parse_args()
    if shutil.which("curl") is None:
        sys.exit("curl is needed as the reference: run scripts/install-bench-deps as root")
    size = args.size_mib * MiB
    chunk = args.chunk_kib * 1024
    with tempfile.TemporaryDirectory(prefix="vidapi-bench-") as tmp:
        big, small = os.path.join(tmp, "big.bin"), os.path.join(tmp, "small.bin")
        make_file(big, size)
        make_file(small, MiB)
        warm(big)
        port_file = os.path.join(tmp, "port")
        sink = subprocess.Popen([sys.executable, __file__, "--child-sink", port_file])
        try:
            while not read_text(port_file):
                time.sleep(0.05)
            url = f"http://127.0.0.1:{read_text(port_file)}/upload?uuid=bench&seal=x"
            ours: list[float] = []
            theirs: list[float] = []
            growth: list[float] = []
            ratios: list[float] = []
            for r in range(args.rounds):
                sendfile = not args.no_sendfile
                base = client_run(url, small, chunk, sendfile)["peak_rss_kib"]
                run = client_run(url, big, chunk, sendfile)
                c = curl_run(url, big)
                ours.append(size / run["seconds"] / 1e6)
                theirs.append(size / c / 1e6)
                growth.append((run["peak_rss_kib"] - base) / 1024)
                ratios.append(ours[-1] / theirs[-1])
                print(
                    f"round {r + 1}: vidapi {ours[-1]:5.0f} MB/s  curl {theirs[-1]:5.0f} MB/s  "
                    f"ratio {ratios[-1]:.2f}  "
                    f"peak RSS {run['peak_rss_kib'] / 1024:6.1f} MiB "
                    f"(1 MiB file: {base / 1024:6.1f} MiB, growth {growth[-1]:5.1f} MiB)"
                )
        finally:
            sink.terminate()
            sink.wait()
    m_ours, m_theirs = statistics.median(ours), statistics.median(theirs)
    print()
    print(
        f"command: python benchmarks/upload_throughput.py --size-mib {args.size_mib} "
        f"--rounds {args.rounds} --chunk-kib {args.chunk_kib}"
        + (" --no-sendfile" if args.no_sendfile else "")
    )
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        f"median vidapi {m_ours:.0f} MB/s, curl {m_theirs:.0f} MB/s; median of the "
        f"per-round ratios {statistics.median(ratios):.2f} (target >= 0.9)"
    )
    print(
        f"median RSS growth for a {args.size_mib} MiB file over a 1 MiB file: "
        f"{statistics.median(growth):.1f} MiB (target <= 32)"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child-sink":
        run_sink(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "--child-client":
        run_client(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "True")
    else:
        main()
