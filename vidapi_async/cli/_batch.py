"""``vidapi batch SOURCE``: a folder or CSV manifest through ``BatchUploader``, with an
overall bar, a bar per file in flight, and a summary table."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Collection
from typing import TYPE_CHECKING

from .._client import Client
from .._errors import InvalidArgumentError, QuotaExceededError
from .._protocol import url_for_humans
from ..batch import BatchProgress, BatchUploader, JobResult, JobStatus, UploadJob, jobs_from_source
from ..batch._feed import download_feed
from ..batch._manifest import check_source, folder_entries
from ._args import add_metrics_port
from ._exit import EXIT_JOBS_FAILED, EXIT_OK
from ._journal_spec import JournalSpec, journal_arg
from ._progress import output_console, progress_bar, time_column

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["add_parser", "run_batch"]


async def _read_in_thread(
    source: str,
    channel: str | None,
    encoding: str = "utf-8",
    categories: Collection[str] | None = None,
) -> AsyncIterator[UploadJob]:
    jobs = jobs_from_source(source, channel=channel, encoding=encoding, categories=categories)
    while (job := await asyncio.to_thread(next, jobs, None)) is not None:
        yield job


async def _feed_categories(source: str, client: Client) -> list[str] | None:
    """The platform's categories, for a Media RSS feed's ``media:category``."""
    if not source.lower().endswith((".xml", ".rss")):
        return None
    return await client.categories()


async def run_plan(args: argparse.Namespace, client: Client, journal: str | None = None) -> int:
    """``vidapi batch --dry-run``: what a run would create, update and skip."""
    if getattr(args, "origin", None) is None:  # (a fetched feed's: its address, kept)
        args.origin = origin_of(args.source)
    async with feed_source(args, client):
        return await _run_plan(args, client, journal)


async def _run_plan(args: argparse.Namespace, client: Client, journal: str | None) -> int:
    categories = await _feed_categories(args.source, client)
    async with BatchUploader(client, journal=journal or args.journal.where) as batch:
        plan = await batch.plan(
            _read_in_thread(args.source, args.channel, args.encoding, categories),
            origin=args.origin,
        )
    if args.json:
        print(json.dumps({k: list(getattr(plan, k)) for k in ("create", "update", "skip")}))
        return EXIT_OK
    print(
        f"would create {len(plan.create)}, update {len(plan.update)}, skip {len(plan.skip)} "
        "(nothing sent)"
    )
    for what in ("create", "update", "skip"):
        for key in getattr(plan, what):
            print(f"{what} {key}")
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "batch",
        help="upload a folder, a CSV or JSON Lines manifest or a Media RSS feed, resumably",
    )
    p.add_argument(
        "source",
        help="a folder (one video per file), a .csv or .jsonl manifest, or a Media RSS feed "
        "(.xml/.rss file, or its http(s) address)",
    )
    p.add_argument(
        "--channel",
        help="category slug for every job (default: a manifest's own per row; a folder needs it)",
    )
    p.add_argument(
        "--encoding",
        default="utf-8",
        help="a CSV manifest's encoding (default utf-8, with or without a BOM; an Excel "
        "export: cp1252)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=8,
        metavar="N",
        help="files uploaded at once (default %(default)s)",
    )
    p.add_argument(
        "--journal",
        type=journal_arg,
        default=JournalSpec("sqlite", "vidapi-journal.sqlite"),
        help="progress file (default: vidapi-journal.sqlite in the current folder; "
        "sqlite:PATH or a name ending .sqlite/.db); a re-run of the same command skips done "
        "jobs and resumes the rest; or a PostgreSQL DSN (postgresql://USER@HOST:PORT/DB or "
        "'host=... dbname=...'): a queue that workers on many hosts share (the password "
        "from $PGPASSWORD or ~/.pgpass, never in the address)",
    )
    p.add_argument(
        "--chunked",
        action="store_true",
        help="every file chunked (default: files of 64 MiB or more, resumably)",
    )
    p.add_argument(
        "--workers", type=int, default=4, help="ranges in flight per chunked file (default 4)"
    )
    p.add_argument(
        "--enqueue-only",
        action="store_true",
        help="with a postgresql:// journal: enqueue the jobs and exit (workers run them)",
    )
    p.add_argument(
        "--wait-ready",
        action="store_true",
        help="a job is done once the platform has encoded its video",
    )
    p.add_argument(
        "--report",
        metavar="FILE",
        help="write one row per job (key, source, status, video id, page and embed "
        "addresses, error) to FILE (.csv or .jsonl) as each job ends (default: no report)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="read the source and the journal and print how many jobs would be created, "
        "updated and skipped, and which; send nothing",
    )
    add_metrics_port(p)


def _same_file(one: str, other: str) -> bool:
    """Whether the paths ``one`` and ``other`` name one existing file."""
    try:
        return os.path.samefile(one, other)
    except (OSError, ValueError):
        return False


async def report_skipped(source: str, console: Console) -> None:
    """Name what a folder batch leaves out, and why."""
    if not await asyncio.to_thread(os.path.isdir, source):
        return
    for name, why in (await asyncio.to_thread(folder_entries, source))[1]:
        console.print(f"[yellow]skipped[/yellow] {name}: {why}", highlight=False)


def origin_of(source: str) -> str:
    """What the journal records as the jobs' manifest or feed: its absolute path, or
    its address without a query (which may hold a credential)."""
    if source.lower().startswith(("http://", "https://")):
        return url_for_humans(source)
    return os.path.abspath(source)


async def run_batch(args: argparse.Namespace, client: Client, console: Console) -> int:
    args.origin = origin_of(args.source)
    async with feed_source(args, client):
        return await _run_batch(args, client, console)


@contextlib.asynccontextmanager
async def feed_source(args: argparse.Namespace, client: Client) -> AsyncIterator[None]:
    """A Media RSS feed given by its http(s) address: fetched once (through the
    client's source policy, as a url source), read from a temporary folder."""
    if not args.source.lower().startswith(("http://", "https://")):
        yield
        return
    folder = await asyncio.to_thread(tempfile.mkdtemp, prefix="vidapi-feed-")
    try:
        args.source = await download_feed(client, args.source, folder)
        yield
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)


async def _run_batch(args: argparse.Namespace, client: Client, console: Console) -> int:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
    )

    if args.report is not None and _same_file(args.report, args.source):
        raise InvalidArgumentError(
            "--report", f"{args.report} is the batch's source; write the report elsewhere"
        )
    # the source is read once to size the bar (and to report a bad row before any upload),
    # then again, lazily, as jobs stream; both off the event loop
    categories = await _feed_categories(args.source, client)
    total_jobs = await asyncio.to_thread(
        check_source,
        args.source,
        channel=args.channel,
        encoding=args.encoding,
        categories=categories,
    )
    if args.dry_run:
        return await run_plan(args, client)
    await report_skipped(args.source, console)
    files_bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        time_column(),
        console=console,
    )
    bytes_bar = progress_bar(console)
    from rich.console import Group
    from rich.live import Live

    overall = files_bar.add_task("jobs", total=total_jobs)
    per_file: dict[str, TaskID] = {}

    def on_progress(p: BatchProgress) -> None:
        files_bar.update(overall, completed=p.done + p.skipped + p.failed + p.updated)
        for key, (path, sent, size) in p.files.items():
            if key not in per_file:
                per_file[key] = bytes_bar.add_task(path.rsplit("/", 1)[-1][:40], total=size)
            bytes_bar.update(per_file[key], completed=sent, total=size)
        for key in [k for k in per_file if k not in p.files]:
            bytes_bar.remove_task(per_file.pop(key))

    summary = _Summary(args.json, console)
    # its metrics endpoint, if asked, before the bars
    async with _uploader(args, client, on_progress) as batch:
        if batch.metrics_port is not None:
            console.print(f"metrics at http://127.0.0.1:{batch.metrics_port}/metrics")
        with Live(Group(files_bar, bytes_bar), console=console, refresh_per_second=8):
            jobs = _read_in_thread(args.source, args.channel, args.encoding, categories)
            async for result in batch.run(jobs, origin=args.origin):
                summary.add(result)
                files_bar.update(overall, completed=summary.jobs)
    if not console.is_terminal:  # the bars' last line ends with no newline
        console.line()
    return summary.end()


def _uploader(
    args: argparse.Namespace, client: Client, on_progress: Callable[[BatchProgress], None]
) -> BatchUploader:
    """The command's ``BatchUploader``; a concurrency the command's connections cannot
    hold is said in the command's own options."""
    try:
        return BatchUploader(
            client,
            concurrency=args.concurrency,
            journal=args.journal.where,
            chunked=True if args.chunked else None,  # else: big files chunked, by size
            workers=args.workers,
            progress=on_progress,
            wait_ready=args.wait_ready,
            metrics_port=args.metrics_port,
            report=args.report,
        )
    except InvalidArgumentError as exc:
        if exc.argument != "concurrency":
            raise
        ranges = f" x --workers {args.workers}" if args.chunked else ""
        raise InvalidArgumentError(
            "--concurrency",
            f"{args.concurrency}{ranges} uploads at once need more connections than the "
            f"vidapi command opens ({client.connection_limit}): give a lower --concurrency"
            + (" or --workers" if args.chunked else ""),
        ) from None


class _Summary:
    """The batch's results as they come (nothing kept of a job once said, so memory
    does not grow with the batch): with ``--json`` each one's object in a JSON array
    on stdout; else each failure and each moved source on the console, then a table
    of the counts. ``end`` gives the exit code."""

    def __init__(self, as_json: bool, console: Console) -> None:
        self.as_json = as_json
        self.console = console
        self.counts = dict.fromkeys(JobStatus, 0)
        self.jobs = 0
        """Results so far."""
        self.quota: tuple[int, BaseException | None] = (0, None)
        """Jobs stopped by the account's quota, and the first one's error."""

    def add(self, r: JobResult) -> None:
        from rich.markup import escape

        self.jobs += 1
        self.counts[r.status] += 1
        if isinstance(r.error, QuotaExceededError):
            count, first = self.quota
            self.quota = (count + 1, first or r.error)
        if r.moved is not None:
            self.console.print(
                f"[yellow]moved[/yellow] {escape(r.key)}: its source moved from "
                f"{escape(r.moved)} to {escape(r.job.where)}; kept done, not sent again",
                highlight=False,
            )
        if self.as_json:
            item = {
                "key": r.key,
                "path": r.job.where,
                "status": r.status.value,
                "video_id": r.video_id,
                "stage": r.stage.value,
                "error": None if r.error is None else str(r.error),
            }
            text = json.dumps(item, indent=2).replace("\n", "\n  ")
            print(("[\n  " if self.jobs == 1 else ",\n  ") + text, end="")
        elif r.status is JobStatus.FAILED:
            self.console.print(
                f"[red]failed[/red] {escape(r.job.where)} at {r.stage.value}: "
                f"{escape(str(r.error))}",
                highlight=False,
            )

    def end(self) -> int:
        """The end of the output (the JSON array closed, or the table and the quota's
        advice), and the exit code."""
        from rich.table import Table

        if self.as_json:
            print("\n]" if self.jobs else "[]")
        else:
            table = Table(title="batch summary")
            for column in ("status", "jobs"):
                table.add_column(column)
            for status, n in self.counts.items():
                table.add_row(status.value, str(n))
            output_console().print(table)
            if self.quota[0]:
                self.console.print(quota_advice(*self.quota), highlight=False)
        return EXIT_OK if self.counts[JobStatus.FAILED] == 0 else EXIT_JOBS_FAILED


def quota_advice(jobs: int, error: BaseException | None) -> str:
    """What to do after the account's quota stopped a batch."""
    wait = getattr(error, "retry_after", None)
    when = "once the quota resets"
    if isinstance(wait, int | float):
        at = datetime.datetime.now() + datetime.timedelta(seconds=wait)
        when = f"after {at:%Y-%m-%d %H:%M} (the quota resets then)"
    return (
        f"[yellow]the account's daily quota is reached[/yellow]: {jobs} job(s) not done; "
        f"run the same command again {when}: the journal resumes them"
    )
