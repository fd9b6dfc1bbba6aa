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
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from ._args import add_metrics_port, add_quota, add_source_policy
from ._defaults import MAX_FEED_BYTES
from ._exit import EXIT_JOBS_FAILED, EXIT_OK
from ._journal_spec import JournalSpec, journal_arg
from ._progress import jobs_line, output_console, progress_bar, time_column

if TYPE_CHECKING:
    from rich.console import Console

    from .._client import Client
    from ..batch import BatchProgress, BatchUploader, JobRecord, JobResult, LeftOut, UploadJob

# The batch wing is imported by the functions that run a batch, not with this module:
# the parser (``add_parser``) is built for every command, --help included.

__all__ = ["add_parser", "run_batch"]


def _is_feed(source: str) -> bool:
    return source.lower().endswith((".xml", ".rss"))


def source_options(args: argparse.Namespace) -> dict[str, Any]:
    """The reader's options the command line gives (``--map``, ``--list-separator``,
    ``--max-feed-size``, ``--encoding``)."""
    return {
        "encoding": args.encoding,
        "columns": getattr(args, "map", None),
        "list_separator": getattr(args, "list_separator", ";"),
        "max_feed_bytes": getattr(args, "max_feed_size", MAX_FEED_BYTES),
    }


async def _read_in_thread(
    args: argparse.Namespace,
    categories: Collection[str] | None = None,
    left_out: Callable[[LeftOut], Awaitable[None]] | None = None,
) -> AsyncIterator[UploadJob]:
    """The source's jobs, read a row or item at a time off the event loop; each
    ``LeftOut`` awaited through ``left_out`` on the loop (without it: dropped)."""
    from ..batch import LeftOut
    from ..batch._manifest import source_entries

    entries = source_entries(
        args.source, channel=args.channel, categories=categories, **source_options(args)
    )
    # a fetched feed's items named by its address, not the temporary file it was saved in
    saved, address = getattr(args, "feed_saved", None), getattr(args, "feed_address", None)
    while (entry := await asyncio.to_thread(next, entries, None)) is not None:
        if isinstance(entry, LeftOut):
            if saved is not None and address is not None and entry.where.startswith(saved):
                import attrs

                entry = attrs.evolve(entry, where=address + entry.where[len(saved) :])
            if left_out is not None:
                await left_out(entry)
        elif (origin := getattr(args, "feed_origin", None)) is not None:
            import attrs

            yield attrs.evolve(entry, origin=origin)
        else:
            yield entry


class LeftOutShown:
    """What the command line says of rows and items that give no job: each one as it
    comes (yellow: skipped; red: failed), what is ignored once, and the skips counted
    by reason at the end."""

    def __init__(
        self,
        console: Console,
        batch: BatchUploader | None = None,
        also: Callable[[LeftOut], object] | None = None,
    ) -> None:
        self.console = console
        self.batch = batch
        self.also = also
        """Told of each one too (the run's ``--json`` array)."""
        self.failed = 0
        self.skips: Counter[str] = Counter()

    async def __call__(self, left: LeftOut) -> None:
        from rich.markup import escape

        colour = {"failed": "red", "skipped": "yellow"}.get(left.status, "dim")
        self.console.print(
            f"[{colour}]{left.status}[/{colour}] {escape(left.where)}: {escape(left.reason)}",
            highlight=False,
            soft_wrap=True,
        )
        if left.status == "failed":
            self.failed += 1
        elif left.status == "skipped":
            self.skips[left.reason] += 1
        if self.also is not None:
            self.also(left)
        if self.batch is not None:
            await self.batch.report_left_out(left)

    def summary(self) -> None:
        from rich.markup import escape

        for reason, n in sorted(self.skips.items()):
            items = "1 item has" if n == 1 else f"{n} items have"
            self.console.print(f"{items} {escape(reason)}", highlight=False, soft_wrap=True)


class _Snapshot:
    """A journal's records as read once, without writing anything: what a dry run
    plans against (a journal that does not exist yet has none)."""

    def __init__(self, records: list[JobRecord]) -> None:
        self._records = {r.key: r for r in records}

    async def load(self, key: str) -> JobRecord | None:
        return self._records.get(key)

    async def save(self, record: JobRecord) -> None:
        from .._errors import UsageError

        raise UsageError("a dry run writes nothing to the journal")

    async def close(self) -> None:
        return None


async def _read_only_journal(args: argparse.Namespace, dsn: str | None) -> _Snapshot:
    from ..batch import PostgresJournal, SQLiteJournal

    if dsn is not None or args.journal.kind == "postgresql":
        return _Snapshot(await PostgresJournal(dsn or args.journal.where).read_records())
    path = args.journal.where
    if not await asyncio.to_thread(os.path.exists, path):
        return _Snapshot([])
    return _Snapshot(await asyncio.to_thread(SQLiteJournal(path).records_sync))


async def _feed_categories(source: str, client: Client) -> list[str] | None:
    """The platform's categories, for a Media RSS feed's ``media:category``."""
    if not _is_feed(source):
        return None
    return await client.categories()


async def run_plan(args: argparse.Namespace, client: Client, journal: str | None = None) -> int:
    """``vidapi batch --dry-run``: what a run would create, update and skip, job by job
    (its key, title and source), and what is left out; nothing written anywhere (the
    journal read without being created or migrated), nothing sent."""
    if getattr(args, "origin", None) is None:  # (a fetched feed's: its address, kept)
        args.origin = origin_of(args.source)
    async with feed_source(args, client):
        return await _run_plan(args, client, journal)


async def _run_plan(args: argparse.Namespace, client: Client, journal: str | None) -> int:
    from rich.markup import escape

    from ..batch import BatchUploader

    categories = await _feed_categories(args.source, client)
    planned: dict[str, list[str]] = {
        "create": [],
        "update": [],
        "skip": [],
        "adopt": [],
        "refuse": [],
    }
    out = output_console()
    shown = LeftOutShown(out)
    left: list[dict[str, str]] = []
    refused_sources: dict[str, str] = {}

    async def left_out(entry: LeftOut) -> None:
        if args.json:
            left.append({"where": entry.where, "status": entry.status, "reason": entry.reason})
        else:
            await shown(entry)

    for entry in bucket_left_out(args):  # the objects a bucket's listing left out
        await left_out(entry)
    snapshot = await _read_only_journal(args, journal)
    async with BatchUploader(
        client, journal=snapshot, adopt_only=getattr(args, "adopt_only", False)
    ) as batch:
        async for job in _read_in_thread(args, categories, left_out):
            plan = await batch.plan([job], origin=args.origin)
            what = next(k for k in planned if getattr(plan, k))
            key = getattr(plan, what)[0]
            planned[what].append(key)
            why = plan.refused_sources.get(key)
            if why is not None:
                refused_sources[key] = why
            if not args.json:
                said = "" if why is None else f": {why}"
                out.print(
                    f"{what} {escape(key)}: {escape(job.title)} ({escape(job.where)})"
                    + escape(said),
                    highlight=False,
                    soft_wrap=True,
                )
    # exits as the run would: 6 when a row or item would fail, or a job be refused
    would_fail = bool(planned["refuse"]) or any(e["status"] == "failed" for e in left)
    if args.json:
        print(json.dumps({**planned, "refused_sources": refused_sources, "left_out": left}))
        return EXIT_JOBS_FAILED if would_fail else EXIT_OK
    shown.summary()
    failed = f", {shown.failed} row(s) or item(s) failed" if shown.failed else ""
    skipped = sum(shown.skips.values())
    refused = f", refuse {len(planned['refuse'])}" if planned["refuse"] else ""
    out.print(
        f"would create {len(planned['create'])}, update {len(planned['update'])}, skip "
        f"{len(planned['skip'])}, adopt {len(planned['adopt'])}{refused}; left out: "
        f"{skipped} skipped{failed} (nothing sent, nothing written)",
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_JOBS_FAILED if would_fail or shown.failed else EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "batch",
        help="upload a folder, a CSV or JSON Lines manifest or a Media RSS feed, resumably",
    )
    _add_source_options(p)
    _add_run_options(p)
    add_source_policy(p)
    add_quota(p)
    add_metrics_port(p)


def _add_source_options(p: argparse.ArgumentParser) -> None:
    """What the batch reads and how: the source, its channel, a manifest's format."""
    p.add_argument(
        "source",
        help="a folder (one video per file), a .csv or .jsonl manifest, a Media RSS feed "
        "(.xml/.rss file, or its http(s) address), or a bucket's prefix s3://BUCKET/PREFIX/ "
        "(every video object under it; the s3 extra)",
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
        "--map",
        type=_map_arg,
        action=_MapAction,
        default=None,
        metavar="FIELD=COLUMN",
        help="read another tool's CSV export (Kaltura's bulk upload CSV, YouTube's bulk "
        "spreadsheet): the column that holds FIELD (title, description, tags, url, path, "
        "thumbnail...); repeatable; with a map, only the mapped columns are read (the "
        "others are named once and ignored); default: none, the file's own columns",
    )
    p.add_argument(
        "--list-separator",
        default=";",
        metavar="SEP",
        help="what separates the items of a manifest's tags, playlists and geoblocking "
        "(default ';'; YouTube's spreadsheets: '|'; Kaltura's tags: ',')",
    )
    p.add_argument(
        "--max-feed-size",
        type=_mib_arg,
        default=MAX_FEED_BYTES,
        metavar="MIB",
        help=f"the largest feed read or fetched, in MiB (default {MAX_FEED_BYTES >> 20})",
    )


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """How the batch runs: concurrency, journal, transfer, report, dry run, adoption."""
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
        help="read the source, the journal and the account's videos and print how many "
        "jobs would be created, updated, skipped and adopted, and which; send nothing",
    )
    p.add_argument(
        "--adopt-only",
        action="store_true",
        help="upload nothing: record in the journal (and the report) each job's video "
        "the platform holds, found by the job's tag; a job without one fails (a lost "
        "journal's mapping back)",
    )


def _map_arg(text: str) -> tuple[str, str]:
    field, sep, column = text.partition("=")
    if not sep or not field.strip() or not column:
        raise argparse.ArgumentTypeError(f"expected FIELD=COLUMN, got {text!r}")
    return field.strip(), column


class _MapAction(argparse.Action):
    """``--map FIELD=COLUMN``, repeatable: a mapping of field to column."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        assert isinstance(values, tuple)
        mapping = dict(getattr(namespace, self.dest) or {})
        field, column = values
        if field in mapping:
            parser.error(f"--map {field}= given twice")
        mapping[field] = column
        setattr(namespace, self.dest, mapping)


def _mib_arg(text: str) -> int:
    try:
        mib = int(text)
    except ValueError:
        mib = 0
    if mib <= 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of MiB, got {text!r}")
    return mib << 20


def _same_file(one: str, other: str) -> bool:
    """Whether the paths ``one`` and ``other`` name one existing file."""
    try:
        return os.path.samefile(one, other)
    except (OSError, ValueError):
        return False


async def report_skipped(source: str, console: Console) -> None:
    """Name what a folder batch leaves out, and why."""
    from rich.markup import escape

    from ..batch._manifest import folder_entries

    if not await asyncio.to_thread(os.path.isdir, source):
        return

    for name, why in (await asyncio.to_thread(folder_entries, source))[1]:
        console.print(f"[yellow]skipped[/yellow] {escape(name)}: {escape(why)}", highlight=False)


def bucket_left_out(args: argparse.Namespace) -> list[LeftOut]:
    """The objects a bucket's listing left out (``args.bucket_skipped``), as what a
    manifest leaves out: skipped, with why."""
    from ..batch import LeftOut

    return [LeftOut(name, "skipped", why) for name, why in getattr(args, "bucket_skipped", ())]


def origin_of(source: str) -> str:
    """What the journal records as the jobs' manifest or feed: its absolute path, or
    its address without credentials and a digest of its query (``feed_origin``: never
    the query itself, which may hold a credential)."""
    if source[:5].lower() == "s3://":  # a bucket's prefix: the url, wherever it is run from
        return "s3://" + source[5:]
    if source.lower().startswith(("http://", "https://")):
        from ..batch._origins import feed_origin

        return feed_origin(source)
    return os.path.abspath(source)


async def run_batch(args: argparse.Namespace, client: Client, console: Console) -> int:
    args.origin = origin_of(args.source)
    async with feed_source(args, client):
        return await _run_batch(args, client, console)


@contextlib.asynccontextmanager
async def feed_source(args: argparse.Namespace, client: Client) -> AsyncIterator[None]:
    """A Media RSS feed given by its http(s) address: fetched once (through the
    client's source policy, as a url source), read from a temporary folder. While the
    block runs, the policy's ``origin`` is the feed's address: a feed fetched from a
    public address cannot name an internal one. A bucket's prefix
    (``s3://BUCKET/PREFIX/``): listed once into a temporary JSON Lines manifest
    (``args.bucket_skipped``: the objects left out, and why)."""
    from .._errors import InvalidArgumentError
    from .._s3 import is_s3_url
    from ..batch._bucket import write_bucket_manifest
    from ..batch._feed import download_feed

    if is_s3_url(args.source):
        args.bucket_skipped = skipped = []
        prefix = args.source
        folder = await asyncio.to_thread(tempfile.mkdtemp, prefix="vidapi-bucket-")
        try:
            args.source = manifest = await write_bucket_manifest(
                prefix,
                folder,
                channel=args.channel,
                skipped=lambda name, why: skipped.append((name, why)),
            )
            try:
                yield
            except InvalidArgumentError as exc:  # about the generated manifest: the bucket's
                if manifest not in exc.message:
                    raise
                where = f"the listing of {prefix}"
                raise InvalidArgumentError(
                    exc.argument, exc.message.replace(manifest, where)
                ) from None
        finally:
            await asyncio.to_thread(shutil.rmtree, folder, True)
        return
    if not args.source.lower().startswith(("http://", "https://")):
        yield
        return

    folder = await asyncio.to_thread(tempfile.mkdtemp, prefix="vidapi-feed-")
    kept = client.source_policy
    try:
        cap = getattr(args, "max_feed_size", MAX_FEED_BYTES)
        from .._protocol import url_for_humans

        args.feed_address = url_for_humans(args.source)  # what its items are named by
        # its address ("unknown" through a proxy from a name, the proxy resolving it: judged
        # public, so its items' hosts that cannot be checked here are refused)
        args.source, origin = await download_feed(client, args.source, folder, max_bytes=cap)
        args.feed_saved = args.source
        import attrs

        client.source_policy = attrs.evolve(kept, origin=origin)
        args.feed_origin = origin  # each job keeps it (a shared queue's worker too)
        yield
    finally:
        client.source_policy = kept
        for name in ("feed_origin", "feed_saved", "feed_address"):
            vars(args).pop(name, None)
        await asyncio.to_thread(shutil.rmtree, folder, True)


async def _run_batch(args: argparse.Namespace, client: Client, console: Console) -> int:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
    )

    from .._errors import InvalidArgumentError
    from ..batch._manifest import check_source

    if args.report is not None and _same_file(args.report, args.source):
        raise InvalidArgumentError(
            "--report", f"{args.report} is the batch's source; write the report elsewhere"
        )
    if args.dry_run:
        return await run_plan(args, client)
    # a manifest is read once to size the bar (and to report a problem of the whole
    # before any upload), then again, lazily, as jobs stream; a feed only once, as its
    # items run (its size unknown until its end); both off the event loop
    categories = await _feed_categories(args.source, client)
    total_jobs = None
    if not _is_feed(args.source):
        total_jobs = await asyncio.to_thread(
            check_source,
            args.source,
            channel=args.channel,
            categories=categories,
            **source_options(args),
        )
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
        done = p.done + p.skipped + p.failed + p.updated + p.adopted
        files_bar.update(overall, completed=done, description=jobs_line(p.quota))
        for key, (path, sent, size) in p.files.items():
            if key not in per_file:
                per_file[key] = bytes_bar.add_task(path.rsplit("/", 1)[-1][:40], total=size)
            bytes_bar.update(per_file[key], completed=sent, total=size)
        for key in [k for k in per_file if k not in p.files]:
            bytes_bar.remove_task(per_file.pop(key))

    summary = _Summary(args.json, console)
    uploader = _uploader(args, client, on_progress)
    shown = LeftOutShown(console, uploader, summary.left_out)
    async with uploader as batch:  # its metrics endpoint, if asked, before the bars
        if batch.metrics_port is not None:
            console.print(f"metrics at http://127.0.0.1:{batch.metrics_port}/metrics")
        for left in bucket_left_out(args):  # printed (escaped), counted, reported
            await shown(left)
        with Live(Group(files_bar, bytes_bar), console=console, refresh_per_second=8):
            jobs = _read_in_thread(args, categories, shown)
            async for result in batch.run(jobs, origin=args.origin):
                summary.add(result)
                files_bar.update(overall, completed=summary.jobs)
    if not console.is_terminal:  # the bars' last line ends with no newline
        console.line()
    shown.summary()
    return summary.end(shown)


def _uploader(
    args: argparse.Namespace, client: Client, on_progress: Callable[[BatchProgress], None]
) -> BatchUploader:
    """The command's ``BatchUploader``; a concurrency the command's connections cannot
    hold is said in the command's own options."""
    from .._errors import InvalidArgumentError
    from ..batch import BatchUploader

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
            quota=args.quota,
            adopt_only=args.adopt_only,
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
        from ..batch import JobStatus

        self.as_json = as_json
        self.console = console
        self.counts = dict.fromkeys(JobStatus, 0)
        self.jobs = 0
        """Results so far."""
        self.quota: tuple[int, BaseException | None] = (0, None)
        """Jobs stopped by the account's quota, and the first one's error."""
        self.printed = 0
        """Objects of the ``--json`` array printed so far."""

    def _print(self, item: Mapping[str, object]) -> None:
        """One object of the ``--json`` array, as it comes."""
        self.printed += 1
        text = json.dumps(item, indent=2).replace("\n", "\n  ")
        print(("[\n  " if self.printed == 1 else ",\n  ") + text, end="")

    def left_out(self, left: LeftOut) -> None:
        """A row or item that gave no job: with ``--json``, an object of the array too
        (the console says it either way); what is ``ignored`` is not a row."""
        if self.as_json and left.status != "ignored":
            self._print(
                {
                    "key": left.key,
                    "path": left.where,
                    "status": left.status,
                    "video_id": None,
                    "stage": None,
                    "error": left.reason,
                }
            )

    def add(self, r: JobResult) -> None:
        from rich.markup import escape

        from .._errors import QuotaExceededError
        from ..batch import JobStatus

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
                **({"failed_at": r.failed_at} if r.failed_at is not None else {}),
                "error": None if r.error is None else str(r.error),
            }
            self._print(item)
        elif r.status is JobStatus.FAILED:
            self.console.print(
                f"[red]failed[/red] {escape(r.job.where)} at {r.failed_at or r.stage.value}: "
                f"{escape(str(r.error))}",
                highlight=False,
            )

    def end(self, shown: LeftOutShown) -> int:
        """The end of the output (the JSON array closed, or the table and the quota's
        advice), and the exit code; rows and items that gave no job (``shown``) counted
        too."""
        from rich.table import Table

        if self.as_json:
            print("\n]" if self.printed else "[]")
        else:
            table = Table(title="batch summary")
            for column in ("status", "jobs"):
                table.add_column(column)
            for status, n in self.counts.items():
                table.add_row(status.value, str(n))
            if shown.failed or shown.skips:
                table.add_row("rows/items failed", str(shown.failed))
                table.add_row("items skipped (no video)", str(sum(shown.skips.values())))
            output_console().print(table)
            if self.quota[0]:
                self.console.print(quota_advice(*self.quota), highlight=False)
        from ..batch import JobStatus

        failed = self.counts[JobStatus.FAILED] or shown.failed
        return EXIT_JOBS_FAILED if failed else EXIT_OK


def quota_advice(jobs: int, error: BaseException | None) -> str:
    """What to do after the account's quota stopped a batch."""
    wait = getattr(error, "retry_after", None)
    when = "once the quota resets"
    if isinstance(wait, int | float):
        at = datetime.datetime.now() + datetime.timedelta(seconds=wait)
        when = f"after {at:%Y-%m-%d %H:%M} (the quota resets then)"
    return (
        f"[yellow]the account's upload quota is reached[/yellow] (videos in any 24 hours): "
        f"{jobs} job(s) not done; run the same command again {when}: the journal resumes "
        "them; or give --quota 15/24h (96/24h premium) to pace the batch to it unattended"
    )
