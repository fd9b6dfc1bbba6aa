"""What the batch and the CLI use of a ``Client`` beyond its public API, said in one
place: ``internals(client)``. Explicitly internal (not exported, no stability promise),
but typed and documented, so that no module outside the client's own reaches into a
client's private members (``tests/unit/test_internals.py`` reads ``batch/`` and ``cli/`` for
any ``x._name`` on a client, and finds none).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Final

from ._acting import ACTING_PROFILE, ACTING_TOKEN, NAMED_BY
from ._auth.providers import StaticToken
from ._dialects.operations import Operation
from ._models import AccessToken

if TYPE_CHECKING:
    from ._client import Client
    from ._limits import Pacer, RequestRate
    from ._observe import Observer

__all__ = ["MAX_CARRIED_SIZE", "ClientInternals", "SourceBody", "internals"]

MAX_CARRIED_SIZE: Final = 64 * 1024**2
"""The most bytes ``ClientInternals.carry`` reads from a thumbnail's or a subtitle's
source (64 MiB): an image or a caption file, not a video."""


class SourceBody:
    """A source's body as ``ClientInternals.fetch`` gives it: its pieces (``async
    for``) and ``address``, the one it came from (``None``: not known)."""

    __slots__ = ("_chunks", "address")

    def __init__(self, chunks: AsyncIterator[bytes], address: str | None) -> None:
        self._chunks = chunks
        self.address = address

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks


class ClientInternals:
    """One client's machinery as the batch and the CLI may use it."""

    __slots__ = ("_client", "attach_subtitle", "check_category", "send_file")

    def __init__(self, client: Client) -> None:
        self._client = client
        self.check_category = client.videos._check_category
        """``videos.upload``'s check of a channel against the platform's categories
        (``InvalidArgumentError`` naming every valid one; where the list cannot be had,
        nothing is refused: the server judges)."""
        self.send_file = client.uploads._send_file
        """``uploads.file`` for a file already checked (``inspect_file``): the batch
        checks each file once, before its job starts."""
        self.attach_subtitle = client.subtitles._attach_subtitle
        """``subtitles.upload`` for an SRT file already checked (``check_srt_file``)."""

    def check_offered(self, operation: str) -> None:
        """``UnsupportedOperationError`` now, before anything is sent, when the client's
        API dialect does not offer ``operation`` (``"upload_subtitle"`` in v2): a command
        or a job that would need it later is refused before its upload."""
        known = Operation.named(operation)
        if known is not None:
            self._client._dialect.refuse(known)

    @property
    def observer(self) -> Observer:
        """The client's spans and metrics (``_observe.Observer``): a batch job is an
        operation of its own, counted and traced with the client's providers."""
        return self._client._requester.transport.observer

    async def ready_for_uploads(self) -> None:
        """Have the client's upload pump made now rather than by the first upload."""
        await self._client._requester.transport.ready_for_uploads()

    @contextlib.asynccontextmanager
    async def fetch(self, url: str, piece: int = 1 << 16) -> AsyncIterator[SourceBody]:
        """GET an http(s) source as ``upload_from_url`` does (the client's source
        policy, trust, proxy, timeouts and ``max_source_size``; no token, no cookie):
        its body in pieces of at most ``piece`` bytes, and the address it came from. A
        refusal is a ``SourceError``."""
        client = self._client
        async with client._requester.transport.download(
            url,
            {},
            client.timeouts,
            piece,
            policy=client.source_policy,
            max_size=client.max_source_size,
        ) as (_, chunks, address):
            yield SourceBody(chunks, address)

    async def judge(self, source: str) -> None:
        """A thumbnail's or a subtitle's ``source``, if an http(s) url, judged by the
        client's source policy (and the feed that named it) as ``carry``'s fetch would
        judge its first request, before anything is fetched or sent (its host resolved,
        nothing connected). A refusal is a ``SourceError`` naming the rule."""
        if source.lower().startswith(("http://", "https://")):
            client = self._client
            await client._requester.transport.judge(source, client.source_policy)

    async def carry(self, source: str, headers: Mapping[str, str] | None = None) -> str:
        """A thumbnail's or a subtitle's ``source`` as the platform is to be given it.
        An http(s) url is carried by the client to the platform's upload host the way
        a video file goes (``upload_from_url``: an upload address, the bytes streamed
        through, the source policy, ``headers`` sent to the source only, at most
        ``MAX_CARRIED_SIZE`` bytes), and the uploaded file's url is returned: the
        platform is never asked to fetch a source's host. Anything else (a local path)
        is returned as it is. A refusal is a ``SourceError``."""
        if not source.lower().startswith(("http://", "https://")):
            return source
        uploaded = await self._client.uploads.from_url(
            source, headers=headers or None, max_source_size=MAX_CARRIED_SIZE
        )
        return uploaded.url

    @contextlib.contextmanager
    def acting_as(self, token: str | None, profile: str | None = None) -> Iterator[None]:
        """In the block, this task's API requests carry ``token`` (another account's,
        never refreshed) and, in API v2, create under ``profile``; ``None``: the
        client's own. The upload pump and the connections stay the client's."""
        if token is not None:
            StaticToken(token)  # its checks: a non-empty string
        acting = None if token is None else AccessToken(token)
        kept = ACTING_TOKEN.set(acting), ACTING_PROFILE.set(profile)
        try:
            yield
        finally:
            ACTING_TOKEN.reset(kept[0])
            ACTING_PROFILE.reset(kept[1])

    @contextlib.contextmanager
    def named_by(self, origin: str | None) -> Iterator[None]:
        """In the block, every source this task fetches (a video's, a thumbnail's, a
        subtitle's url) is judged with ``origin`` (the address of the feed that named it)
        as the client's ``SourcePolicy.origin``; ``None``: the policy's own."""
        kept = NAMED_BY.set(origin)
        try:
            yield
        finally:
            NAMED_BY.reset(kept)

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
