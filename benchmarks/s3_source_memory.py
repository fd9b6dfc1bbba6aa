"""An S3 object uploaded through the client: peak memory against the object's size.

    python benchmarks/s3_source_memory.py [--sizes-mib 1,96,1024]

moto's server (its own process on 127.0.0.1) holds one object per size; the emulator
(in this process) is the platform. Each upload runs in a fresh client process
(``tests/s3_store.py``'s ``upload_peak``) that reports its own peak RSS; the growth is
that peak minus the 1 MiB object's, per mode (single-shot; chunked, 4 ranges of 4 MiB
in flight).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MiB = 1024 * 1024


async def main() -> None:
    from tests.s3_store import Store, moto_server, store_env, upload_peak
    from vidapi_async.emulator import Emulator

    p = argparse.ArgumentParser()
    p.add_argument("--sizes-mib", default="1,96,1024")
    p.add_argument("--modes", default="single,chunked")
    args = p.parse_args()
    sizes = [int(x) for x in args.sizes_mib.split(",")]
    with moto_server() as url:
        env = store_env(url)
        store = Store(url)
        bucket = store.bucket()
        block = os.urandom(MiB)
        for n in sizes:
            store.put(bucket, f"{n}.mp4", block * n)
        del block
        async with Emulator() as emulator:
            for mode in args.modes.split(","):
                peaks = {}
                for n in sizes:
                    started = time.perf_counter()
                    peaks[n] = await asyncio.to_thread(
                        upload_peak,
                        emulator.base_url,
                        emulator.token,
                        f"s3://{bucket}/{n}.mp4",
                        mode,
                        env,
                    )
                    took = time.perf_counter() - started
                    growth = (peaks[n] - peaks[sizes[0]]) / MiB
                    print(
                        f"{mode:8} {n:5} MiB: peak {peaks[n] / MiB:6.1f} MiB, growth over "
                        f"{sizes[0]} MiB {growth:+6.1f} MiB ({took:.1f} s)",
                        flush=True,
                    )
        store.s3.close()
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    asyncio.run(main())
