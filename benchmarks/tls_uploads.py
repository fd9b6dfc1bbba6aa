"""Uploads over TLS: throughput and CPU against curl, event-loop lag while uploads run,
peak memory. The real platform is https only, so this is the path users get.

    python benchmarks/tls_uploads.py [--size-mib 1024] [--rounds 3] [--compare DIR]

The sink is nginx (Debian's ``nginx-light``: ``scripts/install-bench-deps`` installs it)
in its own process with a self-signed certificate: a C server that reads and discards
each body, answering 200 with a descriptor (single-shot) or 202 with the range it got
(chunked).

It measures, in one run:

- single 1 GiB upload, alternating rounds (each round starts with the next runner):
  ``Client.upload_file`` in a fresh child process and ``curl -F file=@PATH`` (both over
  TLS to the same nginx): MB/s, CPU seconds per GiB (process CPU of the child, timed from
  before it makes its TLS trust and client; curl's from RUSAGE_CHILDREN, its process
  start included: about 9 ms and 8 ms of CPU, under 1% of a 1 GiB run);
- event-loop lag while N uploads run in one process (a task sleeping 10 ms records how
  late it wakes: p50, p99, max), with the child's peak RSS: 1, 16 and 64 single-shot
  uploads, and 16 chunked uploads of 4 workers each.

``--compare DIR`` runs the same children on another checkout of vidapi_async (e.g. a
``git worktree`` of an older commit) in the same run, alternating, for a before/after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _checkout import checkout  # benchmarks/_checkout.py (sys.path[0] is this folder)

MiB = 1024 * 1024
GiB = 1024 * MiB

NGINX_CONF = """
worker_processes 1;
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_max_body_size 0;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    # nginx answers a plain "return" before the body has arrived; a client may then
    # stop sending. Proxying makes it read the whole body first (to a RAM-backed temp
    # file), then ask the inner server below, which answers.
    client_body_temp_path {shm}/body;
    server {{
        listen 127.0.0.1:{port} ssl;
        listen 127.0.0.1:{plain};
        ssl_certificate {cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.3;
        location /upload {{
            proxy_request_buffering on;
            proxy_set_body "";
            proxy_pass http://127.0.0.1:{inner};
        }}
    }}
    server {{
        listen 127.0.0.1:{inner};
        location /upload {{
            default_type application/json;
            if ($http_content_range) {{
                add_header Range $http_content_range always;
                return 202 '{{}}';
            }}
            return 200 '{{"url": "https://127.0.0.1/files/x.mp4#y", "size": "1"}}';
        }}
    }}
}}
"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_nginx(root: str) -> tuple[subprocess.Popen[bytes], str, str, str, str]:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        sys.exit(
            "nginx is needed as the TLS sink: run scripts/install-bench-deps as root "
            "(it installs Debian's nginx-light)"
        )
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from vidapi_async.emulator._tls import make_self_signed

    cert, key = make_self_signed(root)
    port, inner, plain = free_port(), free_port(), free_port()
    shm = tempfile.mkdtemp(
        prefix="vidapi-tls-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None
    )
    os.chmod(shm, 0o777)  # noqa: S103 - nginx's workers drop to another user
    conf = os.path.join(root, "nginx.conf")
    with open(conf, "w") as f:
        f.write(
            NGINX_CONF.format(
                root=root, port=port, inner=inner, plain=plain, cert=cert, key=key, shm=shm
            )
        )
    proc = subprocess.Popen([nginx, "-c", conf, "-p", root])
    for _ in range(100):
        try:
            import socket

            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    target = "/upload?uuid=bench&seal=a%2Fb%3D"
    return (
        proc,
        f"https://127.0.0.1:{port}{target}",
        cert,
        shm,
        f"http://127.0.0.1:{plain}{target}",
    )


def evict(folder: str) -> None:
    """Drop the files' pages from the page cache: the next read goes to the disk."""
    for name in os.listdir(folder):
        fd = os.open(os.path.join(folder, name), os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


# --- the measured client (a fresh child process) -------------------------------------------


def child(url: str, ca: str, folder: str, count: int, mode: str) -> None:
    import ssl

    import vidapi_async as va

    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))[:count]
    total = sum(os.path.getsize(p) for p in files)

    # Every loop step (callback or task step) timed: the longest, and how many took over
    # 2 and 5 ms. A step waits for the GIL like anything else, so this is an upper bound
    # on what our code itself costs the loop.
    steps: list[float] = []
    real_run = asyncio.events.Handle._run

    def timed_run(handle: asyncio.events.Handle) -> None:
        t0 = time.perf_counter()
        real_run(handle)
        steps.append(time.perf_counter() - t0)

    asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]

    async def main() -> dict[str, float]:
        lags: list[float] = []
        stop = asyncio.Event()

        async def monitor() -> None:
            while not stop.is_set():
                t0 = time.perf_counter()
                await asyncio.sleep(0.01)
                lags.append(time.perf_counter() - t0 - 0.01)

        # Timed from before the TLS trust and the client are made: curl's figures hold
        # its own set-up (and its process start, a few ms, which a child cannot time).
        cpu0, t0 = time.process_time(), time.perf_counter()
        context = ssl.create_default_context(cafile=ca)
        async with va.Client(
            "unused",
            base_url=url.split("/upload")[0],
            ssl=context,
            connection_limit=256,
            retry=va.NO_RETRY,
        ) as client:

            async def one(path: str) -> None:
                session = va.UploadSession(url, url)
                try:
                    await client.upload_file(
                        path, upload_session=session, chunked=mode == "chunked", workers=4
                    )
                except va.UnexpectedResponseError:
                    if mode != "chunked":
                        raise  # the sink never completes a chunked upload: every range sent

            watcher = asyncio.create_task(monitor())
            await asyncio.gather(*(one(p) for p in files))
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            stop.set()
            await watcher
        lags.sort()
        return {
            "seconds": elapsed,
            "cpu": cpu,
            "bytes": total,
            "lag_p50": lags[len(lags) // 2] * 1000,
            "lag_p99": lags[int(len(lags) * 0.99)] * 1000,
            "lag_max": lags[-1] * 1000,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "step_max": max(steps) * 1000,
            "steps_over_2ms": sum(1 for x in steps if x > 0.002),
            "steps_over_5ms": sum(1 for x in steps if x > 0.005),
            "steps": len(steps),
        }

    print(json.dumps(asyncio.run(main())))


def run_child(
    code: str | None, url: str, ca: str, folder: str, count: int, mode: str
) -> dict[str, float]:
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code
    done = subprocess.run(
        [sys.executable, __file__, "--child", url, ca, folder, str(count), mode],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"the client child failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def curl_run(url: str, ca: str, path: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        ["curl", "-sS", "-o", "/dev/null", "--cacert", ca, "-F", f"file=@{path}", url],
        check=True,
    )
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def random_files(folder: str, count: int, size: int) -> None:
    os.makedirs(folder, exist_ok=True)
    block = os.urandom(MiB)
    for i in range(count):
        with open(os.path.join(folder, f"f{i:03d}.bin"), "wb") as f:
            for _ in range(size // MiB):
                f.write(block)


def single_rounds(
    args: argparse.Namespace,
    codes: list[tuple[str, str | None]],
    url: str,
    ca: str,
    big: str,
    path: str,
) -> None:
    print(f"single {args.size_mib} MiB upload over TLS, {args.rounds} rounds (alternating)")
    rows: dict[str, list[dict[str, float]]] = {name: [] for name, _ in [*codes, ("curl", None)]}
    runners: list[tuple[str, str | None]] = [("curl", None), *codes]
    for r in range(args.rounds):
        # Each round starts with the next runner: none always goes first (a cold cache)
        # or always after the same one.
        for name, code in runners[r % len(runners) :] + runners[: r % len(runners)]:
            if name == "curl":
                seconds, cpu = curl_run(url, ca, path)
                rows["curl"].append({"seconds": seconds, "cpu": cpu, "bytes": args.size_mib * MiB})
            else:
                rows[name].append(run_child(code, url, ca, big, 1, "single"))
        line = "  ".join(
            f"{n} {rows[n][-1]['bytes'] / rows[n][-1]['seconds'] / 1e6:6.0f} MB/s "
            f"{rows[n][-1]['cpu'] / (rows[n][-1]['bytes'] / GiB):.2f} CPU-s/GiB"
            for n in rows
        )
        print(f"  round {r + 1}: {line}")
    curl_rate = statistics.median(x["bytes"] / x["seconds"] for x in rows["curl"])
    curl_cpu = statistics.median(x["cpu"] / (x["bytes"] / GiB) for x in rows["curl"])
    for name, _ in codes:
        rate = statistics.median(x["bytes"] / x["seconds"] for x in rows[name])
        cpu = statistics.median(x["cpu"] / (x["bytes"] / GiB) for x in rows[name])
        ratios = [
            (x["bytes"] / x["seconds"]) / (c["bytes"] / c["seconds"])
            for x, c in zip(rows[name], rows["curl"], strict=True)
        ]
        lag = statistics.median(x["lag_p99"] for x in rows[name])
        print(
            f"  {name}: median {rate / 1e6:.0f} MB/s = {rate / curl_rate:.2f} x curl "
            f"(median of per-round ratios {statistics.median(ratios):.2f}); "
            f"{cpu:.2f} CPU-s/GiB = {cpu / curl_cpu:.2f} x curl; loop lag p99 {lag:.1f} ms"
        )
    print(f"  curl: median {curl_rate / 1e6:.0f} MB/s, {curl_cpu:.2f} CPU-s/GiB")


def lag_table(
    args: argparse.Namespace,
    codes: list[tuple[str, str | None]],
    url: str,
    plain_url: str,
    ca: str,
    mid: str,
    small: str,
) -> None:
    rounds = args.lag_rounds
    print(
        "\nevent-loop lag while uploads run (a 10 ms sleeper's overshoot), peak RSS"
        + (f"; median of {rounds} alternating rounds" if rounds > 1 else "")
    )
    n = args.concurrent_mib
    rows = [
        ("1", f"1 x {n} MiB", url, mid, 1, "single"),
        ("16", f"16 x {n} MiB", url, mid, 16, "single"),
        ("chunked1", f"1 x {n} MiB chunked (4 workers)", url, mid, 1, "chunked"),
        ("chunked", f"16 x {n} MiB chunked (4 workers)", url, mid, 16, "chunked"),
        ("64", f"64 x {args.many_mib} MiB", url, small, 64, "single"),
        ("cold1", f"1 x {n} MiB plain TCP, cold cache", plain_url, mid, 1, "cold"),
        ("cold", f"16 x {n} MiB plain TCP, cold cache", plain_url, mid, 16, "cold"),
    ]
    wanted = set(args.only.split(",")) if args.only else {r[0] for r in rows}
    for key, label, target, folder, count, mode in rows:
        if key not in wanted:
            continue
        got: dict[str, list[dict[str, float]]] = {name: [] for name, _ in codes}
        for _ in range(rounds):
            for name, code in codes:
                if mode == "cold":
                    evict(folder)
                got[name].append(run_child(code, target, ca, folder, count, mode))
        for name, _ in codes:
            ms = got[name]

            def med(k: str, ms: list[dict[str, float]] = ms) -> float:
                return statistics.median(m[k] for m in ms)

            p99s = " ".join(f"{m['lag_p99']:.1f}" for m in ms)
            print(
                f"  {label:38s} {name:8s} lag p50 {med('lag_p50'):6.1f} ms  "
                f"p99 {med('lag_p99'):6.1f} ms  max {med('lag_max'):6.1f} ms  "
                f"RSS {med('peak_rss_mib'):6.1f} MiB  "
                f"longest step {med('step_max'):5.1f} ms, "
                f"{med('steps_over_2ms'):.0f}/{med('steps_over_5ms'):.0f} of "
                f"{med('steps'):.0f} over 2/5 ms  "
                f"{statistics.median(m['bytes'] / m['seconds'] for m in ms) / 1e6:5.0f} MB/s"
                + (f"  (p99 per round: {p99s})" if rounds > 1 else "")
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=1024, help="the single upload's size")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the single upload")
    parser.add_argument(
        "--concurrent-mib",
        type=int,
        default=256,
        help="size of each file of the loop-lag rows (16 uploads, 16 chunked; --only 1: one)",
    )
    parser.add_argument(
        "--many-mib", type=int, default=64, help="size of each file of the 64-upload row"
    )
    parser.add_argument(
        "--compare",
        default=None,
        type=checkout,
        metavar="DIR",
        help="another checkout (another commit), measured alike",
    )
    parser.add_argument(
        "--lag-rounds", type=int, default=1, help="repeat the lag table; medians are printed"
    )
    parser.add_argument("--no-single", action="store_true", help="skip the single 1 GiB rounds")
    parser.add_argument(
        "--only",
        default=None,
        help="comma-separated lag rows to run: 1,16,chunked1,chunked,64,cold1,cold",
    )
    args = parser.parse_args()
    if shutil.which("curl") is None:
        sys.exit("curl is needed as the reference: run scripts/install-bench-deps as root")
    codes = [("vidapi", None)] + ([("compare", args.compare)] if args.compare else [])
    with tempfile.TemporaryDirectory(prefix="vidapi-tls-") as root:
        nginx, url, ca, shm, plain_url = start_nginx(root)
        try:
            big, mid, small = (os.path.join(root, n) for n in ("big", "mid", "small"))
            random_files(big, 1, args.size_mib * MiB)
            random_files(mid, 16, args.concurrent_mib * MiB)
            random_files(small, 64, args.many_mib * MiB)
            path = os.path.join(big, "f000.bin")
            subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # warm
            if not args.no_single:
                single_rounds(args, codes, url, ca, big, path)
            lag_table(args, codes, url, plain_url, ca, mid, small)
        finally:
            nginx.terminate()
            nginx.wait()
            shutil.rmtree(shm, ignore_errors=True)
            with open(os.path.join(root, "error.log")) as log:
                errors = log.read()
            if "[error]" in errors or "[crit]" in errors or "[emerg]" in errors:
                print(errors[-2000:])
    print(f"\ncommand: python benchmarks/tls_uploads.py {' '.join(sys.argv[1:])}")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    else:
        main()
