"""Progress bars (rich) for uploads: bytes, rate and time left."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from .._client import Client

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

__all__ = ["progress_bar", "upload_with_bar"]


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
