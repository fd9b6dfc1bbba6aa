"""``vidapi batch --journal postgresql://...``, ``vidapi worker``, ``vidapi status``: one
batch worked on from many hosts through a shared queue in PostgreSQL."""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime
import json
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any

from .._errors import InvalidArgumentError, JournalError, UsageError
from ._args import add_metrics_port, add_quota, add_source_policy, positive_number
from ._exit import EXIT_JOBS_FAILED, EXIT_OK
from ._journal_spec import JournalSpec, dsn_arg, journal_arg
from ._progress import output_console, time_column

if TYPE_CHECKING:
    from rich.console import Console

    from .._client import Client
    from ..batch import BatchProgress, QueueStatus, SharedBatch

# The batch wing, the metrics and the logging set-up are imported by the functions that
# run a command, not with this module: the parsers are built for every command, --help
# included.

__all__ = ["add_shared_parsers", "is_shared", "run_shared_batch", "run_status", "run_worker"]


def is_shared(journal: JournalSpec | None) -> bool:
    return journal is not None and journal.kind == "postgresql"


def _postgres(journal: JournalSpec, command: str) -> str:
    if journal.kind != "postgresql":
        raise UsageError(f"vidapi {command} needs a PostgreSQL journal (a DSN), not a file")
    return journal.where


def add_shared_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    w = sub.add_parser("worker", help="run jobs from a shared queue (any host)")
    w.add_argument(
        "--journal",
        required=True,
        type=dsn_arg,
        metavar="DSN",
        help="the shared queue: postgresql://USER@HOST:PORT/DB or 'host=HOST dbname=DB ...' "
        "(the password from $PGPASSWORD or ~/.pgpass, never in the address)",
    )
    w.add_argument(
        "--concurrency",
        type=int,
        default=8,
        metavar="N",
        help="jobs this worker runs at once (default %(default)s)",
    )
    w.add_argument("--until-empty", action="store_true", help="exit 0 once no job is left")
    w.add_argument(
        "--stalled-after",
        type=positive_number,
        default=60.0,
        metavar="SECONDS",
        help="seconds without a heartbeat before a worker's jobs are taken over "
        "(default %(default)g)",
    )
    w.add_argument(
        "--max-requests-per-second",
        type=positive_number,
        default=None,
        metavar="R",
        help="a request rate shared by every worker given it (slots kept in PostgreSQL) "
        "(default: no limit)",
    )
    add_source_policy(w)
    add_quota(w)
    add_metrics_port(w)
    w.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="json: every line on stderr one JSON object (time, level, logger, message), "
        "for log shippers; a usage error (exit 2) stays text (default: text)",
    )
    s = sub.add_parser("status", help="counts of a journal's jobs, per status and stage")
    s.add_argument(
        "--journal",
        required=True,
        type=journal_arg,
        help="postgresql://USER@HOST:PORT/DB, or a batch's SQLite file (such as "
        "vidapi-journal.sqlite)",
    )
    s.add_argument(
        "--watch",
        action="store_true",
        help="a live view: until the queue is empty (PostgreSQL), or while a batch uses the "
        "SQLite journal",
    )
    s.add_argument(
        "--report",
        metavar="FILE",
        help="a shared queue (PostgreSQL): write one row per job (key, source, status, "
        "video id, page and embed addresses, error) to FILE (.csv or .jsonl); the "
        "addresses are asked of the API when a token is given (default: no report)",
    )


async def _until_signalled(work: asyncio.Task[Any], shared: SharedBatch | None = None) -> None:
    """SIGTERM or SIGINT: stop taking jobs; the worker finishes or hands back its own,
    and never waits for the database (``shared.stop``: said before the cancel, so that
    a cancellation lost in a statement's wait cannot keep it running)."""
    loop = asyncio.get_running_loop()

    def stop() -> None:
        if shared is not None:
            shared.stop()
        work.cancel()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    try:
        await work
    except asyncio.CancelledError:
        if not work.cancelled():
            raise
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


class WorkerView:
    """This worker's own jobs as they finish: one line kept current on a terminal, a
    log line per finished job otherwise."""

    def __init__(self, console: Console, *, as_log: bool = False) -> None:
        self.console = console
        self.as_log = as_log
        """Lines go to the ``vidapi_async.worker`` logger (``--log-format json``)."""
        self.last: BatchProgress | None = None
        self._shown = (0, 0)
        self._live: Any = None

    def line(self) -> str:
        p = self.last
        if p is None:
            return "worker: waiting for jobs"
        running = max(0, p.started - p.done - p.adopted - p.failed)
        ended = p.done + p.adopted + p.failed
        per_minute = ended / p.elapsed * 60 if p.elapsed > 0 else 0.0
        adopted = f"{p.adopted} adopted, " if p.adopted else ""
        return (
            f"worker: {p.done} done, {adopted}{p.failed} failed, {running} running, "
            f"{per_minute:.1f} jobs/min"
        )

    def __call__(self, progress: BatchProgress) -> None:
        self.last = progress
        if self._live is not None:
            from rich.text import Text

            self._live.update(Text(self.line()))
        elif (progress.done + progress.adopted, progress.failed) != self._shown:
            self._shown = (progress.done + progress.adopted, progress.failed)
            self.say(self.line())

    def say(self, line: str) -> None:
        if self.as_log:
            from .._observe import worker_log

            worker_log.info("%s", line)
        else:
            # one line however narrow the terminal: a log line, never wrapped mid-phrase
            self.console.print(line, highlight=False, soft_wrap=True)

    def __enter__(self) -> WorkerView:
        if self.console.is_terminal and not self.as_log:
            from rich.live import Live
            from rich.text import Text

            self._live = Live(Text(self.line()), console=self.console, refresh_per_second=4)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None

    def totals(self, queue: QueueStatus) -> str:
        p = self.last
        done, failed = (p.done, p.failed) if p is not None else (0, 0)
        adopted = f"{p.adopted} adopted, " if p is not None and p.adopted else ""
        elapsed = f" in {p.elapsed:.0f} s" if p is not None else ""
        return (
            f"this worker: {done} done, {adopted}{failed} failed{elapsed}; the queue: "
            f"{queue.done} done, {queue.failed} failed, {queue.queued} queued in all"
        )


async def _work_then_status(
    shared: SharedBatch, work: Coroutine[Any, Any, None], *, as_log: bool = False
) -> QueueStatus | None:
    """``work`` until it ends or a signal comes, then the queue's status; ``None`` when
    stopped while the database is away (said in one line on stderr: a warning of the
    ``vidapi_async.worker`` logger when ``as_log``, ``--log-format json``)."""
    task = asyncio.create_task(work)
    try:
        await _until_signalled(task, shared)
        return await shared.status()
    except JournalError as exc:
        if shared.journal.outage.away is None:
            raise
        why = f"stopped; {exc}: the jobs it held are left to be taken over by a worker"
        if as_log:
            from .._observe import worker_log

            worker_log.warning("%s", why)
        else:
            print(f"vidapi: {why}", file=sys.stderr)
        return None


async def run_worker(args: argparse.Namespace, client: Client, console: Console) -> int:
    from ..batch import SharedBatch

    said: list[str] = []  # said once the worker's view is up
    with claim_metrics_port(args, said.append):  # a busy port: before the database
        # started while the database is away: it waits for it (a signal stops the wait)
        shared = SharedBatch(_postgres(args.journal, "worker"), wait_for_database=True)
        opening = asyncio.create_task(shared.__aenter__())
        try:
            await _until_signalled(opening, shared)
        except JournalError:
            if not shared.stopped:
                raise
        if shared.stopped:
            if not opening.cancelled() and opening.exception() is None:
                await shared.__aexit__(None, None, None)  # it answered as the signal came
            print("vidapi: stopped before the database answered", file=sys.stderr)
            return EXIT_OK
        try:
            with WorkerView(console, as_log=args.log_format == "json") as view:
                for line in said:
                    view.say(line)
                status = await _work_then_status(
                    shared,
                    shared.work(
                        client,
                        concurrency=args.concurrency,
                        until_empty=args.until_empty,
                        stalled_after=args.stalled_after,
                        max_requests_per_second=args.max_requests_per_second,
                        progress=view,
                        metrics_port=args.metrics_port,
                        quota=args.quota,
                    ),
                    as_log=view.as_log,
                )
        finally:
            await shared.__aexit__(None, None, None)
    if status is not None:
        if view.as_log:  # --log-format json: a log line as every other
            view.say(view.totals(status))
        else:  # the worker's result
            output_console().print(view.totals(status), highlight=False, soft_wrap=True)
    return EXIT_OK


@contextlib.contextmanager
def claim_metrics_port(args: argparse.Namespace, say: Callable[[str], object]) -> Iterator[None]:
    """Before the queue is touched: a busy ``--metrics-port`` is a usage error, and port
    0 becomes a free port, named with ``say``. The port stays bound (nobody can take it
    meanwhile) until the worker serves it on that very socket, or the block ends."""
    with contextlib.ExitStack() as held:
        if args.metrics_port is not None and not getattr(args, "enqueue_only", False):
            from .._metrics import claim

            try:
                args.metrics_port = held.enter_context(claim(args.metrics_port))
            except OSError as exc:
                raise InvalidArgumentError(
                    "--metrics-port",
                    f"cannot serve metrics on 127.0.0.1:{args.metrics_port}: {exc.strerror}",
                ) from None
            say(f"metrics at http://127.0.0.1:{args.metrics_port}/metrics")
        yield


async def run_shared_batch(args: argparse.Namespace, client: Client, console: Console) -> int:
    from ..batch._report import report_kind
    from ._batch import feed_source, origin_of

    if getattr(args, "report", None):  # a name no report can have: before anything
        report_kind(args.report, "--report")
    args.origin = origin_of(args.source)  # before a feed is fetched to a file
    with claim_metrics_port(args, console.print):
        async with feed_source(args, client):
            return await _run_shared_batch(args, client, console)


async def _run_shared_batch(args: argparse.Namespace, client: Client, console: Console) -> int:
    from ..batch import SharedBatch
    from ..batch._manifest import check_source
    from ._batch import LeftOutShown, _read_in_thread, report_skipped, run_plan, source_options

    if args.dry_run:
        return await run_plan(args, client, _postgres(args.journal, "batch"))
    # every row checked before anything is enqueued (a bad byte, a job twice)
    if not args.source.lower().endswith((".xml", ".rss")):  # a feed is read once
        await asyncio.to_thread(
            check_source, args.source, channel=args.channel, **source_options(args)
        )
    await report_skipped(args.source, console)
    async with SharedBatch(_postgres(args.journal, "batch")) as shared:
        # read lazily, a row at a time off the loop: memory does not grow with the count
        shown = LeftOutShown(console)
        # their manifest or feed, as a local batch of it has (tagged and adopted alike)
        enqueued = await shared.enqueue(_read_in_thread(args, None, shown), origin=args.origin)
        shown.summary()
        # the counts are the result (but for --json's, the status), warnings stay on stderr
        out = console if args.json else output_console()
        out.print(
            f"enqueued {enqueued.added} job(s); {enqueued.already} were done, queued or "
            "running already",
            highlight=False,
        )
        if enqueued.updating:
            out.print(
                f"{len(enqueued.updating)} job(s) done already have new metadata: their "
                "update is queued (no file sent again)",
                highlight=False,
            )
        if enqueued.changed:
            console.print(
                f"[yellow]warning[/yellow]: {len(enqueued.changed)} job(s) queued or running "
                "already, or done with a new file, password, live or subtitles, were given a "
                "different spec now: not applied (each keeps the spec it was enqueued with). "
                "Change a created video with 'vidapi video' or 'vidapi password', or enqueue "
                "it under a new key",
                highlight=False,
            )
        if enqueued.refused:
            from rich.markup import escape

            keys = ", ".join(escape(k) for k in enqueued.refused[:20])
            more = f" and {len(enqueued.refused) - 20} more" if len(enqueued.refused) > 20 else ""
            console.print(
                f"[red]refused[/red] {len(enqueued.refused)} job(s) whose key the queue holds "
                f"for another manifest or feed (one key is one video; give one of them keys "
                f"of its own): {keys}{more}",
                highlight=False,
            )
        for path in enqueued.unreadable:
            console.print(
                f"[red]not enqueued[/red] {path}: cannot read it (recorded failed; "
                "enqueue again once it is there)",
                highlight=False,
            )
        if args.enqueue_only:  # a file not there is a failed job (recorded so)
            await _write_report(args, shared, client, console)
            return EXIT_JOBS_FAILED if enqueued.unreadable or enqueued.refused else EXIT_OK
        status = await _work_then_status(
            shared,
            shared.work(
                client,
                concurrency=args.concurrency,
                until_empty=True,
                metrics_port=args.metrics_port,
                quota=args.quota,
            ),
        )
        await _write_report(args, shared, client, console)
    if status is None:
        return EXIT_OK
    _print_status(args, status.as_dict())
    failed = status.failed or enqueued.unreadable or enqueued.refused
    return EXIT_JOBS_FAILED if failed else EXIT_OK


async def _write_report(
    args: argparse.Namespace, shared: SharedBatch, client: Client, console: Console
) -> None:
    """``--report FILE``: the queue's mapping report, as ``vidapi status --report``
    writes it (one row per job enqueued, as the queue holds it now)."""
    if getattr(args, "report", None):
        rows = await shared.write_report(args.report, client)
        console.print(f"{rows} job(s) reported in {args.report}", highlight=False)


def _print_status(
    args: argparse.Namespace,
    status: dict[str, object],
    title: str = "shared batch (PostgreSQL journal)",
) -> None:
    if args.json:
        print(json.dumps(status, indent=2))
        return
    from rich.table import Table

    table = Table(title=title)
    table.add_column("jobs")
    table.add_column("count")
    for name, count in status.items():
        if name not in ("stages", "accounts"):
            table.add_row(name, str(count))
    stages = status["stages"]
    assert isinstance(stages, dict)
    for stage, n in sorted(stages.items()):
        table.add_row(f"stage {stage}", str(n))
    output_console().print(table)
    accounts = status.get("accounts")
    if isinstance(accounts, dict) and accounts:
        quota = Table(title="quota per account (batches and workers given --quota)")
        for column in ("account", "quota", "used", "next free place", "jobs left", "done by"):
            quota.add_column(column)
        for name, values in accounts.items():
            quota.add_row(
                name or "(the command's own token)",
                values["quota"],
                str(values["used"]),
                _when(values["next_free"]),
                str(values["left"]),
                _when(values["finish_estimate"]) if values["left"] else "-",
            )
        output_console().print(quota)


def _when(iso: str) -> str:
    """An ISO 8601 time as local ``YYYY-MM-DD HH:MM:SS``."""
    return datetime.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def sqlite_status(path: str) -> dict[str, object]:
    """A SQLite journal's jobs ``done``, ``failed`` (an error recorded), ``unfinished``,
    and counts per ``stages`` (blocking: run it off the loop). Reads without the lock,
    so a running batch can be watched; a file that is not one: ``JournalError``, as
    ``vidapi batch`` says."""
    if not os.path.exists(path):
        raise InvalidArgumentError("--journal", f"no journal at {path!r}")
    from ..batch import SQLiteJournal, Stage
    from ..batch._quota import local_accounts

    journal = SQLiteJournal(path)
    records = journal.records_sync()
    done = sum(r.stage is Stage.DONE for r in records)
    failed = sum(r.stage is not Stage.DONE and r.error is not None for r in records)
    stages = collections.Counter(str(r.stage) for r in records)
    counts: dict[str, object] = {
        "done": done,
        "failed": failed,
        "unfinished": len(records) - done - failed,
        "stages": dict(sorted(stages.items())),
    }
    accounts = local_accounts(journal.quota_sync(), records)
    if accounts:  # a paced batch (--quota) used this journal
        counts["accounts"] = accounts
    return counts


async def _watch_sqlite(
    path: str, counts: dict[str, object], console: Console
) -> dict[str, object]:
    """``status --watch`` of a batch's SQLite file: the counts, refreshed each second while
    a batch holds the journal; the last ones once it lets go (at once when none does)."""
    from ..batch import SQLiteJournal

    journal = SQLiteJournal(path)
    if not await asyncio.to_thread(journal.in_use):
        console.print(f"no batch is using this journal ({path}); its counts now:", soft_wrap=True)
        return counts
    console.print(
        f"watching {path} while a batch uses it (Ctrl-C to stop watching)", soft_wrap=True
    )
    from rich.progress import Progress, TextColumn

    with Progress(TextColumn("{task.description}"), time_column(), console=console) as bar:
        task = bar.add_task(_counts_line(counts), total=None)
        while await asyncio.to_thread(journal.in_use):
            await asyncio.sleep(1.0)
            counts = await asyncio.to_thread(sqlite_status, path)
            bar.update(task, description=_counts_line(counts))
    return await asyncio.to_thread(sqlite_status, path)  # what the batch left


def _counts_line(counts: dict[str, object]) -> str:
    return f"done {counts['done']}  failed {counts['failed']}  unfinished {counts['unfinished']}"


async def run_status(
    args: argparse.Namespace, console: Console, client: Client | None = None
) -> int:
    from ..batch import QueueStatus, SharedBatch
    from ..batch._shared import batch_exists

    if getattr(args, "report", None):
        if not is_shared(args.journal):
            raise UsageError(
                "status --report reads a shared queue (a PostgreSQL journal); a batch on a "
                "SQLite journal writes its report itself: vidapi batch ... --report FILE"
            )
        async with SharedBatch(_postgres(args.journal, "status")) as shared:
            rows = await shared.write_report(args.report, client)
        console.print(f"{rows} job(s) reported in {args.report}", highlight=False)
        return EXIT_OK
    if not is_shared(args.journal):
        path = args.journal.where
        counts = await asyncio.to_thread(sqlite_status, path)
        if args.watch:
            counts = await _watch_sqlite(path, counts, console)
        _print_status(args, counts, title=f"SQLite journal {path}")
        return EXIT_OK
    dsn = _postgres(args.journal, "status")
    if not await batch_exists(dsn):  # nothing to read, and nothing created
        _print_status(args, QueueStatus(0, 0, 0, 0, {}).as_dict())
        return EXIT_OK
    async with SharedBatch(dsn) as shared:
        if not args.watch:
            _print_status(args, (await shared.status()).as_dict())
            return EXIT_OK
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
        )

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            time_column(),
            console=console,
        ) as bar:
            task = bar.add_task("jobs done", total=None)
            while True:
                status = await shared.status()
                done, failed = status.done, status.failed
                left = status.queued + status.running
                bar.update(task, completed=done + failed, total=done + failed + left)
                if left == 0:
                    break
                await asyncio.sleep(1.0)
        _print_status(args, status.as_dict())
    return EXIT_OK
