"""What the batch and the CLI use of a ``Client`` beyond its public API, said in one
place: ``internals(client)``. Explicitly internal (not exported, no stability promise),
but typed and documented, so that no module outside the client's own reaches into a
client's private members (``tests/test_internals.py`` reads ``batch/`` and ``cli/`` for
any ``x._name`` on a client, and finds none).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._client import Client
    from ._config import ProgressCallback
    from ._files import LocalFile
    from ._limits import Pacer, RequestRate
    from ._models import Subtitle, UploadedFile, UploadSession, Video
    from ._observe import Observer

__all__ = ["ClientInternals", "internals"]


class ClientInternals:
    """One client's machinery as the batch and the CLI may use it."""

    __slots__ = ("_client",)

    def __init__(self, client: Client) -> None:
        self._client = client

    @property
    def observer(self) -> Observer:
        """The client's spans and metrics (``_observe.Observer``): a batch job is an
        operation of its own, counted and traced with the client's providers."""
        return self._client._requester.transport.observer

    async def ready_for_uploads(self) -> None:
        """Have the client's upload pump made now rather than by the first upload."""
        await self._client._requester.transport.ready_for_uploads()

    async def check_category(self, channel: str) -> None:
        """``upload_video``'s check of ``channel`` against the platform's categories
        (``InvalidArgumentError`` naming every valid one; where the list cannot be had,
        nothing is refused: the server judges)."""
        await self._client._check_category(channel)

    async def send_file(
        self,
        local: LocalFile,
        *,
        upload_session: UploadSession | None = None,
        progress: ProgressCallback | None = None,
        read_size: int | None = None,
        range_size: int | None = None,
        filename: str | None = None,
        chunked: bool | None = False,
        workers: int = 1,
        resume: bool = False,
    ) -> UploadedFile:
        """``upload_file`` for a file already checked (``inspect_file``): the batch
        checks each file once, before its job starts."""
        return await self._client._send_file(
            local,
            upload_session=upload_session,
            progress=progress,
            read_size=read_size,
            range_size=range_size,
            filename=filename,
            chunked=chunked,
            workers=workers,
            resume=resume,
        )

    async def attach_subtitle(
        self, video_id: str | Video, local: LocalFile, *, language: str, dedupe: bool
    ) -> Subtitle:
        """``upload_subtitle`` for an SRT file already checked (``check_srt_file``)."""
        return await self._client._attach_subtitle(
            video_id, local, language=language, dedupe=dedupe
        )

    @contextlib.contextmanager
    def paced(self, rate: RequestRate | Pacer | None) -> Iterator[None]:
        """The client's requests paced by ``rate`` in the block (a rate shared by a
        fleet's workers), its own pace again after; ``None`` changes nothing."""
        transport = self._client._requester.transport
        kept = transport.rate
        if rate is not None:
            transport.rate = rate
        try:
            yield
        finally:
            transport.rate = kept


def internals(client: Client) -> ClientInternals:
    """``client``'s machinery for the batch and the CLI (see ``ClientInternals``)."""
    return ClientInternals(client)
