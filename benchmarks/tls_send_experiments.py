"""What separates the pump's TLS send loop from curl's: one upload of a file over TLS 1.3
to the nginx sink of ``tls_uploads.py``, each variant in a fresh child process, rounds
alternating (curl, then every variant, then curl again...), CPU seconds per GiB (user +
system of the child, or of curl) and MB/s, medians.

    python benchmarks/tls_send_experiments.py [--size-mib 512] [--rounds 5]
        [--variants lib:1024,raw:1024,raw:256,...]

Variants (``KiB`` is the read size):

- ``lib:KiB``: ``Client.upload_file`` (the pump), ``read_size`` = KiB;
- ``piece:KiB``: ``Client.upload_file`` with the pump's ``COPY_PIECE`` set to KiB
  (``read_size`` 1 MiB);
- ``raw:KiB``: the pump's loop alone, no client: a socket wrapped by ``ssl`` with a
  timeout (as the pump's idle timeout sets it), the file ``readinto`` one reused buffer,
  ``sendall`` of a memoryview;
- ``bytes:KiB``: as ``raw`` but ``f.read(n)`` (a new bytes object per read);
- ``block:KiB``: as ``raw`` on a blocking socket (no timeout: ``SSL_write`` never returns
  early, one GIL release per call, no ``poll``);
- ``sndbuf:KiB``: as ``raw`` with ``SO_SNDBUF`` = 4 MiB;
- ``unbuf:KiB``: as ``raw`` but the file opened unbuffered (``buffering=0``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tls_uploads as t

MiB, GiB = t.MiB, t.GiB


def cpu_now() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def raw_upload(url: str, ca: str, path: str, kind: str, size: int) -> None:
    scheme, rest = url.split("://", 1)
    assert scheme == "https"
    authority, _, tail = rest.partition("/")
    host, port_text = authority.rsplit(":", 1)
    port, target = int(port_text), "/" + tail
    context = ssl.create_default_context(cafile=ca)
    length = os.path.getsize(path)
    boundary = "vidapiexperiment"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail_bytes = f"\r\n--{boundary}--\r\n".encode()
    request = (
        f"POST {target} HTTP/1.1\r\nHost: {authority}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        f"Content-Length: {len(head) + length + len(tail_bytes)}\r\nConnection: close\r\n\r\n"
    ).encode()
    raw = socket.create_connection((host, port), timeout=30)
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if kind == "sndbuf":
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * MiB)
    sock = context.wrap_socket(raw, server_hostname=host)
    sock.settimeout(None if kind == "block" else 600)
    sock.sendall(request + head)
    buffer = memoryview(bytearray(size))
    f: io.FileIO | io.BufferedReader = io.FileIO(path) if kind == "unbuf" else open(path, "rb")  # noqa: SIM115
    with f:
        sent = 0
        while sent < length:
            if kind == "bytes":
                data = f.read(min(size, length - sent))
                sock.sendall(data)
                sent += len(data)
            else:
                got = f.readinto(buffer[: min(size, length - sent)])
                sock.sendall(buffer[:got])
                sent += got
    sock.sendall(tail_bytes)
    sock.settimeout(600)
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer[:100]
    sock.close()


def lib_upload(url: str, ca: str, path: str, size: int) -> None:
    import asyncio

    import vidapi_async as va

    async def main() -> None:
        context = ssl.create_default_context(cafile=ca)
        async with va.Client(
            "unused",
            base_url=url.split("/upload")[0],
            ssl=context,
            retry=va.NO_RETRY,
            read_size=size,
        ) as client:
            await client.upload_file(path, upload_session=va.UploadSession(url, url), chunked=False)

    asyncio.run(main())


def child(variant: str, url: str, ca: str, path: str) -> None:
    kind, kib = variant.split(":")
    if kind in ("lib", "piece"):
        import vidapi_async._aio._pump as pump  # imported before the clock starts

        if kind == "piece":
            pump.COPY_PIECE = int(kib) * 1024
    cpu0, t0 = cpu_now(), time.perf_counter()
    if kind in ("lib", "piece"):
        lib_upload(url, ca, path, 1024 * 1024 if kind == "piece" else int(kib) * 1024)
    else:
        raw_upload(url, ca, path, kind, int(kib) * 1024)
    print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": cpu_now() - cpu0}))


def run(variant: str, url: str, ca: str, path: str) -> dict[str, float]:
    if variant == "curl":
        seconds, cpu = t.curl_run(url, ca, path)
        return {"seconds": seconds, "cpu": cpu}
    done = subprocess.run(
        [sys.executable, __file__, "--child", variant, url, ca, path],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"{variant} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variants", default="lib:1024,raw:1024,raw:256,raw:64")
    args = parser.parse_args()
    variants = args.variants.split(",")
    with tempfile.TemporaryDirectory(prefix="vidapi-tls-") as root:
        nginx, url, ca, shm, _ = t.start_nginx(root)
        try:
            folder = os.path.join(root, "big")
            t.random_files(folder, 1, args.size_mib * MiB)
            path = os.path.join(folder, "f000.bin")
            size = os.path.getsize(path)
            subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # warm
            got: dict[str, list[dict[str, float]]] = {v: [] for v in ["curl", *variants]}
            for r in range(args.rounds):
                for v in got:
                    got[v].append(run(v, url, ca, path))
                print(
                    f"round {r + 1} (load {os.getloadavg()[0]:.1f}): "
                    + "  ".join(
                        f"{v} {size / g[-1]['seconds'] / 1e6:.0f} MB/s "
                        f"{g[-1]['cpu'] / (size / GiB):.2f}"
                        for v, g in got.items()
                    ),
                    flush=True,
                )
        finally:
            nginx.terminate()
            nginx.wait()
            shutil.rmtree(shm, ignore_errors=True)
    curl_cpu = [g["cpu"] for g in got["curl"]]
    print(
        f"\nmedians of {args.rounds} rounds, {args.size_mib} MiB; "
        "ratio = median of per-round ratios to curl"
    )
    for v, g in got.items():
        cpu = statistics.median(x["cpu"] for x in g) / (size / GiB)
        rate = statistics.median(size / x["seconds"] for x in g) / 1e6
        cpu_ratio = statistics.median(x["cpu"] / c for x, c in zip(g, curl_cpu, strict=True))
        rate_ratio = statistics.median(
            c["seconds"] / x["seconds"] for x, c in zip(g, got["curl"], strict=True)
        )
        print(
            f"  {v:12s} {rate:6.0f} MB/s ({rate_ratio:.2f} x curl)  "
            f"{cpu:.2f} CPU-s/GiB ({cpu_ratio:.2f} x curl)"
        )
    print(f"\ncommand: python benchmarks/tls_send_experiments.py {' '.join(sys.argv[1:])}")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, load {load}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        main()
