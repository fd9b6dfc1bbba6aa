"""``Client``: every operation of the API, as coroutines returning typed models.

The client chooses its API dialect (``_dialects``: the legacy API or v2), builds one
requester (``_requester.Requester``: the token and its scopes, retries, limits,
decoding, observation) and hands both to one namespace per group of operations, each
a small class in its own module that never sees the client: ``client.videos``
(``_resources.videos``), ``client.uploads`` (``_transfer.uploads``),
``client.subtitles`` (``_resources.subtitles``), ``client.live``
(``_resources.live``), ``client.account`` (``_resources.account``),
``client.playlists`` (``_resources.playlists``), ``client.players``
(``_resources.players``) and ``client.raw`` (``_resources.raw``). The flat names of
earlier releases (``client.upload_video``, ...) are typed aliases of the namespaced
ones (``_alias``).
"""

from __future__ import annotations

import logging
import os
import ssl as ssl_module
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from . import _protocol as wire
from . import _validate as check
from ._aio import Transport
from ._alias import alias, deprecated
from ._auth.providers import StaticToken, TokenProvider
from ._config import (
    DEFAULT_CHUNKED_THRESHOLD,
    DEFAULT_RANGE_SIZE,
    DEFAULT_READ_SIZE,
    Timeouts,
)
from ._dialects.dialect import DIALECTS, Dialect
from ._dialects.legacy import DEFAULT_BASE_URL, Legacy
from ._dialects.operations import Operation
from ._dialects.v2 import V2
from ._errors import (
    InvalidArgumentError,
    UsageError,
)
from ._limits import Bandwidth, RequestRate
from ._models import AccessToken
from ._observe import Observer
from ._requester import Requester
from ._resources.account import Account
from ._resources.live import LiveStreams
from ._resources.players import Players
from ._resources.playlists import Playlists
from ._resources.raw import RawCalls
from ._resources.subtitles import Subtitles
from ._resources.videos import Videos
from ._retry import RetryPolicy
from ._sentinel import NOT_GIVEN, NotGiven
from ._transfer.sources import MAX_SOURCE_SIZE, SourcePolicy
from ._transfer.uploads import Uploads, UploadSettings

if TYPE_CHECKING:
    import aiohttp

__all__ = ["DEFAULT_BASE_URL", "Client"]

log = logging.getLogger("vidapi_async")

LARGE_ANSWER_BYTES: Final = 256 * 1024
"""Answers larger than this are decoded in a worker thread (16 MiB of JSON: 0.2 s)."""


class Client:
    """An asyncio client of the platform's API.

    Operations are grouped in namespaces: ``client.videos``, ``client.uploads``,
    ``client.subtitles``, ``client.live``, ``client.account``, ``client.playlists``,
    ``client.players``; raw calls to any path are ``client.get``, ``post``, ``delete``
    and ``paginate``. The flat names of earlier releases (``client.upload_video``,
    ``client.get_video``, ...) stay, as aliases of the namespaced ones.

    Give it a token (``access_token="..."``) or a provider (``auth=OAuth....``), and
    optionally your own ``aiohttp.ClientSession``, which is then used and never closed.
    ``ssl`` (an ``ssl.SSLContext``) is the trust for every connection the client's own
    session makes, API and uploads alike; with ``session=``, that session's connector
    decides (``aiohttp.TCPConnector(ssl=context)``).
    ``api="v2"`` (or ``$VIDAPI_API``) speaks the platform's API v2 with the same
    operations, models and errors (its root ``https://api.dailymotion.com/v2`` unless
    ``base_url`` names another; ``base_url=None`` is the root of the dialect; tokens
    from ``vidapi_async.ApiKey``); it creates under ``profile_id`` (checked once against
    the profiles ``GET /me`` lists), else under the one profile listed. An operation v2 does
    not offer raises ``UnsupportedOperationError`` before sending (docs: "API v2");
    ``client.offers(operation)`` says so beforehand.
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
        base_url: str | None = None,
        api: str | None = None,
        profile_id: str | None = None,
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
        # The keyword parameters above are the client's documented options; the body
        # checks them in three groups (the API and its token, the connection, the
        # uploads), each a function below, in the order their errors are raised.
        dialect, auth = _dialect_and_auth(access_token, auth, scopes, api, profile_id)
        checked_base_url = check.base_url(
            dialect.default_base_url if base_url is None else base_url
        )
        transport = _transport_for(
            session,
            ssl=ssl,
            connection_limit=connection_limit,
            sendfile=sendfile,
            proxy=proxy,
            trust_env=trust_env,
            max_requests_per_second=max_requests_per_second,
            max_bandwidth=max_bandwidth,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
        )
        self._dialect = dialect
        requester = self._requester = Requester(
            base_url=checked_base_url,
            auth=auth,
            transport=transport,
            timeouts=timeouts or Timeouts(),
            retry=RetryPolicy() if retry is None else retry,
            decode=dialect.decode,
            default_token_url=dialect.token_url(checked_base_url),
        )
        self._upload_settings = _upload_settings(
            read_size=read_size,
            range_size=range_size,
            chunked_threshold=chunked_threshold,
            chunk_size=chunk_size,
            source_policy=source_policy,
            max_source_size=max_source_size,
        )
        self.uploads = Uploads(requester, dialect, self._upload_settings)
        """Uploads: ``get_session``, ``file``, ``from_url``, ``get_progress``."""
        self.videos = Videos(requester, dialect, self.uploads)
        """Videos: ``create``, ``upload``, ``get``, ``update``, ``delete``, ``mine``,
        ``find_by_tag``, ``set_password``, ``set_thumbnail``, ``wait_until_ready``,
        ``categories``."""
        self.subtitles = Subtitles(requester, dialect, self.uploads)
        """A video's subtitles: ``create``, ``upload``, ``list``, ``delete``."""
        self.live = LiveStreams(requester, dialect)
        """Live streams: ``create``, ``convert``, ``get`` (scope ``manage_videos``)."""
        self.account = Account(requester, dialect)
        """The account: ``me``, ``auth_info``, ``set_webhook``, ``get_webhook``,
        ``remove_webhook``."""
        self.playlists = Playlists(requester, dialect)
        """Playlists: ``create``, ``get``, ``update``, ``delete``, ``mine``, ``videos``,
        ``add_video``, ``remove_video`` (scope ``manage_playlists``)."""
        self.players = Players(requester, dialect)
        """Players (Player IDs of the embeds): ``create``, ``get``, ``update``,
        ``delete``, ``mine`` (scope ``manage_players``)."""
        self.raw = RawCalls(requester, dialect)
        """Raw calls to any path: ``get``, ``post``, ``delete``, ``paginate`` (also
        flat on the client: ``client.get(...)``)."""

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

    @property
    def base_url(self) -> str:
        """The API's address (``https://api.dailymotion.com``, a partner host, the
        emulator's); the token goes to its origin only."""
        return self._requester.base_url

    @property
    def api(self) -> str:
        """The API dialect spoken: ``"legacy"`` or ``"v2"`` (``Client(api=...)``)."""
        return self._dialect.name

    @property
    def timeouts(self) -> Timeouts:
        """How long connecting, reading and uploading may take (``Timeouts``)."""
        return self._requester.timeouts

    @timeouts.setter
    def timeouts(self, value: Timeouts) -> None:
        self._requester.timeouts = value

    @property
    def retry(self) -> RetryPolicy:
        """How failed requests are retried (``NO_RETRY`` to never retry)."""
        return self._requester.retry

    @retry.setter
    def retry(self, value: RetryPolicy) -> None:
        self._requester.retry = value

    @property
    def read_size(self) -> int:
        """Bytes read from disk (or sendfile'd) at a time while a file is sent."""
        return self._upload_settings.read_size

    @read_size.setter
    def read_size(self, value: int) -> None:
        self._upload_settings.read_size = check.positive_int(value, "read_size")

    @property
    def range_size(self) -> int:
        """Bytes per request of the chunked protocol."""
        return self._upload_settings.range_size

    @range_size.setter
    def range_size(self, value: int) -> None:
        self._upload_settings.range_size = check.positive_int(value, "range_size")

    @property
    def chunked_threshold(self) -> int | None:
        """Files of at least this many bytes go through the chunked protocol (resumable)
        unless ``uploads.file(chunked=...)`` says otherwise; ``None``: never by size."""
        return self._upload_settings.chunked_threshold

    @chunked_threshold.setter
    def chunked_threshold(self, value: int | None) -> None:
        checked = None if value is None else check.positive_int(value, "chunked_threshold")
        self._upload_settings.chunked_threshold = checked

    @property
    def source_policy(self) -> SourcePolicy:
        """Where ``uploads.from_url`` may fetch from (checked on every connected address)."""
        return self._upload_settings.source_policy

    @source_policy.setter
    def source_policy(self, value: SourcePolicy) -> None:
        if not isinstance(value, SourcePolicy):
            raise InvalidArgumentError("source_policy", "expected a SourcePolicy")
        self._upload_settings.source_policy = value

    @property
    def max_source_size(self) -> int:
        """The most bytes ``uploads.from_url`` reads from a source, and the largest S3
        object an upload takes (default 64 GiB, the platform's ceiling)."""
        return self._upload_settings.max_source_size

    @max_source_size.setter
    def max_source_size(self, value: int) -> None:
        self._upload_settings.max_source_size = check.positive_int(value, "max_source_size")

    @property
    def chunk_size(self) -> int:
        """Deprecated: ``read_size``."""
        deprecated("Client.chunk_size", "Client.read_size")
        return self.read_size

    @property
    def connection_limit(self) -> int | None:
        """How many connections the session may open at once (``None``: no limit)."""
        return self._transport.limit

    @property
    def token_url(self) -> str:
        """The OAuth token endpoint: the provider's own, else ``<base_url>/oauth/token``."""
        return self._requester.token_url

    def offers(self, operation: Callable[..., object]) -> bool:
        """Whether the API dialect this client speaks offers ``operation``: one of this
        client's operations, given as itself and not called (``client.create_subtitle``
        or ``client.subtitles.create``), so that a misspelt name is caught by the type
        checker. ``False``: calling it raises ``UnsupportedOperationError`` before
        anything is sent (API v2 has no subtitle files; the legacy API no
        ``raw.patch``). One script then runs in both dialects::

            if client.offers(client.create_subtitle):
                await client.create_subtitle(video.id, language="en", url=srt_url)

        An argument a dialect lacks (v2's ``expiry_date=``) is refused when given; the
        operation itself is offered. Anything but an operation of this client is an
        ``InvalidArgumentError``."""
        named = (Operation.named(name) for name in self._operation_names(operation))
        return all(self._dialect.offers(known) for known in named if known is not None)

    def _operation_names(self, operation: object) -> tuple[str, ...]:
        """The namespaced name of one of this client's operations, and its flat ones."""
        owner = getattr(operation, "__self__", None)
        name = getattr(getattr(operation, "__func__", None), "__name__", None)
        for namespace in _NAMESPACES:
            if owner is getattr(self, namespace) and name and not name.startswith("_"):
                target = f"{namespace}.{name}"
                if callable(getattr(owner, name, None)):
                    flat = (a.name for a in vars(Client).values() if isinstance(a, alias))
                    return (target, *(f for f in flat if getattr(Client, f).target == target))
        raise InvalidArgumentError(
            "operation",
            "expected one of this client's operations, not called (client.create_subtitle)",
        )

    async def access_token(self) -> AccessToken:
        """The token in use (fetched or refreshed if needed). Its repr hides the token."""
        return await self._requester.access_token()

    @property
    def _transport(self) -> Transport:
        return self._requester.transport

    def _check_open(self) -> None:
        self._requester.check_open()

    # --- the flat names: aliases of the namespaced operations ----------------------------
    # The seed's operations (the README's quickstart), kept for good:

    upload_video = alias("videos", Videos.upload)
    """Alias of [`client.videos.upload`][vidapi_async.Videos.upload], kept for good."""
    upload_file = alias("uploads", Uploads.file)
    """Alias of [`client.uploads.file`][vidapi_async.Uploads.file], kept for good."""
    create_video = alias("videos", Videos.create)
    """Alias of [`client.videos.create`][vidapi_async.Videos.create], kept for good."""
    get_video = alias("videos", Videos.get)
    """Alias of [`client.videos.get`][vidapi_async.Videos.get], kept for good."""
    set_password = alias("videos", Videos.set_password)
    """Alias of [`client.videos.set_password`][vidapi_async.Videos.set_password], kept for good."""
    create_subtitle = alias("subtitles", Subtitles.create)
    """Alias of [`client.subtitles.create`][vidapi_async.Subtitles.create], kept for good."""
    create_live_stream = alias("live", LiveStreams.create)
    """Alias of [`client.live.create`][vidapi_async.LiveStreams.create], kept for good."""

    # The raw calls: the escape hatch, flat for good (defined on ``client.raw``):

    get = alias("raw", RawCalls.get)
    """``GET path`` on the API: the decoded JSON answer
    ([`client.raw.get`][vidapi_async.RawCalls.get])."""
    post = alias("raw", RawCalls.post)
    """``POST path`` with form data: the decoded JSON answer
    ([`client.raw.post`][vidapi_async.RawCalls.post])."""
    delete = alias("raw", RawCalls.delete)
    """``DELETE path``: the decoded JSON answer
    ([`client.raw.delete`][vidapi_async.RawCalls.delete])."""
    paginate = alias("raw", RawCalls.paginate)
    """The items of a list endpoint, page by page
    ([`client.raw.paginate`][vidapi_async.RawCalls.paginate])."""

    # Every other flat name of 0.x: working, without a warning, to be deprecated in a
    # later release (docs/guides/decisions.md):

    get_upload_session = alias("uploads", Uploads.get_session)
    """Alias of [`client.uploads.get_session`][vidapi_async.Uploads.get_session]."""
    get_upload_progress = alias("uploads", Uploads.get_progress)
    """Alias of [`client.uploads.get_progress`][vidapi_async.Uploads.get_progress]."""
    upload_from_url = alias("uploads", Uploads.from_url)
    """Alias of [`client.uploads.from_url`][vidapi_async.Uploads.from_url]."""
    chunks = alias("uploads", Uploads.chunks)
    """Alias of [`client.uploads.chunks`][vidapi_async.Uploads.chunks]."""
    delete_video = alias("videos", Videos.delete)
    """Alias of [`client.videos.delete`][vidapi_async.Videos.delete]."""
    update_video = alias("videos", Videos.update)
    """Alias of [`client.videos.update`][vidapi_async.Videos.update]."""
    iter_videos = alias("videos", Videos.mine)
    """Alias of [`client.videos.mine`][vidapi_async.Videos.mine]."""
    find_videos_by_tag = alias("videos", Videos.find_by_tag)
    """Alias of [`client.videos.find_by_tag`][vidapi_async.Videos.find_by_tag]."""
    wait_until_ready = alias("videos", Videos.wait_until_ready)
    """Alias of [`client.videos.wait_until_ready`][vidapi_async.Videos.wait_until_ready]."""
    set_thumbnail = alias("videos", Videos.set_thumbnail)
    """Alias of [`client.videos.set_thumbnail`][vidapi_async.Videos.set_thumbnail]."""
    categories = alias("videos", Videos.categories)
    """Alias of [`client.videos.categories`][vidapi_async.Videos.categories]."""
    upload_subtitle = alias("subtitles", Subtitles.upload)
    """Alias of [`client.subtitles.upload`][vidapi_async.Subtitles.upload]."""
    list_subtitles = alias("subtitles", Subtitles.list)
    """Alias of [`client.subtitles.list`][vidapi_async.Subtitles.list]."""
    delete_subtitle = alias("subtitles", Subtitles.delete)
    """Alias of [`client.subtitles.delete`][vidapi_async.Subtitles.delete]."""
    make_live = alias("live", LiveStreams.convert)
    """Alias of [`client.live.convert`][vidapi_async.LiveStreams.convert]."""
    get_live_stream = alias("live", LiveStreams.get)
    """Alias of [`client.live.get`][vidapi_async.LiveStreams.get]."""
    me = alias("account", Account.me)
    """Alias of [`client.account.me`][vidapi_async.Account.me]."""
    get_auth_info = alias("account", Account.auth_info)
    """Alias of [`client.account.auth_info`][vidapi_async.Account.auth_info]."""
    set_webhook = alias("account", Account.set_webhook)
    """Alias of [`client.account.set_webhook`][vidapi_async.Account.set_webhook]."""
    get_webhook = alias("account", Account.get_webhook)
    """Alias of [`client.account.get_webhook`][vidapi_async.Account.get_webhook]."""
    remove_webhook = alias("account", Account.remove_webhook)
    """Alias of [`client.account.remove_webhook`][vidapi_async.Account.remove_webhook]."""


_NAMESPACES: Final = (
    "videos",
    "uploads",
    "subtitles",
    "live",
    "account",
    "playlists",
    "players",
    "raw",
)
"""The client's namespaces, where its operations live (``Client.offers``)."""


def _dialect_and_auth(
    access_token: str | None,
    auth: TokenProvider | None,
    scopes: Iterable[str] | None,
    api: str | None,
    profile_id: str | None,
) -> tuple[Dialect, TokenProvider]:
    """The client's dialect and its token provider, checked (``Client``'s arguments)."""
    if (access_token is None) == (auth is None):
        raise UsageError("give exactly one of access_token= or auth=")
    dialect = _dialect_for(
        _dialect_name(api),
        None if profile_id is None else check.text(profile_id, "profile_id", blank=False),
    )
    if auth is None:
        if scopes is not None:
            scopes = dialect.token_scopes(scopes)
        auth = StaticToken(access_token or "", scopes)
    elif scopes is not None:
        raise UsageError("scopes= goes with access_token=; a provider knows its scopes")
    if not isinstance(auth, TokenProvider):
        raise InvalidArgumentError("auth", "expected a TokenProvider such as OAuth(...)")
    dialect.check_auth(auth)
    return dialect, auth


def _transport_for(
    session: aiohttp.ClientSession | None,
    *,
    ssl: ssl_module.SSLContext | None,
    connection_limit: int | NotGiven,
    sendfile: bool,
    proxy: str | None,
    trust_env: bool,
    max_requests_per_second: float | None,
    max_bandwidth: int | None,
    tracer_provider: Any,
    meter_provider: Any,
) -> Transport:
    """The client's HTTP layer, its arguments checked (``Client``'s)."""
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
    return Transport(
        session,
        limit=check.positive_int(limit, "connection_limit"),
        ssl=ssl,
        sendfile=check.boolean(sendfile, "sendfile"),
        proxies=_proxies(proxy, check.boolean(trust_env, "trust_env"), session),
        rate=None
        if max_requests_per_second is None
        else RequestRate(check.positive_number(max_requests_per_second, "max_requests_per_second")),
        bandwidth=None
        if max_bandwidth is None
        else Bandwidth(check.positive_int(max_bandwidth, "max_bandwidth")),
        observer=Observer(tracer_provider, meter_provider),
    )


def _upload_settings(
    *,
    read_size: int,
    range_size: int,
    chunked_threshold: int | None,
    chunk_size: int | NotGiven,
    source_policy: SourcePolicy | None,
    max_source_size: int,
) -> UploadSettings:
    """The uploads' settings, checked (``Client``'s arguments)."""
    if chunk_size is not NOT_GIVEN:
        deprecated("Client(chunk_size=)", "read_size=")
        read_size = check.positive_int(chunk_size, "chunk_size")
    if source_policy is not None and not isinstance(source_policy, SourcePolicy):
        raise InvalidArgumentError("source_policy", "expected a SourcePolicy")
    return UploadSettings(
        read_size=check.positive_int(read_size, "read_size"),
        range_size=check.positive_int(range_size, "range_size"),
        chunked_threshold=None
        if chunked_threshold is None
        else check.positive_int(chunked_threshold, "chunked_threshold"),
        source_policy=source_policy or SourcePolicy(),
        max_source_size=check.positive_int(max_source_size, "max_source_size"),
    )


_KINDS: Final[Mapping[str, Callable[[str | None], Dialect]]] = {"legacy": Legacy, "v2": V2}
"""Each of ``DIALECTS`` and its implementation."""


def _dialect_for(api: str, profile_id: str | None = None) -> Dialect:
    """The dialect named ``api`` (one of ``DIALECTS``, checked by ``_dialect_name``);
    ``profile_id``: the profile v2 creates under (the legacy API has none: a
    ``UsageError``)."""
    return _KINDS[api](profile_id)


def _dialect_name(api: str | None) -> str:
    """``api=``, else ``$VIDAPI_API``, else ``"legacy"``; anything else is an
    ``InvalidArgumentError`` naming the dialects."""
    if api is None:
        api = os.environ.get("VIDAPI_API") or "legacy"
        argument = "VIDAPI_API"
    else:
        argument = "api"
    if api not in DIALECTS:
        raise InvalidArgumentError(
            argument, f"{str(api)[:20]!r} is not a dialect; one of: {', '.join(DIALECTS)}"
        )
    return api


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
