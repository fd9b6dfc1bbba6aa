"""A batch run in its own process, for the crash tests: ``python batch_child.py
BASE_URL FILES_DIR JOURNAL SUBTITLE_URL``. Prints "ready", then one line per finished job."""

from __future__ import annotations

import asyncio
import os
import sys

import vidapi_async as va


async def main(base_url: str, folder: str, journal: str, subtitle: str) -> int:
    policy = va.RetryPolicy(max_attempts=20, base_delay=0.001, max_delay=0.02)
    names = sorted(n for n in os.listdir(folder) if n.endswith(".mp4"))
    jobs = (
        va.UploadJob(
            path=os.path.join(folder, name),
            title=f"job {name}",
            channel="news",
            key=name,
            password="pw" if name.endswith("1.mp4") else None,
            subtitles=[va.SubtitleSpec("en", url=subtitle)],
        )
        for name in names
    )
    async with va.Client(access_token="demo-token", base_url=base_url, retry=policy) as client:
        async with va.BatchUploader(client, concurrency=4, journal=journal) as batch:
            print("ready", flush=True)
            failed = 0
            async for result in batch.run(jobs):
                print(result.key, result.status.value, result.video_id, flush=True)
                failed += result.status is va.JobStatus.FAILED
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:5])))
