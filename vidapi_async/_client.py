"""``Client``: every operation of the API, as coroutines returning typed models.

This module holds the client's machinery (construction, the token, the request cycle
with its scope check, retries and decoding); the operations live in one module per
group, mixed in: ``_upload_calls``, ``_videos``, ``_subtitles``, ``_live``, ``_raw``
(raw calls and paging) and ``_account``, with ``_calls.CallsBase`` declaring what they
use of the machinery. Resource namespaces (``client.playlists``, ``client.players``)
are small classes in their own modules holding the client.
"""

from __future__ import annotations

import functools
import logging
import ssl as ssl_module
import urllib.request
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from . import _protocol as wire
from . import _validate as check
from ._account import AccountCalls
from ._aio import Transport
from ._auth import StaticToken, TokenProvider
from ._calls import _bool, _deprecated
from ._categories import KeptCategories
from ._config import (
    DEFAULT_CHUNKED_THRESHOLD,
    DEFAULT_RANGE_SIZE,
    DEFAULT_READ_SIZE,
    Timeouts,
)
from ._errors import (
    InvalidArgumentError,
    UsageError,
)
from ._limits import Bandwidth, RequestRate
from ._live import LiveCalls
from ._models import AccessToken
from ._observe import Observer
from ._players import Players
from ._playlists import Playlists
from ._raw import RawCalls
from ._requester import Requester
from ._retry import RetryPolicy
from ._sentinel import NOT_GIVEN, NotGiven
from ._sources import MAX_SOURCE_SIZE, SourcePolicy
from ._subtitles import SubtitleCalls

if TYPE_CHECKING:
    import aiohttp

__all__ = ["DEFAULT_BASE_URL", "Client"]

log = logging.getLogger("vidapi_async")

DEFAULT_BASE_URL: Final = "https://api.dailymotion.com"
LARGE_ANSWER_BYTES: Final = 256 * 1024
"""Answers larger than this are decoded in a worker thread (16 MiB of JSON: 0.2 s)."""


class Client(LiveCalls, SubtitleCalls, AccountCalls, RawCalls):
    """An asyncio client of the platform's API.

    Give it a token (``access_token="..."``) or a provider (``auth=OAuth....``), and
    optionally your own ``aiohttp.ClientSession``, which is then used and never closed.
    ``ssl`` (an ``ssl.SSLContext``) is the trust for every connection the client's own
    session makes, API and uploads alike; with ``session=``, that session's connector
    decides (``aiohttp.TCPConnector(ssl=context)``).
    Use it as ``async with Client(...) as client:`` or call ``await client.close()``.
    A closed client cannot be reopened.

    The bearer token is sent only to ``base_url``'s origin (scheme, host and port); the
    upload server is authorised by the seal in its address and never sees it.

    Spans and metrics go to OpenTelemetry's global providers (extra ``otel``), or to
    ``tracer_provider=`` and ``meter_provider=`` when given; see the README's "Logs,
    traces and metrics".
    """

    def __init__(
        self,
        access_token: str | None = None,
        *,
        auth: TokenProvider | None = None,
        scopes: Iterable[str] | None = None,
        base_url: str = DEFAULT_BASE_URL,
        session: aiohttp.ClientSession | None = None,
        timeouts: Timeouts | None = None,
        read_size: int = DEFAULT_READ_SIZE,
        range_size: int = DEFAULT_RANGE_SIZE,
        connection_limit: int | NotGiven = NOT_GIVEN,
        retry: RetryPolicy | None = None,
        ssl: ssl_module.SSLContext | None = None,
        sendfile: bool = True,
        proxy: str | None = None,
        trust_env: bool = True,
        chunked_threshold: int | None = DEFAULT_CHUNKED_THRESHOLD,
        max_requests_per_second: float | None = None,
        max_bandwidth: int | None = None,
        chunk_size: int | NotGiven = NOT_GIVEN,
        source_policy: SourcePolicy | None = None,
        max_source_size: int = MAX_SOURCE_SIZE,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        if (access_token is None) == (auth is None):
            raise UsageError("give exactly one of access_token= or auth=")
        if auth is None:
            auth = StaticToken(access_token or "", scopes)
        elif scopes is not None:
            raise UsageError("scopes= goes with access_token=; a provider knows its scopes")
        if not isinstance(auth, TokenProvider):
            raise InvalidArgumentError("auth", "expected a TokenProvider such as OAuth(...)")
        checked_base_url = check.base_url(base_url)
        if ssl is not None and not isinstance(ssl, ssl_module.SSLContext):
            raise InvalidArgumentError("ssl", "expected an ssl.SSLContext")
        if ssl is not None and session is not None:
            raise UsageError(
                "ssl= goes with the client's own session; with session=, give the trust to "
                "that session's connector: aiohttp.TCPConnector(ssl=context)"
            )
        if connection_limit is not NOT_GIVEN and session is not None:
            raise UsageError(
                "connection_limit= goes with the client's own session; with session=, "
                "the limit is that session's connector's (aiohttp.TCPConnector(limit=N))"
            )
        limit = 100 if connection_limit is NOT_GIVEN else connection_limit
        transport = Transport(
            session,
            limit=check.positive_int(limit, "connection_limit"),
            ssl=ssl,
            sendfile=_bool("sendfile", sendfile),
            proxies=_proxies(proxy, _bool("trust_env", trust_env), session),
            rate=None
            if max_requests_per_second is None
            else RequestRate(
                check.positive_number(max_requests_per_second, "max_requests_per_second")
            ),
            bandwidth=None
            if max_bandwidth is None
            else Bandwidth(check.positive_int(max_bandwidth, "max_bandwidth")),
            observer=Observer(tracer_provider, meter_provider),
        )
        self._requester = Requester(
            base_url=checked_base_url,
            auth=auth,
            transport=transport,
            timeouts=timeouts or Timeouts(),
            retry=RetryPolicy() if retry is None else retry,
        )
        if chunk_size is not NOT_GIVEN:
            _deprecated("Client(chunk_size=)", "read_size=")
            read_size = check.positive_int(chunk_size, "chunk_size")
        self.read_size = check.positive_int(read_size, "read_size")
        """Bytes read from disk (or sendfile'd) at a time while a file is sent."""
        self.chunked_threshold = (
            None
            if chunked_threshold is None
            else check.positive_int(chunked_threshold, "chunked_threshold")
        )
        """Files of at least this many bytes go through the chunked protocol (resumable)
        unless ``upload_file(chunked=...)`` says otherwise; ``None``: never by size."""
        self.range_size = check.positive_int(range_size, "range_size")
        """Bytes per request of the chunked protocol."""
        if source_policy is not None and not isinstance(source_policy, SourcePolicy):
            raise InvalidArgumentError("source_policy", "expected a SourcePolicy")
        self.source_policy = source_policy or SourcePolicy()
        """Where ``upload_from_url`` may fetch from (checked on every connected address)."""
        self.max_source_size = check.positive_int(max_source_size, "max_source_size")
        """The most bytes ``upload_from_url`` reads from a source (default 64 GiB)."""
        self._categories = KeptCategories()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<Client {self.base_url} {state}>"

    async def __aenter__(self) -> Client:
        self._check_open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the session if this client created it. Idempotent."""
        await self._requester.close()

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called (a closed client cannot be reopened)."""
        return self._requester.closed

    @functools.cached_property
    def playlists(self) -> Playlists:
        """Playlists: ``create``, ``get``, ``update``, ``delete``, ``mine``, ``videos``,
        ``add_video``, ``remove_video`` (scope ``manage_playlists``)."""
        return Playlists(self)

    @functools.cached_property
    def players(self) -> Players:
        """Players (Player IDs of the embeds): ``create``, ``get``, ``update``,
        ``delete``, ``mine`` (scope ``manage_players``)."""
        return Players(self)

    @property
    def chunk_size(self) -> int:
        """Deprecated: ``read_size``."""
        _deprecated("Client.chunk_size", "Client.read_size")
        return self.read_size

    @property
    def connection_limit(self) -> int | None:
        """How many connections the session may open at once (``None``: no limit)."""
        return self._transport.limit

    @property
    def token_url(self) -> str:
        """The OAuth token endpoint: the provider's own, else ``<base_url>/oauth/token``."""
        return self._requester.token_url

    async def access_token(self) -> AccessToken:
        """The token in use (fetched or refreshed if needed). Its repr hides the token."""
        return await self._requester.access_token()


def _proxies(
    proxy: str | None, trust_env: bool, session: aiohttp.ClientSession | None
) -> dict[str, str]:
    """The own session's proxies: ``proxy=`` for every request, else (``trust_env``)
    ``HTTPS_PROXY``, ``HTTP_PROXY`` and ``NO_PROXY`` read once from the environment."""
    if proxy is not None:
        if session is not None:
            raise UsageError(
                "proxy= goes with the client's own session; with session=, uploads use the "
                "environment's proxy when that session has trust_env=True"
            )
        if not isinstance(proxy, str):
            raise InvalidArgumentError("proxy", "expected an http://host:port string")
        try:
            wire.Proxy.parse(proxy)
        except ValueError:
            raise InvalidArgumentError("proxy", "expected an http://host:port address") from None
        return {"http": proxy, "https": proxy}
    return urllib.request.getproxies_environment() if trust_env else {}
