"""The aiohttp layer: one session, one ``send``; aiohttp's exceptions become ours in
``_translate``.

Everything above this package speaks ``(status, headers, body)``; nothing above it
imports aiohttp at run time.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import platform
import ssl as ssl_module
import threading
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Mapping
from importlib import metadata

import aiohttp
import attrs
import multidict
import yarl

from .. import _errors as e
from .._acting import NAMED_BY
from .._config import ProgressCallback, Timeouts
from .._limits import Bandwidth, Pacer, RequestRate
from .._observe import ATTEMPT, Observer, http_log
from .._protocol import Proxy, origin, proxy_for, url_for_humans
from .._transfer.sources import SourcePolicy
from ._compat import connector_ssl, lazy_read_timeout
from ._fetch import fetch_source, judge_source
from ._pump import Connection, FileRegion, UploadPump
from ._response import RawResponse
from ._translate import translate
from ._whole import WHOLE_BODY, send_whole

__all__ = ["RawResponse", "Transport", "api_timeout", "sent_headers", "translate"]

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""API responses are small JSON; anything bigger is refused rather than buffered."""


@functools.lru_cache(maxsize=8)
def api_timeout(timeouts: Timeouts) -> aiohttp.ClientTimeout:
    """aiohttp's form of the API calls' timeouts (both immutable: made once, shared)."""
    return aiohttp.ClientTimeout(
        total=timeouts.api_total, sock_connect=timeouts.connect, sock_read=timeouts.api_read
    )


_new_tuple = tuple.__new__


def sent_headers(headers: Mapping[str, str]) -> Mapping[str, str]:
    """``headers`` in the form aiohttp merges into a request's without converting them
    first (a read-only case-insensitive multidict): for headers sent with many
    requests, made once (the requester's bearer headers)."""
    return multidict.CIMultiDictProxy(multidict.CIMultiDict(headers))


def _user_agent() -> str:
    try:
        ours = metadata.version("vidapi-async")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        ours = "0+unknown"
    return f"vidapi-async/{ours} aiohttp/{aiohttp.__version__} python/{platform.python_version()}"


USER_AGENT = _user_agent()
"""Sent with every request; with a caller's session, its own ``User-Agent`` (set in the
session's default headers) is kept for API calls."""


class Transport:
    """Sends requests over a caller's session, or over one it creates and owns.

    A caller's session is never closed here; an owned one is closed by ``close``.
    """

    def __init__(
        self,
        session: aiohttp.ClientSession | None,
        *,
        limit: int = 100,
        ssl: ssl_module.SSLContext | None = None,
        sendfile: bool = True,
        proxies: Mapping[str, str] | None = None,
        rate: RequestRate | Pacer | None = None,
        bandwidth: Bandwidth | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.observer = observer or Observer()
        """Spans and metrics (``_observe``), decided once for the client."""
        self._session = session
        self._rate = rate
        self._bandwidth = bandwidth
        self._proxies = dict(proxies or {})
        """``{"https": url, "http": url, "no": list}``: the own session's proxies (from
        ``proxy=`` or, with ``trust_env``, read once from the environment)."""
        self._owns_session = session is None
        self._direct = self._owns_session and not self._proxies
        """No proxy to work out per request: the own session, none configured."""
        self._limit = limit
        self._ssl = ssl
        self.sendfile = sendfile
        """Whether uploads may use sendfile(2) on plain-TCP connections."""
        self._pump: UploadPump | None = None
        self._pump_lock = asyncio.Lock()
        self._pumps_closed = False

    def _proxy(self, url: str) -> Proxy | None:
        if self._owns_session and not self._proxies:
            return None  # none configured (the usual case): nothing to work out per call
        if not self._owns_session and self._session is not None:
            if not self._session.trust_env:
                return None
            return proxy_for(url, urllib.request.getproxies_environment())
        return proxy_for(url, self._proxies)

    def _api_proxy(self, url: str) -> Proxy | None:
        """The proxy an API request goes through. None for an http url: the token (and
        a token request's form) would pass the proxy in clear, so it goes direct; a
        caller's session that would take the environment's proxy there is refused."""
        if url[:5].lower() != "http:":
            return self._proxy(url) if self._owns_session else None  # theirs: their trust_env
        if self._proxy(url) is not None and not self._owns_session:
            raise e.UsageError(
                f"{url_for_humans(url)}: the session given would send this http request, "
                "token and all, through the environment's proxy in clear; use an https "
                "base_url, a session with trust_env=False, or NO_PROXY for this host"
            )
        return None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            # Created lazily: ClientSession() needs a running loop.
            connector = aiohttp.TCPConnector(limit=self._limit, ssl=self._ssl or True)
            lazy_read_timeout(connector)  # the api_read bound, kept at less cost
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=True,
                headers={"User-Agent": USER_AGENT},
            )
        return self._session

    @property
    def rate(self) -> RequestRate | Pacer | None:
        """What paces the requests' starts (``None``: nothing); a batch worker swaps in
        a rate shared with other processes for its work (``ClientInternals.paced``)."""
        return self._rate

    @rate.setter
    def rate(self, rate: RequestRate | Pacer | None) -> None:
        self._rate = rate

    @property
    def limit(self) -> int | None:
        """Connections that may be open at once (``None``: no limit)."""
        if self._session is None or self._owns_session:
            return self._limit or None
        connector = self._session.connector
        return (connector.limit or None) if connector is not None else None

    async def close(self) -> None:
        if self._owns_session and self._session is not None:
            await self._session.close()
        self._session = None
        # A pump being made now (a batch has it made early) is waited for, then closed:
        # none is made after this.
        async with self._pump_lock:
            self._pumps_closed = True
            pump, self._pump = self._pump, None
        if pump is not None:
            await asyncio.to_thread(pump.close)  # joins its threads: not on the loop

    def _upload_context(self) -> ssl_module.SSLContext:
        """The trust for uploads: ``ssl=`` of the client's own session, or what a
        caller's session's connector was given (``ssl=False``: no verification)."""
        given: ssl_module.SSLContext | bool | None = self._ssl
        if not self._owns_session and self._session is not None:
            given = connector_ssl(self._session.connector)
        if isinstance(given, ssl_module.SSLContext):
            return given
        context = ssl_module.create_default_context()
        if given is False:
            context.check_hostname = False
            context.verify_mode = ssl_module.CERT_NONE
        return context

    async def upload(
        self,
        url: str,
        headers: Mapping[str, str],
        region: FileRegion,
        timeouts: Timeouts,
        *,
        read_size: int,
        progress: ProgressCallback | None = None,
        connection: Connection | None = None,
    ) -> RawResponse:
        """POST ``region`` to an upload address from a worker thread (``_pump``): the
        loop stays free whatever the transfer costs. With ``connection``, the socket is
        kept for the next request of the same sender."""
        pump = await self._get_pump()
        if self._rate is not None:
            await self._rate.wait()
        agent = USER_AGENT
        if not self._owns_session and self._session is not None:
            agent = self._session.headers.get("User-Agent", USER_AGENT)
        whole = (
            region.length <= read_size
            and region.length <= WHOLE_BODY
            and connection is None
            and region.stream is None
            and self._bandwidth is None
            and url[:7].lower() == "http://"
            and self._proxy(url) is None
        )  # small, plain HTTP, direct: sent from the loop (_whole)
        send = functools.partial(
            self._upload,
            pump,
            url,
            agent,
            headers,
            region,
            timeouts,
            read_size=read_size,
            progress=progress,
            connection=connection,
            whole=whole,
        )
        observer = self.observer
        watched = observer.active or http_log.isEnabledFor(logging.DEBUG)
        if not watched:
            return await send()
        wrap = None
        if observer.tracer is not None:
            # The thread's span is a child of the operation's: the context goes along.
            wrap = functools.partial(_in_thread, observer, url, region.size)
        started = time.perf_counter()
        status: int | None = None
        try:
            resp = await send(wrap=wrap)
            status = resp.status
            return resp
        finally:
            self._done("POST", url, status, started, region.size)
            if status is not None and status < 300:
                observer.uploaded(region.length)

    async def _upload(
        self,
        pump: UploadPump,
        url: str,
        agent: str,
        headers: Mapping[str, str],
        region: FileRegion,
        timeouts: Timeouts,
        *,
        read_size: int,
        progress: ProgressCallback | None,
        connection: Connection | None,
        wrap: Wrap | None = None,
        whole: bool = False,
    ) -> RawResponse:
        """The request through the pump, or (``whole``: a small region) from the loop
        (``_whole``), its span then made here, on the loop (``wrap`` says there is one)."""
        fields = {"Accept": "application/json", "User-Agent": agent, **headers}
        if whole:
            send = functools.partial(
                send_whole,
                pump,
                "POST",
                url,
                fields,
                region,
                connect_timeout=timeouts.connect,
                idle_timeout=timeouts.upload_read,
                answer_within=timeouts.upload_read,
                progress=progress,
            )
            if wrap is None:
                return await send()
            observer, thread = self.observer, threading.current_thread().name
            with observer.http_span("POST", url, region.size, **{"thread.name": thread}) as span:
                resp = await send()
                observer.answered(span, resp.status)
                return resp
        return await pump.send(
            "POST",
            url,
            fields,
            region,
            read_size=read_size,
            connect_timeout=timeouts.connect,
            idle_timeout=timeouts.upload_read,
            answer_within=timeouts.upload_read,
            progress=progress,
            sendfile=self.sendfile,
            connection=connection,
            proxy=self._proxy(url),
            bandwidth=self._bandwidth,
            wrap=wrap,
        )

    def _done(
        self, method: str, url: str, status: int | None, started: float, size: int | None
    ) -> None:
        seconds = time.perf_counter() - started
        self.observer.request_done(method, url, status, seconds, size)
        if http_log.isEnabledFor(logging.DEBUG):
            http_log.debug(
                "%s %s -> %s, %d bytes sent, %.3fs, attempt %d",
                method,
                url_for_humans(url),
                status if status is not None else "no answer",
                size or 0,
                seconds,
                ATTEMPT.get(),
            )

    async def ready_for_uploads(self) -> None:
        """Make the upload pump now (a batch does, before its first upload needs it)."""
        await self._get_pump()

    async def _get_pump(self) -> UploadPump:
        async with self._pump_lock:
            if self._pumps_closed:
                raise e.ClientClosedError("this Client is closed; create a new one")
            if self._pump is None:
                # Starting a thread takes a while: not on the loop. The TLS trust is
                # loaded by the first HTTPS upload, in its thread.
                limit = max(4, self._limit or 100)
                self._pump = await asyncio.to_thread(
                    lambda: UploadPump(context=self._upload_context, max_threads=limit)
                )
            return self._pump

    async def judge(self, url: str, policy: SourcePolicy) -> None:
        """Judge a source's first request by ``policy`` (and the feed that named it,
        ``NAMED_BY``) before anything is fetched (``_fetch.judge_source``)."""
        await judge_source(url, _named(policy), self._proxy)

    @contextlib.asynccontextmanager
    async def download(
        self,
        url: str,
        headers: Mapping[str, str],
        timeouts: Timeouts,
        piece: int,
        *,
        policy: SourcePolicy,
        max_size: int,
    ) -> AsyncIterator[tuple[int | None, AsyncIterator[bytes], str | None]]:
        """GET a source (``_fetch``): its length (if it said), its body in pieces of
        at most ``piece`` bytes, read as they are asked for (aiohttp's flow control keeps
        the rest on the wire), and the address it came from. Only ``headers`` (and the
        User-Agent) go to the source: never the API's token, never a cookie. With
        ``headers``, a redirect is refused (it could carry them to another host);
        without, it is followed as ``policy`` allows. The source gets a session of its
        own, with the trust and proxy of the client's. A task that runs a job named by a
        feed (``NAMED_BY``) judges it with the feed's address as the policy's origin."""
        policy = _named(policy)
        if self._rate is not None:
            await self._rate.wait()
        given: ssl_module.SSLContext | bool | None = self._ssl
        agent = USER_AGENT
        if not self._owns_session and self._session is not None:
            given = connector_ssl(self._session.connector)
            agent = self._session.headers.get("User-Agent", USER_AGENT)
        fetch = fetch_source(
            url,
            headers,
            agent=agent,
            timeouts=timeouts,
            piece=piece,
            policy=policy,
            max_size=max_size,
            ssl=True if given is None else given,
            proxy_for=self._proxy,
        )
        if self.observer.tracer is None:
            async with fetch as answer:
                yield answer
            return
        # A span for the source's GET (its credentials redacted; no traceparent to it),
        # not current while the body is read: the upload it feeds is its sibling, and
        # the upload's failure is not the GET's.
        span = self.observer.http_span("GET", url, None).span
        fed = False
        try:
            async with fetch as answer:
                fed = True
                yield answer
        except BaseException as exc:
            if not fed:
                Observer.failed(span, exc)
            raise
        finally:
            span.end()

    async def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        data: bytes | None,
        timeout: aiohttp.ClientTimeout,
        exact_url: bool = False,
        quiet: bool = False,
        api_origin: tuple[str, str, int | None] | None = None,
    ) -> RawResponse:
        """Send one API request and read the whole (small) answer, to its last byte.

        Redirects are not followed: the API does not redirect, and following one could
        carry a request somewhere the caller did not choose. ``exact_url``: the url is a
        server's (a progress address) and goes out byte for byte, its percent-escapes
        untouched. ``quiet``: without the span, metrics and log line (``_send_watched``
        has them in hand, and has waited for the request rate). ``api_origin``: the
        API's; a traced request to it carries the trace context (``traceparent``), one
        to any other origin (the upload host, a token endpoint) never does.
        """
        observer = self.observer
        if not quiet and (observer.active or http_log.isEnabledFor(logging.DEBUG)):
            return await self._send_watched(
                method, url, headers, data, timeout, exact_url, api_origin
            )
        session = self._session if self._session is not None else self._get_session()
        if self._rate is not None and not quiet:
            await self._rate.wait()
        target = yarl.URL(url, encoded=True) if exact_url else url
        failure: BaseException
        if "User-Agent" not in session.headers:  # a caller's session without its own
            headers = {"User-Agent": USER_AGENT, **headers}
        # Own session, no proxy configured (the usual case): nothing to work out per call.
        via = None if self._direct else self._api_proxy(url)
        try:
            async with session.request(
                method,
                target,
                headers=headers,  # aiohttp copies them into its own
                data=data,
                timeout=timeout,
                allow_redirects=False,
                proxy=None if via is None else via.url,
            ) as resp:
                declared = resp.content_length
                if declared is not None and declared > MAX_RESPONSE_BYTES:
                    raise _too_large(resp.status, method, url)
                if declared is not None and "Content-Encoding" not in resp.headers:
                    body = await resp.read()  # exactly the length declared (aiohttp stops there)
                else:
                    body = await _read_capped(resp, method, url)
                # (a read-only view of the headers; the tuple made in C: a named tuple's
                # own __new__ is a Python call)
                return _new_tuple(RawResponse, (resp.status, resp.headers, body))
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            # Translated outside this block: neither __cause__ nor __context__ may hold
            # aiohttp's exception, whose request_info carries the Authorization header.
            failure = translate(exc, method, url)
        raise failure

    async def _send_watched(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        data: bytes | None,
        timeout: aiohttp.ClientTimeout,
        exact_url: bool,
        api_origin: tuple[str, str, int | None] | None,
    ) -> RawResponse:
        """``send`` with its span, metrics and debug log line. The wait for the request
        rate comes first: its time is not the request's."""
        observer = self.observer
        send = functools.partial(
            self.send, method, url, data=data, timeout=timeout, exact_url=exact_url, quiet=True
        )
        if self._rate is not None:
            await self._rate.wait()
        started = time.perf_counter()
        status: int | None = None
        size = None if data is None else len(data)
        try:
            if observer.tracer is None:
                resp = await send(headers=headers)
            else:
                with observer.http_span(method, url, size) as span:
                    if api_origin is not None and origin(url) == api_origin:
                        headers = dict(headers)
                        observer.inject(headers)  # the API's origin only
                    resp = await send(headers=headers)
                    observer.answered(span, resp.status)
            status = resp.status
            return resp
        finally:
            self._done(method, url, status, started, size)


Wrap = Callable[[Callable[[], RawResponse]], Callable[[], RawResponse]]
"""Wraps what a pump thread runs (a span around the request)."""


def _in_thread(
    observer: Observer, url: str, size: int, run: Callable[[], RawResponse]
) -> Callable[[], RawResponse]:
    """``run`` in the context of the caller (taken now, on the loop), inside a span."""
    context = contextvars.copy_context()

    def traced() -> RawResponse:
        thread = threading.current_thread().name
        with observer.http_span("POST", url, size, **{"thread.name": thread}) as span:
            resp = run()
            observer.answered(span, resp.status)
            return resp

    return lambda: context.run(traced)


async def _read_capped(resp: aiohttp.ClientResponse, method: str, url: str) -> bytes:
    """The whole body of an answer without a Content-Length or compressed, however many
    segments it arrives in; refused past the cap. (With a Content-Length, ``send`` reads
    it at once; one shorter raises aiohttp's payload error, translated.)"""
    body = bytearray()
    async for piece in resp.content.iter_any():
        body += piece
        if len(body) > MAX_RESPONSE_BYTES:
            raise _too_large(resp.status, method, url)
    return bytes(body)


def _too_large(status: int, method: str, url: str) -> e.UnexpectedResponseError:
    return e.UnexpectedResponseError(
        f"{method} {url_for_humans(url)}: response larger than {MAX_RESPONSE_BYTES} bytes",
        status=status,
    )


def _named(policy: SourcePolicy) -> SourcePolicy:
    """``policy`` with this task's feed's address (``NAMED_BY``) as its origin."""
    named_by = NAMED_BY.get()
    return policy if named_by is None else attrs.evolve(policy, origin=named_by)
