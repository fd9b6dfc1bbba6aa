"""Pacing to the quota, many accounts in one batch (issue 41): two accounts at N videos
per PERIOD each finish 2 x 2N videos in about the time one account takes for 2N (they
are paced in parallel, not one after the other), and the pacing's cost in wake-ups.

    python benchmarks/quota_accounts.py [--quota 3/4s] [--per-account 6] [--rounds 3]
        [--latency 0.02] [--concurrency 8]

One emulator (in this process, ``Emulator(quota=...)``: a rolling window per account)
and one ``BatchUploader(quota=...)`` per run; each round runs, alternating, one account's
2N videos and two accounts' 2N each (the client's token and another's, named by
``UploadJob(account=)``). Printed per run: the wall time, the creates the platform
refused (0 when the pacing holds), the wake-ups of the waits (each waiting job sleeps
until its window frees a place: at most one wake-up per wait, no polling) against the
seconds accounts spent waiting, and the API requests per video (a paced job sends no
request while it waits). Wall time here is the windows', not the CPU's: the machine's
other work barely moves it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import vidapi_async as va
from vidapi_async.emulator import OTHER_TOKEN, Emulator, Faults
from vidapi_async.testing import client_for


def make_files(folder: Path, n: int) -> list[Path]:
    paths = []
    for i in range(n):
        path = folder / f"v{i}.mp4"
        path.write_bytes(os.urandom(16 * 1024))
        paths.append(path)
    return paths


async def one_run(
    files: list[Path], accounts: int, per_account: int, quota: str, args: argparse.Namespace
) -> dict[str, float]:
    os.environ["VIDAPI_BENCH_B_TOKEN"] = OTHER_TOKEN
    jobs = [
        va.UploadJob(
            path=files[i],
            title=f"{a}-{n}",
            channel="news",
            account=None if a == 0 else "VIDAPI_BENCH_B_TOKEN",
            key=f"{accounts}-{a}-{n}-{time.monotonic_ns()}",
        )
        for a in range(accounts)
        for n in range(per_account)
        for i in [a * per_account + n]
    ]
    faults = Faults(latency=args.latency)
    async with (
        Emulator(quota=quota, faults=faults, probe=False, encoding_delay=0) as emu,
        client_for(emu) as client,
    ):
        batch = va.BatchUploader(client, concurrency=args.concurrency, quota=quota)
        async with batch:
            started = time.perf_counter()
            results = [r async for r in batch.run(jobs)]
            took = time.perf_counter() - started
            pacing = batch._pipeline.pacing if batch._pipeline else None
            windows = list(pacing.windows.values()) if pacing else []
        failed = [r for r in results if r.status is not va.JobStatus.DONE]
        creates = [r for r in emu.requests if r.method == "POST" and r.path == "/me/videos"]
        api = [r for r in emu.requests if r.host == "api"]
        assert not failed, failed
        assert len(emu.videos()) == len(jobs)
    return {
        "took": took,
        "refused": len(creates) - len(jobs),
        "wakeups": sum(w.waits for w in windows),
        "per_account_second": sum(w.waits for w in windows) / (accounts * took),
        "api_per_video": len(api) / len(jobs),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quota", default="3/4s")
    parser.add_argument("--per-account", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    quota = va.Quota.parse(args.quota)
    n = args.per_account
    one_times, two_times, ratios = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        files = make_files(Path(tmp), 2 * n)
        for r in range(1, args.rounds + 1):
            one = await one_run(files, 1, n, args.quota, args)
            two = await one_run(files, 2, n, args.quota, args)
            one_times.append(one["took"])
            two_times.append(two["took"])
            ratios.append(two["took"] / one["took"])
            for label, got in (("1 account ", one), ("2 accounts", two)):
                print(
                    f"round {r}: {label} {got['took']:5.2f} s  refused {got['refused']:.0f}  "
                    f"wake-ups {got['wakeups']:.0f} ({got['per_account_second']:.2f}/account/s)  "
                    f"API requests/video {got['api_per_video']:.2f}"
                )
            print(f"round {r}: ratio 2 accounts / 1 account {ratios[-1]:.2f}")
    windows_needed = -(-n // quota.videos) - 1
    print()
    print(
        f"command: python benchmarks/quota_accounts.py --quota {args.quota} --per-account {n} "
        f"--rounds {args.rounds} --latency {args.latency} --concurrency {args.concurrency}"
    )
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"floor (windows waited x period): {windows_needed * quota.period:.2f} s")
    print(
        f"median 1 account ({n} videos): {statistics.median(one_times):.2f} s; "
        f"2 accounts ({2 * n} videos): {statistics.median(two_times):.2f} s; "
        f"median ratio {statistics.median(ratios):.2f} (target: about 1, serial would be 2)"
    )


if __name__ == "__main__":
    asyncio.run(main())
