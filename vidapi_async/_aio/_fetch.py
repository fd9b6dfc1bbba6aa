"""Reading a url source (``upload_from_url``) over a session of its own.

Each fetch gets a fresh aiohttp session: no cookie jar (a source's ``Set-Cookie`` never
reaches the API or another source), no pooled connection from an earlier fetch, and a
resolver that checks every address a source's name resolves to against the
``SourcePolicy`` right before the connection is made, so a name that answers a public
address first and a private one the second time (DNS rebinding) is caught on the
address actually connected. Redirects are followed here, one request at a time, each
checked the same way. The body comes as pieces bounded in size, in silence between
pieces and in total time.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl as ssl_module
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from .. import _errors as e
from .._config import Timeouts
from .._protocol import Proxy, url_for_humans
from .._transfer.sources import SourcePolicy, address
from ._translate import translate

__all__ = ["MAX_REDIRECTS", "fetch_source", "judge_source"]

MAX_REDIRECTS = 10
"""Redirects followed for one source before giving up."""

Check = Callable[[str], "str | None"]


class _CheckedResolver(AbstractResolver):
    """The default resolver, keeping only the addresses ``check`` lets through; none
    left: an ``OSError`` (aiohttp's connect error), the reason kept in ``refused``."""

    def __init__(self) -> None:
        self._inner = aiohttp.DefaultResolver()
        self.check: Check | None = None
        self.peer_check: Check | None = None
        self.proxied = False
        self.refused: str | None = None
        self.last: list[str] = []
        self.literal: str | None = None
        """The request's host when it is an IP address (``None``: a name)."""
        self.connected: str | None = None
        """The peer address of the connection this request made (``None``: it made
        none, a pooled one served it)."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        if self.check is None:
            return found
        kept: list[ResolveResult] = []
        reasons: list[str] = []
        for result in found:
            why = self.check(result["host"])
            if why:
                reasons.append(why)
            else:
                kept.append(result)
        if not kept:
            self.refused = reasons[0] if reasons else f"{host} resolves to nothing"
            raise OSError(self.refused)
        self.last = [r["host"] for r in kept]
        return kept

    async def close(self) -> None:
        await self._inner.close()


class _PeerCheckedConnector(aiohttp.TCPConnector):
    """A connector that, once a connection is made (before any request byte goes on
    it), judges the socket's real peer address with ``check``: what the address given
    to ``connect`` reaches (``0.0.0.0`` reaches ``127.0.0.1``) is what the policy sees.
    ``check`` is ``None`` through a proxy (the peer is then the proxy)."""

    def __init__(self, resolver: _CheckedResolver, **kwargs: Any) -> None:
        super().__init__(resolver=resolver, **kwargs)
        self._checked = resolver

    async def _wrap_create_connection(self, *args: Any, **kwargs: Any) -> Any:
        made = await super()._wrap_create_connection(*args, **kwargs)
        transport = made[0]
        peer = transport.get_extra_info("peername")
        self._checked.connected = str(peer[0]) if peer else None
        check = self._checked.peer_check
        if check is None:
            return made
        why = check(str(peer[0])) if peer else "the connected peer address is unknown"
        if why:
            transport.abort()
            self._checked.refused = why
            raise OSError(why)
        return made


def _peer(resp: aiohttp.ClientResponse) -> str | None:
    """The address the response came from, while its connection is held."""
    connection = resp.connection
    transport = None if connection is None else connection.transport
    peer = None if transport is None else transport.get_extra_info("peername")
    return str(peer[0]) if peer else None


def _source_address(resp: aiohttp.ClientResponse, resolver: _CheckedResolver) -> str | None:
    """The source's own address, for a redirect's rule (the previous hop) and for the
    caller (a feed's origin). Through a proxy (the peer is then the proxy), only an IP
    address in the url is known: the proxy resolves a name where it stands, so this
    machine's answer for it (split DNS, [127.0.0.1, a public one]) says nothing of where
    it went: ``None``, not known (judged public, fail closed)."""
    if resolver.proxied:
        return resolver.literal
    # a body read whole has let its connection go: the address connected, else resolved
    return _peer(resp) or resolver.connected or next(iter(resolver.last), resolver.literal)


class _Deadline:
    """The source's two clocks: silence between bytes and the whole read."""

    def __init__(self, timeouts: Timeouts, shown: str) -> None:
        self._loop = asyncio.get_running_loop()
        self._idle = timeouts.source_idle
        total = timeouts.source_total
        self._total = total
        self._end = None if total is None else self._loop.time() + total
        self._shown = shown

    def _limit(self) -> tuple[float | None, str]:
        left = None if self._end is None else max(0.0, self._end - self._loop.time())
        if left is not None and (self._idle is None or left <= self._idle):
            return left, f"the source was not read whole within {self._total} s (source_total)"
        return self._idle, f"no byte from the source for {self._idle} s (source_idle)"

    async def run(self, step: Any) -> Any:
        limit, why = self._limit()
        try:
            async with asyncio.timeout(limit):
                return await step
        except TimeoutError:
            raise e.SourceError(f"GET {self._shown}: {why}", status=None) from None


async def _check_name(
    host: str, port: int, policy: SourcePolicy, check: Check, previous: str | None = None
) -> list[str]:
    """Through a proxy the proxy connects: the name is resolved here and checked; the
    addresses it has here. A name that does not resolve here cannot be checked: it is
    refused when the policy says so (``SourcePolicy.unresolved_refusal``: fail closed;
    ``previous``, the hop that redirected here, for the redirect rule), else the proxy
    may try."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        why = policy.unresolved_refusal(host, previous)
        if why:
            raise e.SourceError(f"source refused: {why}", status=None) from None
        return []
    found = [str(info[4][0]) for info in infos]
    for ip in found:
        why = check(ip)
        if why:
            raise e.SourceError(f"source refused: {why}", status=None)
    return found


def _judged_literal(host: str, check: Check) -> str | None:
    """``host`` as an IP address, judged by ``check`` (a refusal: ``SourceError``);
    ``None``: it is a name."""
    try:
        literal = str(address(host))
    except ValueError:
        return None
    why = check(literal)
    if why:
        raise e.SourceError(f"source refused: {why}", status=None)
    return literal


async def judge_source(
    url: str, policy: SourcePolicy, proxy_for: Callable[[str], Proxy | None]
) -> None:
    """Judge ``url``'s first request by ``policy`` before anything is fetched (a
    carried thumbnail or subtitle, ahead of its job's upload): its host as the fetch
    would judge it, resolved here and nothing connected. Direct, refused when every
    address it resolves to is (the fetch would connect to another), or when it does not
    resolve; through a proxy, as the fetch judges it (``_check_name``). A refusal is
    a ``SourceError`` naming the rule; the fetch judges it again when it is made."""
    parts = urlsplit(url)
    host = parts.hostname or ""

    def check(ip: str) -> str | None:
        return policy.refusal(ip, None)

    literal = _judged_literal(host, check)
    if literal is not None:
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if proxy_for(url) is not None:
        await _check_name(host, port, policy, check)
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise e.SourceError(
            f"GET {url_for_humans(url)}: {host} cannot be resolved ({exc.strerror or exc})",
            status=None,
        ) from None
    reasons = [check(str(info[4][0])) for info in infos]
    if reasons and all(reasons):
        raise e.SourceError(f"source refused: {reasons[0]}", status=None)


@contextlib.asynccontextmanager
async def fetch_source(
    url: str,
    headers: Mapping[str, str],
    *,
    agent: str,
    timeouts: Timeouts,
    piece: int,
    policy: SourcePolicy,
    max_size: int,
    ssl: ssl_module.SSLContext | bool,
    proxy_for: Callable[[str], Proxy | None],
) -> AsyncIterator[tuple[int | None, AsyncIterator[bytes], str | None]]:
    """GET a source: its length (when it said), its body in pieces of at most
    ``piece`` bytes and the address it came from (``None`` when not known: through a
    proxy, unless the host is an IP address, the proxy resolves the name); a body in
    any content coding but ``identity`` (what is asked for) is refused, never decoded.
    Every refusal is a ``SourceError`` naming the rule; nothing of the source's answer
    is kept."""
    resolver = _CheckedResolver()
    connector = _PeerCheckedConnector(resolver, ssl=ssl, use_dns_cache=False)
    async with aiohttp.ClientSession(
        connector=connector,
        cookie_jar=aiohttp.DummyCookieJar(),
        auto_decompress=False,  # asked for identity: anything else is refused
        headers={"User-Agent": agent},
    ) as session:
        clock = _Deadline(timeouts, url_for_humans(url))
        previous: str | None = None
        for _ in range(MAX_REDIRECTS + 1):
            shown = url_for_humans(url)
            resp = await _get_checked(
                session, resolver, url, headers, policy, previous, clock, timeouts, proxy_for
            )
            try:
                peer = _source_address(resp, resolver)
                if 300 <= resp.status < 400 and "Location" in resp.headers:
                    if headers:
                        raise e.SourceError(
                            f"GET {shown}: the source redirected (HTTP {resp.status}); with "
                            "headers= give the final address (they are not sent on to another)",
                            status=resp.status,
                        )
                    target = urljoin(url, resp.headers["Location"])
                    why = SourcePolicy.redirect_refusal(
                        urlsplit(url).scheme, urlsplit(target).scheme
                    )
                    if why:
                        raise e.SourceError(f"GET {shown}: refused {why}", status=resp.status)
                    url, previous = target, peer or urlsplit(url).hostname
                    continue
                if resp.status >= 300:
                    raise e.SourceError(
                        f"GET {shown}: the source answered HTTP {resp.status}", status=resp.status
                    )
                for header, allowed, why in _REFUSED_CODINGS:
                    coding = _first_other(resp.headers.getall(header, []), allowed)
                    if coding is not None:
                        raise e.SourceError(
                            f"GET {shown}: the source answered {header}: {coding}, {why}: "
                            "refused, not decoded",
                            status=resp.status,
                        )
                length = resp.content_length
                if length is not None and length > max_size:
                    raise e.SourceError(
                        f"GET {shown}: the source holds {length} bytes, more than the "
                        f"{max_size} allowed (max_source_size)",
                        status=resp.status,
                    )
                chunks = _body(resp.content.iter_chunked(piece), url, clock, max_size)
                yield length, chunks, peer
                return
            finally:
                resp.release()
        raise e.SourceError(
            f"GET {url_for_humans(url)}: more than {MAX_REDIRECTS} redirects", status=None
        )


_REFUSED_CODINGS = (
    # Not decoded: a few kilobytes of gzip can hold gigabytes of zeros.
    ("Content-Encoding", "identity", "not asked for (Accept-Encoding: identity)"),
    # aiohttp takes the chunks off and leaves the rest: the coded bytes would be
    # uploaded as the file.
    ("Transfer-Encoding", "chunked", "a coding other than chunked"),
)
"""A header, the one coding the client reads in it, and why another is refused."""


def _first_other(values: list[str], allowed: str) -> str | None:
    """The first coding in ``values`` other than ``allowed``, shown printable and
    short; ``None`` when there is none."""
    for value in values:
        for coding in value.split(","):
            coding = coding.strip()
            if coding and coding.lower() != allowed:
                return repr(coding[:40]) if not coding.isprintable() else coding[:40]
    return None


async def _get_checked(
    session: aiohttp.ClientSession,
    resolver: _CheckedResolver,
    url: str,
    headers: Mapping[str, str],
    policy: SourcePolicy,
    previous: str | None,
    clock: _Deadline,
    timeouts: Timeouts,
    proxy_for: Callable[[str], Proxy | None],
) -> aiohttp.ClientResponse:
    """One request of a source, its address checked before anything is sent to it."""

    def check(ip: str) -> str | None:
        return policy.refusal(ip, previous)

    parts = urlsplit(url)
    host = parts.hostname or ""
    via = proxy_for(url)
    resolver.check, resolver.refused, resolver.last = None, None, []
    resolver.connected = None
    resolver.peer_check = check if via is None else None
    resolver.proxied = via is not None
    literal = resolver.literal = _judged_literal(host, check)
    if via is not None:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        resolver.last = (
            [literal] if literal else await _check_name(host, port, policy, check, previous)
        )
    elif literal is None:
        resolver.check = check
    extra: dict[str, Any] = {} if via is None else {"proxy": via.url}
    failure: BaseException | None = None
    try:
        return await clock.run(  # type: ignore[no-any-return]
            session.get(
                url,
                headers={"Accept-Encoding": "identity", **headers},
                timeout=aiohttp.ClientTimeout(total=None, connect=timeouts.connect),
                allow_redirects=False,
                **extra,
            )
        )
    except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
        if resolver.refused is not None:
            failure = e.SourceError(f"source refused: {resolver.refused}", status=None)
        else:
            failure = translate(exc, "GET", url)
    raise failure


async def _body(
    chunks: AsyncIterator[bytes], url: str, clock: _Deadline, max_size: int
) -> AsyncIterator[bytes]:
    """The source's body, each piece awaited within the source's clocks and the total
    kept under ``max_size``; aiohttp's errors on the way become ours (no chain kept)."""
    taken = 0
    failure: BaseException | None = None
    try:
        while True:
            try:
                piece = await clock.run(anext(chunks))
            except StopAsyncIteration:
                return
            taken += len(piece)
            if taken > max_size:
                raise e.SourceError(
                    f"GET {url_for_humans(url)}: the source sent more than the {max_size} "
                    "bytes allowed (max_source_size)",
                    status=None,
                )
            yield piece
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        failure = translate(exc, "GET", url)
    if failure is not None:
        raise failure
