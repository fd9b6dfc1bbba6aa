"""What ``upload_file(verify_hash=True)`` costs: client CPU seconds per GiB and MB/s,
beside the same upload without it, in the same run.

    python benchmarks/verify_hash_cost.py [--size-mib 512] [--rounds 5]

The sink server of ``upload_throughput.py`` (its own process on 127.0.0.1) reads each
body and throws it away; every mode is single-shot (``chunked=False``: the sink does not
speak the chunked protocol, and a verified upload is single-shot). Alternating rounds,
each in a fresh child process reporting its own CPU time (user + system):

- ``plain``: ``upload_file`` through the buffer (``sendfile=False``: the path TLS
  uploads always take, and the one a verified upload takes);
- ``verify``: the same with ``verify_hash=True`` (SHA-1 fed from the sent buffers);
- ``sendfile``: the default plain-TCP path, for reference (the kernel copies; a
  verified upload gives it up).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from upload_throughput import MiB, make_file, read_text, run_sink, warm

MODES = ("plain", "verify", "sendfile")


def run_client(url: str, path: str, mode: str) -> None:
    import vidapi_async as va

    size = os.path.getsize(path)

    async def main() -> float:
        session = va.UploadSession(upload_url=url, progress_url=url)
        async with va.Client(
            access_token="unused", base_url="http://127.0.0.1:9", sendfile=mode == "sendfile"
        ) as client:
            start = time.perf_counter()
            uploaded = await client.upload_file(
                path, upload_session=session, chunked=False, verify_hash=mode == "verify"
            )
            elapsed = time.perf_counter() - start
        if uploaded.size is None or uploaded.size <= size:
            sys.exit(f"the sink received {uploaded.size} bytes: less than the file")
        return elapsed

    before = resource.getrusage(resource.RUSAGE_SELF)
    elapsed = asyncio.run(main())
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"seconds": elapsed, "cpu": cpu}))


def child(url: str, path: str, mode: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child-client", url, path, mode],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        sys.exit(f"the {mode} child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    size = args.size_mib * MiB
    gib = size / (1024 * MiB)
    cpu: dict[str, list[float]] = {m: [] for m in MODES}
    rate: dict[str, list[float]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="vidapi-bench-") as tmp:
        big = os.path.join(tmp, "big.bin")
        make_file(big, size)
        warm(big)
        port_file = os.path.join(tmp, "port")
        sink = subprocess.Popen(
            [
                sys.executable,
                os.path.join(os.path.dirname(__file__), "upload_throughput.py"),
                "--child-sink",
                port_file,
            ]
        )
        try:
            while not read_text(port_file):
                time.sleep(0.05)
            url = f"http://127.0.0.1:{read_text(port_file)}/upload?uuid=bench&seal=x"
            for r in range(args.rounds):
                line = []
                for mode in MODES:
                    run = child(url, big, mode)
                    cpu[mode].append(run["cpu"] / gib)
                    rate[mode].append(size / run["seconds"] / 1e6)
                    line.append(f"{mode} {rate[mode][-1]:5.0f} MB/s {cpu[mode][-1]:4.2f} CPU-s/GiB")
                print(f"round {r + 1}: " + "  ".join(line))
        finally:
            sink.terminate()
            sink.wait()
    med = {m: (statistics.median(rate[m]), statistics.median(cpu[m])) for m in MODES}
    print()
    print(
        f"command: python benchmarks/verify_hash_cost.py --size-mib {args.size_mib} "
        f"--rounds {args.rounds}"
    )
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    for m in MODES:
        print(f"median {m:8s} {med[m][0]:5.0f} MB/s  {med[m][1]:4.2f} CPU-s/GiB")
    print(
        f"verify / plain: {med['verify'][0] / med['plain'][0]:.2f} x the rate, "
        f"+{med['verify'][1] - med['plain'][1]:.2f} CPU-s/GiB"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child-client":
        run_client(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) > 1 and sys.argv[1] == "--child-sink":
        run_sink(sys.argv[2])
    else:
        main()
