"""Manifests stream: peak memory of reading a 100-row and a 10,000-row manifest of each
kind (CSV, JSON Lines, Media RSS), and what the report and the metadata journal cost a
pipeline; with ``--batch-rows``, the peak memory of ``vidapi batch`` itself.

    python benchmarks/manifest_memory.py [--rows 100,10000] [--pipelines 200] [--rounds 3]
    python benchmarks/manifest_memory.py --batch-rows 1000,80000 [--compare DIR] --batch-only

``--batch-rows``: ``vidapi batch`` (SQLite journal, in a fresh process, with and
without ``--json``) over CSV manifests of that many jobs whose files are missing: each
job fails at once with its error and traceback (the most a result holds; issue 38 #8
measured 1.4 GiB at 80,000 rows), nothing sent. Its peak RSS (``wait4``); ``--compare
DIR`` runs a checkout of the code before (its package on PYTHONPATH) beside it.
Target: within +150 MiB from the smallest to the largest.

Memory: the parent writes each manifest (every field filled: a description of 300
characters, tags, dates, geoblocking, a thumbnail, a subtitle, two playlists), then runs
a fresh child that reads it through ``jobs_from_source`` job by job, computing each
job's ``metadata()`` (what the journal keeps) as a batch does, and reports its own peak
RSS. The growth is a large manifest's peak minus the same kind's 100-row peak.
Target (issue 31): within +50 MiB.

CPU: in one process with the emulator (client and server CPU together, so the added
work of the server is counted too), alternating rounds of ``--pipelines`` small uploads
through ``BatchUploader`` on an SQLite journal without and with ``report=``: the
report's added CPU per pipeline (its row, and the one ``GET /video`` that gives the page
and embed addresses). The metadata journal's cost per pipeline: ``metadata()`` and its
JSON encoding, timed over the same jobs, against the pipeline's CPU; and a report row
alone (its thread hop, its CSV line, its flush). Target: each under 5 % per pipeline.
The report's addresses cost one ``GET /video`` per batch (then written from the first
video's) and one per private video.
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

KINDS = ("csv", "jsonl", "xml")
DESCRIPTION = "A long description of the old video, as migrations carry. " * 5
CSV_HEADER = (
    "key,path,title,channel,description,tags,language,private,publish_date,expiry_date,"
    "geoblocking,thumbnail,subtitles,playlists\n"
)


def write_manifest(path: str, kind: str, rows: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        if kind == "csv":
            f.write(CSV_HEADER)
            for i in range(rows):
                f.write(
                    f'k{i},v{i}.mp4,Video {i},news,"{DESCRIPTION}",a;b;c{i},en,false,'
                    "2031-01-02T09:00:00+01:00,2032-01-01T00:00:00Z,deny;fr;de,"
                    f"t{i}.png,en=s{i}.srt,Best of;Year {i % 10}\n"
                )
        elif kind == "jsonl":
            for i in range(rows):
                row = {
                    "key": f"k{i}", "path": f"v{i}.mp4", "title": f"Video {i}",
                    "channel": "news", "description": DESCRIPTION, "tags": ["a", "b", f"c{i}"],
                    "language": "en", "private": False,
                    "publish_date": "2031-01-02T09:00:00+01:00",
                    "expiry_date": "2032-01-01T00:00:00Z", "geoblocking": ["deny", "fr", "de"],
                    "thumbnail": f"t{i}.png", "subtitles": {"en": f"s{i}.srt"},
                    "playlists": ["Best of", f"Year {i % 10}"],
                }  # fmt: skip
                f.write(json.dumps(row) + "\n")
        else:
            f.write(
                '<?xml version="1.0"?><rss version="2.0" '
                'xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>\n'
            )
            for i in range(rows):
                f.write(
                    f"<item><guid>k{i}</guid><link>https://old.example.com/{i}</link>"
                    f'<media:content url="https://cdn.example.com/v{i}.mp4">'
                    f"<media:title>Video {i}</media:title>"
                    f"<media:description>{DESCRIPTION}</media:description>"
                    f"<media:keywords>a, b, c{i}</media:keywords>"
                    f'<media:thumbnail url="https://cdn.example.com/t{i}.jpg"/>'
                    f'<media:subTitle href="https://cdn.example.com/s{i}.srt" lang="en"/>'
                    "<media:category>news</media:category></media:content></item>\n"
                )
            f.write("</channel></rss>\n")


def write_bytes(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def child(path: str) -> None:
    from vidapi_async.batch import jobs_from_source

    n = 0
    for job in jobs_from_source(path, channel="news"):
        json.dumps(job.metadata())
        n += 1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"jobs": n, "peak_mib": peak}))


def measure(path: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", path], capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout))


async def pipelines(count: int, rounds: int) -> None:
    import vidapi_async as va
    from vidapi_async.emulator import Emulator
    from vidapi_async.testing import client_for

    with tempfile.TemporaryDirectory() as folder:
        files = [os.path.join(folder, f"v{i}.mp4") for i in range(count)]
        for path in files:
            await asyncio.to_thread(write_bytes, path, os.urandom(4096))

        def jobs() -> list[va.UploadJob]:
            return [
                va.UploadJob(
                    path=p,
                    title=f"v{i}",
                    channel="news",
                    description=DESCRIPTION,
                    tags=["a", "b"],
                    language="en",
                    geoblocking=["deny", "fr"],
                )
                for i, p in enumerate(files)
            ]

        async def one(report: bool, n: int) -> float:
            async with Emulator() as emu, client_for(emu) as client:
                journal = os.path.join(folder, f"j{n}.sqlite")
                rep = os.path.join(folder, f"r{n}.csv") if report else None
                started = time.process_time()
                async with va.BatchUploader(client, journal=journal, report=rep) as batch:
                    async for result in batch.run(jobs()):
                        assert result.ok, result.error
                return (time.process_time() - started) / count

        plain, reported = [], []
        for n in range(rounds):
            plain.append(await one(False, 2 * n))
            reported.append(await one(True, 2 * n + 1))
            print(
                f"round {n + 1}: CPU per pipeline {plain[-1] * 1e3:.2f} ms, "
                f"with report {reported[-1] * 1e3:.2f} ms "
                f"(+{(reported[-1] / plain[-1] - 1) * 100:.1f} %)"
            )
        per = statistics.median(plain)
        added = statistics.median(r / p - 1 for r, p in zip(reported, plain, strict=True))
        built = jobs()
        started = time.process_time()
        for _ in range(5):
            for job in built:
                json.loads(json.dumps(job.metadata()))  # kept, and read back on a re-run
        metadata = (time.process_time() - started) / (5 * count)
        from vidapi_async.batch._report import ReportWriter

        writer = ReportWriter(os.path.join(folder, "rows.csv"))
        await writer.open()
        row = {
            "key": "k" * 24, "source": files[0], "status": "done", "video_id": "x8abcdef",
            "url": "https://www.example.com/video/x8abcdef",
            "embed_url": "https://www.example.com/embed/video/x8abcdef", "error": None,
        }  # fmt: skip
        started = time.process_time()
        for _ in range(5 * count):
            await writer.write(row)
        written = (time.process_time() - started) / (5 * count)
        await writer.close()
        print(
            f"median CPU per pipeline {per * 1e3:.2f} ms; with the report, median of the "
            f"per-round ratios {added * 100:+.1f} % (noisy); a report row alone "
            f"{written * 1e6:.0f} us = {written / per * 100:.2f} % (target < 5 %); the "
            f"journal's metadata {metadata * 1e6:.0f} us per job = "
            f"{metadata / per * 100:.2f} % (target < 5 %)"
        )


def write_failing(path: str, rows: int) -> None:
    """A CSV manifest of ``rows`` jobs whose files are missing: each fails at once,
    with its error and traceback (the most a result holds), and nothing is sent."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("path,title,channel,description\n")
        for i in range(rows):
            f.write(f'gone/v{i}.mp4,Video {i},news,"{DESCRIPTION}"\n')


def batch_peak(folder: str, rows: int, code: str | None, as_json: bool) -> float:
    """``vidapi batch`` over a failing manifest of ``rows`` jobs, in a fresh process
    (``code``: another checkout's package, on PYTHONPATH): its peak RSS in MiB."""
    manifest = os.path.join(folder, f"fail{rows}.csv")
    if not os.path.exists(manifest):
        write_failing(manifest, rows)
    journal = os.path.join(folder, f"j{rows}-{code is not None}-{as_json}.sqlite")
    env = {
        **os.environ,
        "VIDAPI_TOKEN": "benchmark-token",
        "VIDAPI_BASE_URL": "http://127.0.0.1:9",  # never asked: every job fails first
        "COLUMNS": "100",
    }
    if code is not None:
        env["PYTHONPATH"] = code
    cmd = [sys.executable, "-m", "vidapi_async.cli", "batch", manifest, "--journal", journal]
    proc = subprocess.Popen(
        [*cmd, *(["--json"] if as_json else [])],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 6, f"exit {proc.returncode}: every job fails"
    return usage.ru_maxrss / 1024


def batch_memory(sizes: list[int], code: str | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for as_json in (False, True):
            for which in [None, code] if code else [None]:
                peaks = [batch_peak(folder, rows, which, as_json) for rows in sizes]
                label = "before" if which else "this"
                print(
                    f"vidapi batch{' --json' if as_json else '':7} ({label:6}) "
                    + ", ".join(
                        f"{rows} failing rows: peak RSS {peak:7.1f} MiB"
                        for rows, peak in zip(sizes, peaks, strict=True)
                    )
                    + f"; growth {peaks[-1] - peaks[0]:+.1f} MiB (target <= +150)"
                )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child")
    parser.add_argument("--rows", default="100,10000")
    parser.add_argument("--pipelines", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-cpu", action="store_true")
    parser.add_argument(
        "--batch-rows",
        help="also run 'vidapi batch' over failing manifests of these sizes "
        "(e.g. 1000,80000): its peak RSS",
    )
    parser.add_argument("--compare", help="a checkout of the code before, for --batch-rows")
    parser.add_argument("--batch-only", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    if args.batch_rows:
        batch_memory([int(n) for n in args.batch_rows.split(",")], args.compare)
        if args.batch_only:
            return
    sizes = [int(n) for n in args.rows.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        for kind in KINDS:
            peaks = {}
            for rows in sizes:
                path = os.path.join(folder, f"m{rows}.{kind}")
                write_manifest(path, kind, rows)
                got = measure(path)
                assert got["jobs"] == rows, got
                peaks[rows] = got["peak_mib"]
                size = os.path.getsize(path) / 2**20
                print(
                    f"{kind:5} {rows:>7} rows ({size:6.1f} MiB): peak RSS {got['peak_mib']:6.1f} "
                    f"MiB, growth over {sizes[0]} rows {got['peak_mib'] - peaks[sizes[0]]:+.1f} MiB"
                )
    if not args.no_cpu:
        asyncio.run(pipelines(args.pipelines, args.rounds))
    print(f"command: python benchmarks/manifest_memory.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
