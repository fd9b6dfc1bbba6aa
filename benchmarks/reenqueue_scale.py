"""Enqueuing again with the queue still full (a migration re-run while its jobs wait):
the time of a first enqueue of N url jobs, then of the same N again (every key with its
spec stored, every job still waiting), for several N. Linear if the second run's time
per job stays flat as N grows; quadratic if it grows with N.

    python benchmarks/reenqueue_scale.py [--sizes 2000,5000,10000] [--batch 2000]
        [--dsn postgresql://postgres@127.0.0.1:5432/test]

Each size gets a fresh database (dropped after). No worker runs: every job stays queued.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid


def admin(dsn: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]


async def measure(dsn: str, n: int, batch: int) -> tuple[float, float, int]:
    import vidapi_async as va
    from vidapi_async.batch import SharedBatch

    jobs = [
        va.UploadJob(url=f"https://example.invalid/{i}.mp4", title=f"t{i}", channel="news")
        for i in range(n)
    ]
    async with SharedBatch(dsn) as shared:
        t0 = time.perf_counter()
        first = await shared.enqueue(jobs, batch_size=batch)
        t1 = time.perf_counter()
        again = await shared.enqueue(jobs, batch_size=batch)
        t2 = time.perf_counter()
    assert first.added == n, first
    assert again.already == n, again
    return t1 - t0, t2 - t1, again.added


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2000,5000,10000")
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--dsn", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    base = args.dsn.rsplit("/", 1)[0]
    for n in (int(s) for s in args.sizes.split(",")):
        name = f"bench_{uuid.uuid4().hex[:10]}"
        admin(args.dsn, f"create database {name}")
        try:
            first, again, _ = asyncio.run(measure(f"{base}/{name}", n, args.batch))
        finally:
            admin(args.dsn, f"drop database if exists {name} with (force)")
        print(
            f"n={n:6d}  first enqueue {first:6.2f} s ({1e3 * first / n:.3f} ms/job)  "
            f"again, queue full {again:6.2f} s ({1e3 * again / n:.3f} ms/job)"
        )


if __name__ == "__main__":
    main()
