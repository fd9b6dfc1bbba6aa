"""upload_from_url: a remote file streamed through to an upload address; peak memory.

    python benchmarks/url_source_memory.py [--sizes-mib 20,1024,10240] [--rounds 2]

Three processes on 127.0.0.1: a source server (aiohttp, its own process) that answers
``GET /src/N`` with N MiB and a Content-Length, written from one 1 MiB block (no disk);
the sink of ``upload_throughput.py`` (its own process), which reads each multipart body
and discards it; and the measured client, a fresh child per run that calls
``Client.upload_from_url`` and reports its own peak RSS. The growth is that peak minus
the same child's peak for a 1 MiB source.

Target (issue #11): a 20 MiB source under 64 MiB of growth, a 10 GiB one the same.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from upload_throughput import read_text, run_sink, write_text

MiB = 1024 * 1024


def run_source(port_file: str) -> None:
    from aiohttp import web

    block = os.urandom(MiB)

    async def source(request: web.Request) -> web.StreamResponse:
        n = int(request.match_info["n"])
        resp = web.StreamResponse(headers={"Content-Type": "video/mp4"})
        resp.content_length = n * MiB
        await resp.prepare(request)
        for _ in range(n):
            await resp.write(block)
        await resp.write_eof()
        return resp

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/src/{n}", source)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        write_text(port_file, str(runner.addresses[0][1]))
        await asyncio.Event().wait()

    asyncio.run(main())


def run_client(source: str, sink: str) -> None:
    import vidapi_async as va

    async def main() -> tuple[float, int]:
        session = va.UploadSession(upload_url=sink, progress_url=sink)
        async with va.Client(access_token="unused", base_url="http://127.0.0.1:9") as client:
            start = time.perf_counter()
            uploaded = await client.upload_from_url(source, upload_session=session)
            return time.perf_counter() - start, int(uploaded.url.rsplit("#", 1)[1])

    elapsed, received = asyncio.run(main())
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "received": received, "peak_rss_kib": peak_kib}))


def client_run(source: str, sink: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child-client", source, sink],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        sys.exit(f"the client failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def start(kind: str, folder: str) -> tuple[subprocess.Popen[bytes], int]:
    port_file = os.path.join(folder, kind)
    proc = subprocess.Popen([sys.executable, __file__, f"--child-{kind}", port_file])
    while not os.path.exists(port_file):
        time.sleep(0.05)
    return proc, int(read_text(port_file))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes-mib", default="20,1024,10240")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vidapi-url-") as folder:
        source, source_port = start("source", folder)
        sink, sink_port = start("sink", folder)
        try:
            src = f"http://127.0.0.1:{source_port}/src"
            up = f"http://127.0.0.1:{sink_port}/upload"
            base = statistics.median(
                client_run(f"{src}/1", up)["peak_rss_kib"] / 1024 for _ in range(args.rounds)
            )
            print(f"baseline: a 1 MiB source, peak RSS {base:.1f} MiB")
            for size in (int(s) for s in args.sizes_mib.split(",")):
                runs = [client_run(f"{src}/{size}", up) for _ in range(args.rounds)]
                for run in runs:
                    if run["received"] < size * MiB:
                        sys.exit(f"the sink received {run['received']} bytes of {size} MiB")
                peak = statistics.median(r["peak_rss_kib"] / 1024 for r in runs)
                rate = statistics.median(size * MiB / r["seconds"] / 1e6 for r in runs)
                print(
                    f"{size:6d} MiB source: peak RSS {peak:6.1f} MiB, growth {peak - base:5.1f} "
                    f"MiB (target < 64), {rate:5.0f} MB/s, median of {args.rounds}"
                )
        finally:
            for proc in (source, sink):
                proc.terminate()
                proc.wait()
    print(f"\ncommand: python benchmarks/url_source_memory.py {' '.join(sys.argv[1:])}")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child-source":
        run_source(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "--child-sink":
        run_sink(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "--child-client":
        run_client(sys.argv[2], sys.argv[3])
    else:
        main()
