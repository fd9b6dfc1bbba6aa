"""Progress bars (rich) for uploads: bytes, rate and time left."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from .._client import Client

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

__all__ = ["progress_bar", "upload_with_bar", "wait_with_bar"]


def progress_bar(console: Console) -> Progress:
    """Bytes, rate and time left for every upload."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


async def upload_with_bar(client: Client, path: str, console: Console, **kw: Any) -> Any:
    size = (await asyncio.to_thread(os.stat, path)).st_size
    with progress_bar(console) as bar:
        task = bar.add_task(os.path.basename(path), total=size)
        return await client.upload_file(
            path, progress=lambda sent, total: bar.update(task, completed=sent, total=total), **kw
        )


async def wait_with_bar(client: Client, video_id: str, console: Console) -> Any:
    """``wait_until_ready`` with a bar of the platform's encoding progress."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task(f"encoding {video_id}", total=100)

        def seen(video: Any) -> None:
            done = video.encoding_progress
            if video.is_ready:
                done = 100
            if isinstance(done, int) and done >= 0:
                bar.update(task, completed=done)

        return await client.wait_until_ready(video_id, poll=1.0, max_poll=10.0, progress=seen)
