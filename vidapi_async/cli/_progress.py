"""Progress bars (rich) for uploads: bytes, rate and time left."""

from __future__ import annotations

import asyncio
import datetime
import functools
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, ProgressColumn

    from .._client import Client

__all__ = [
    "jobs_line",
    "output_console",
    "progress_bar",
    "rate_column",
    "time_column",
    "upload_with_bar",
    "wait_with_bar",
]


def output_console() -> Console:
    """Where a command's output goes (a summary table, the demo's steps, serve's
    addresses): stdout, so that ``| grep`` finds it; progress, warnings and errors stay on
    the stderr console. A reader that went away (``| head``) ends the command as it does
    ``print``'s output: quietly, with ``EXIT_BROKEN_PIPE`` (rich's own way is exit 1)."""
    return _output_console_class()()


@functools.cache
def _output_console_class() -> type[Console]:
    from rich.console import Console

    class Output(Console):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            # a title or a key is printed as written: no ``:name:`` made an emoji
            super().__init__(*args, **{"emoji": False, **kwargs})

        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError  # to main(), which says nothing and exits 141

    return Output


def jobs_line(quota: Mapping[str, tuple[int, int, float]]) -> str:
    """A batch bar's label: ``jobs``, then each account waiting for its quota's window
    (``BatchProgress.quota``): its places used and when the next frees (local time)."""
    waits = [
        f"{name or 'own account'} waits for its quota ({used}/{videos} used) until "
        f"{datetime.datetime.fromtimestamp(at):%H:%M:%S}"
        for name, (used, videos, at) in sorted(quota.items())
    ]
    return "; ".join(["jobs", *waits])


def progress_bar(console: Console) -> Progress:
    """Bytes, rate and time (left, elapsed, or taken) for every upload."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        rate_column(),
        time_column(),
        console=console,
        transient=False,
    )


@functools.cache
def _columns() -> tuple[type[ProgressColumn], type[ProgressColumn]]:
    """Labelled columns (rich is imported only when a bar is drawn)."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    def clock(seconds: float) -> str:
        return str(datetime.timedelta(seconds=int(seconds)))

    class Rate(ProgressColumn):
        """``rate 1.2 MB/s``: measured, or (too short to measure) bytes over time."""

        def render(self, task: Task) -> Text:
            from rich.filesize import decimal

            speed = task.finished_speed or task.speed
            if speed is None and task.elapsed:
                speed = task.completed / task.elapsed
            return Text(f"rate {decimal(int(speed))}/s" if speed else "rate -")

    class Time(ProgressColumn):
        """``0:01:02 left`` while that is known, else ``elapsed 0:00:03``; ``took ...``
        once done."""

        def render(self, task: Task) -> Text:
            if task.finished:
                return Text(f"took {clock(task.finished_time or task.elapsed or 0)}")
            if task.time_remaining is not None:
                return Text(f"{clock(task.time_remaining)} left")
            return Text(f"elapsed {clock(task.elapsed or 0)}")

    return Rate, Time


def rate_column() -> ProgressColumn:
    return _columns()[0]()


def time_column() -> ProgressColumn:
    return _columns()[1]()


async def upload_with_bar(client: Client, path: str, console: Console, **kw: Any) -> Any:
    size = (await asyncio.to_thread(os.stat, path)).st_size
    with progress_bar(console) as bar:
        task = bar.add_task(os.path.basename(path), total=size)
        return await client.upload_file(
            path, progress=lambda sent, total: bar.update(task, completed=sent, total=total), **kw
        )


async def wait_with_bar(client: Client, video_id: str, console: Console) -> Any:
    """``wait_until_ready`` with a bar of the platform's encoding progress."""
    from rich.progress import BarColumn, Progress, TextColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        time_column(),
        console=console,
    ) as bar:
        task = bar.add_task(f"encoding {video_id}", total=100)

        def seen(video: Any) -> None:
            done = video.encoding_progress
            if video.is_ready:
                done = 100
            if isinstance(done, int) and done >= 0:
                bar.update(task, completed=done)

        return await client.videos.wait_until_ready(
            video_id, poll=1.0, max_poll=10.0, progress=seen
        )
