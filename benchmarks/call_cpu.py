"""CPU per API call: ``Client.get_video`` beside bare aiohttp doing the same GET and ``json()``.

    python benchmarks/call_cpu.py [--calls 5000] [--concurrency 16] [--rounds 6] [--compare DIR]

A small aiohttp server in its own process answers ``GET /video/<id>`` with a video of seven
fields (the same bytes for every call). Each round runs, in fresh child processes and in
alternating order, the reference (one ``aiohttp.ClientSession``, ``session.get`` with the
``fields`` query, ``raise_for_status``, ``await resp.json()``) and vidapi
(``Client.get_video(id, fields=[...7...])``), each making ``--calls`` calls at
``--concurrency``. A child measures its own CPU time (user + system, ``os.times``) over the
calls only, after 200 warm-up calls; the figure is CPU microseconds per call. The ratio of
the two in the same round is what counts on this noisy 2-core machine: read the median of
the per-round ratios (issue #21's target: <= 1.2). ``--compare DIR`` also runs the vidapi
child on another checkout (``PYTHONPATH=DIR``: the code before a change), in the same
alternation, so before and after are measured in one run. ``--like-for-like`` adds a
second reference: bare aiohttp with the client's default timeouts (``sock_read``, the
``Timeouts.api_read`` bound on silence, arms a timer for every read of an answer).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

FIELDS = ["id", "title", "channel", "owner", "status", "duration", "password_protected"]
WARMUP = 200


def child_server(port_file: str) -> None:
    from aiohttp import web

    body = json.dumps(
        {
            "id": "x8abc12",
            "title": "A title with some length to it",
            "channel": "news",
            "owner": "x1fz4ii",
            "status": "published",
            "duration": 3692,
            "password_protected": False,
        }
    ).encode()

    async def video(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/video/{id}", video)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        write_port(port_file, runner.addresses[0][1])
        await asyncio.Event().wait()

    asyncio.run(main())


def write_port(path: str, port: int) -> None:
    with open(path + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(path + ".tmp", path)


async def _run(calls: int, concurrency: int, one: object) -> float:
    call = one  # an async callable taking no argument
    sem = asyncio.Semaphore(concurrency)

    async def guarded() -> None:
        async with sem:
            await call()  # type: ignore[operator]

    await asyncio.gather(*(guarded() for _ in range(WARMUP)))
    start = os.times()
    await asyncio.gather(*(guarded() for _ in range(calls)))
    end = os.times()
    return (end.user - start.user) + (end.system - start.system)


def child_bare(base_url: str, calls: int, concurrency: int, timeouts: bool = False) -> None:
    import aiohttp

    async def main() -> float:
        conn = aiohttp.TCPConnector(limit=100)
        # --like-for-like: the client's default Timeouts() (api_total, connect, api_read)
        timeout = aiohttp.ClientTimeout(total=120, sock_connect=30, sock_read=60)
        async with aiohttp.ClientSession(
            connector=conn,
            headers={"Authorization": "Bearer demo-token"},
            **({"timeout": timeout} if timeouts else {}),  # type: ignore[arg-type]
        ) as session:
            url = f"{base_url}/video/x8abc12"
            params = {"fields": ",".join(FIELDS)}

            async def one() -> None:
                async with session.get(url, params=params) as resp:
                    resp.raise_for_status()
                    data = await resp.json()
                    assert data["id"] == "x8abc12"

            return await _run(calls, concurrency, one)

    print(json.dumps({"cpu": asyncio.run(main())}))


def child_vidapi(base_url: str, calls: int, concurrency: int) -> None:
    import vidapi_async as va

    async def main() -> float:
        async with va.Client(access_token="demo-token", base_url=base_url) as client:

            async def one() -> None:
                video = await client.get_video("x8abc12", fields=FIELDS)
                assert video.id == "x8abc12"

            return await _run(calls, concurrency, one)

    print(json.dumps({"cpu": asyncio.run(main())}))


def run_child(
    kind: str, base_url: str, calls: int, concurrency: int, compare: str | None = None
) -> float:
    env = dict(os.environ)
    if kind == "compare":
        assert compare is not None
        kind = "vidapi"
        env["PYTHONPATH"] = os.path.abspath(compare)
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, base_url, str(calls), str(concurrency)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    return float(json.loads(out.strip().splitlines()[-1])["cpu"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument(
        "--compare", metavar="DIR", help="also run vidapi from this checkout (the old code)"
    )
    parser.add_argument(
        "--like-for-like",
        action="store_true",
        help="also run bare aiohttp with the client's timeouts (sock_read included)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        port_file = os.path.join(tmp, "port")
        server = subprocess.Popen([sys.executable, __file__, "--child", "server", port_file])
        try:
            for _ in range(200):
                if os.path.exists(port_file):
                    break
                subprocess.run(["sleep", "0.05"], check=True)
            with open(port_file) as f:
                base_url = f"http://127.0.0.1:{f.read().strip()}"
            ratios, bare_us, vid_us = [], [], []
            old_ratios, old_us, same_us, same_ratios = [], [], [], []
            kinds = ["bare", "vidapi"] + (["compare"] if args.compare else [])
            kinds += ["bare-timeouts"] if args.like_for_like else []
            for r in range(args.rounds):
                order = kinds if r % 2 == 0 else kinds[::-1]
                got = {
                    k: run_child(k, base_url, args.calls, args.concurrency, args.compare)
                    for k in order
                }
                b = got["bare"] / args.calls * 1e6
                v = got["vidapi"] / args.calls * 1e6
                bare_us.append(b)
                vid_us.append(v)
                ratios.append(v / b)
                line = (
                    f"round {r + 1}: bare aiohttp {b:6.1f} us/call  vidapi {v:6.1f} us/call"
                    f"  ratio {v / b:.2f}"
                )
                if args.compare:
                    o = got["compare"] / args.calls * 1e6
                    old_us.append(o)
                    old_ratios.append(o / b)
                    line += f"  compare {o:6.1f} us/call  ratio {o / b:.2f}"
                if args.like_for_like:
                    s = got["bare-timeouts"] / args.calls * 1e6
                    same_us.append(s)
                    same_ratios.append(v / s)
                    line += f"  bare+timeouts {s:6.1f} us/call (vidapi {v / s:.2f}x)"
                print(line, flush=True)
        finally:
            server.terminate()
            server.wait()
    print()
    print(
        "command: python benchmarks/call_cpu.py "
        f"--calls {args.calls} --concurrency {args.concurrency} --rounds {args.rounds}"
        + (f" --compare {args.compare}" if args.compare else "")
        + (" --like-for-like" if args.like_for_like else "")
    )
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        f"median bare aiohttp {statistics.median(bare_us):.1f} us/call, "
        f"vidapi {statistics.median(vid_us):.1f} us/call; "
        f"median of the per-round ratios {statistics.median(ratios):.2f} (target <= 1.2)"
    )
    if args.compare:
        print(
            f"compare ({args.compare}): median {statistics.median(old_us):.1f} us/call; "
            f"median of the per-round ratios {statistics.median(old_ratios):.2f}"
        )
    if args.like_for_like:
        print(
            f"bare aiohttp with the client's timeouts: median {statistics.median(same_us):.1f} "
            f"us/call; vidapi over it, median of the per-round ratios "
            f"{statistics.median(same_ratios):.2f}"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind = sys.argv[2]
        if kind == "server":
            child_server(sys.argv[3])
        else:
            args3 = (sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
            if kind == "bare-timeouts":
                child_bare(*args3, timeouts=True)
            else:
                (child_bare if kind == "bare" else child_vidapi)(*args3)
    else:
        main()
