"""Many workers on one shared queue (issue #12): jobs per second for 1, 2, 4, 8 worker
processes, and the time and memory of enqueuing many jobs.

    python benchmarks/shared_workers.py [--jobs 240] [--workers 1,2,4,8] [--latency 0.05]
        [--concurrency 8]
        [--enqueue 100000] [--dsn postgresql://postgres@127.0.0.1:5432/test]

The emulator runs in its own process with ``--latency`` seconds added to every request;
each round gets a fresh database; the jobs (files of 64 KiB) are enqueued first, then N
``vidapi worker --until-empty --concurrency C`` processes start together and the time
until the last exits is measured. The enqueue measure runs in a fresh child that enqueues
url jobs (no files needed) and reports its time and peak RSS, with a 1,000-job run as
the baseline of memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pipeline_throughput import make_files, start_emulator


def admin(dsn: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]


def fresh_db(dsn: str) -> str:
    name = f"bench_{uuid.uuid4().hex[:10]}"
    admin(dsn, f"create database {name}")
    return dsn.rsplit("/", 1)[0] + "/" + name


def drop_db(dsn: str, db: str) -> None:
    admin(dsn, f"drop database if exists {db.rsplit('/', 1)[1]} with (force)")


def enqueue_files(db: str, folder: str) -> None:
    import vidapi_async as va
    from vidapi_async.batch import SharedBatch

    async def main() -> None:
        jobs = [
            va.UploadJob(path=os.path.join(folder, n), title=n, channel="news")
            for n in sorted(os.listdir(folder))
        ]
        async with SharedBatch(db) as shared:
            await shared.enqueue(jobs)

    asyncio.run(main())


def child_enqueue(db: str, count: int) -> None:
    import vidapi_async as va
    from vidapi_async.batch import SharedBatch

    async def jobs() -> object:
        for i in range(count):
            yield va.UploadJob(url=f"https://example.com/v/{i}.mp4", title=f"v{i}", channel="news")

    async def main() -> float:
        async with SharedBatch(db) as shared:
            start = time.perf_counter()
            result = await shared.enqueue(jobs())  # type: ignore[arg-type]
            assert result.added == count, result
            return time.perf_counter() - start

    seconds = asyncio.run(main())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_rss_mib": peak}))


def run_enqueue(dsn: str, count: int) -> dict[str, float]:
    db = fresh_db(dsn)
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--child-enqueue", db, str(count)],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            sys.exit(out.stderr[-2000:])
        return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
    finally:
        drop_db(dsn, db)


def run_workers(dsn: str, base: str, folder: str, workers: int, concurrency: int) -> float:
    db = fresh_db(dsn)
    try:
        enqueue_files(db, folder)
        cmd = [
            sys.executable, "-m", "vidapi_async.cli", "--token", "demo-token", "--base-url",
            base, "worker", "--journal", db, "--concurrency", str(concurrency), "--until-empty",
        ]  # fmt: skip
        start = time.perf_counter()
        procs = [
            subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(workers)
        ]
        for proc in procs:
            if proc.wait() != 0:
                sys.exit("a worker failed")
        return time.perf_counter() - start
    finally:
        drop_db(dsn, db)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=240)
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8, help="of each worker")
    parser.add_argument("--enqueue", type=int, default=100_000)
    parser.add_argument("--dsn", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vidapi-shared-") as tmp:
        folder = os.path.join(tmp, "files")
        make_files(folder, args.jobs, 64 * 1024)
        emulator, base = start_emulator(tmp, args.latency)
        try:
            print(
                f"{args.jobs} jobs of 64 KiB, {args.latency * 1000:.0f} ms per request, "
                f"workers at concurrency {args.concurrency}"
            )
            one = None
            for n in (int(w) for w in args.workers.split(",")):
                seconds = run_workers(args.dsn, base, folder, n, args.concurrency)
                rate = args.jobs / seconds
                one = one or rate
                print(
                    f"  {n} worker(s): {rate:6.1f} jobs/s  x{rate / one:4.2f} of one "
                    f"({rate / one / n:4.2f} of linear)"
                )
        finally:
            emulator.terminate()
            emulator.wait()
    if args.enqueue:
        small = run_enqueue(args.dsn, 1000)
        big = run_enqueue(args.dsn, args.enqueue)
        print(
            f"enqueue {args.enqueue} url jobs: {big['seconds']:.1f} s "
            f"({args.enqueue / big['seconds']:.0f} jobs/s), peak RSS {big['peak_rss_mib']:.1f} "
            f"MiB (1,000 jobs: {small['peak_rss_mib']:.1f} MiB)"
        )
    print(f"\ncommand: python benchmarks/shared_workers.py {' '.join(sys.argv[1:])}")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child-enqueue":
        child_enqueue(sys.argv[2], int(sys.argv[3]))
    else:
        main()
