"""The one place that touches aiohttp's private attributes, so that an aiohttp release
that moves them costs one module (``tests/unit/test_import_layers.py`` checks them for the aiohttp
installed; supported: the 3.14 series).

Uploads are sent outside aiohttp (``_pump``); with a caller's session they must honour
the trust its connector was given, which aiohttp keeps in ``TCPConnector._ssl``. Where
it is missing, the default trust applies (the system's CAs), never less.

The bound on a silent server (``Timeouts.api_read``, aiohttp's ``sock_read``) is kept by
aiohttp's ``ResponseHandler`` with a ``call_later`` and a ``cancel`` on every read of an
answer and at its end: a heap push and a cancelled handle per read, a visible part of a
small call's cost (issue #21). On the connectors the client creates (never a caller's),
``lazy_read_timeout`` installs a handler that keeps the same bound with one timer per
connection, re-armed lazily: activity moves a deadline (a float), and the timer, when it
fires, either sleeps again until the deadline moved to or raises aiohttp's own read
timeout if the deadline passed. Where aiohttp's private protocol is not what this was
written against, the connector is left as it is (aiohttp's own timer, the same bound).
"""

from __future__ import annotations

import asyncio
import functools
import ssl

from aiohttp import client_proto

__all__ = ["connector_ssl", "lazy_read_timeout"]


def connector_ssl(connector: object) -> ssl.SSLContext | bool | None:
    """The trust a caller's ``TCPConnector(ssl=...)`` was given (``None``: the default),
    so that uploads sent outside aiohttp honour it."""
    value = getattr(connector, "_ssl", None)
    return value if isinstance(value, ssl.SSLContext | bool) else None


_HOOKS = ("_reschedule_timeout", "_drop_timeout", "_on_read_timeout", "start_timeout")


class _LazyReadTimeout(client_proto.ResponseHandler):
    """aiohttp's ``ResponseHandler`` with its ``sock_read`` timer kept lazily.

    aiohttp arms the read timeout (``_reschedule_timeout``) when the request is sent and
    on every read, and stops it (``_drop_timeout``) at the end of the answer, on a pause,
    an error, a close. Here arming only records a deadline and stopping forgets it; a
    single timer per connection sleeps until the earliest deadline it may have to keep
    and, on waking, raises aiohttp's read timeout only if a deadline is still set and has
    passed (the server silent for ``read_timeout`` while an answer is awaited), else
    sleeps again until the current one, or ends when none is set. Closing the connection
    cancels it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self._read_deadline: float | None = None
        """When the read being timed fails if nothing arrives; ``None``: none timed."""
        self._read_timer: asyncio.TimerHandle | None = None
        self._read_timer_at = 0.0
        """When ``_read_timer`` wakes (its ``when()``, kept: no call per read)."""

    def _reschedule_timeout(self) -> None:
        timeout = self._read_timeout
        if not timeout:
            self._read_deadline = None
            return
        deadline = self._loop.time() + timeout
        self._read_deadline = deadline
        timer = self._read_timer
        if timer is None or self._read_timer_at > deadline:  # none, or it wakes too late
            if timer is not None:
                timer.cancel()
            self._arm(deadline)

    def _arm(self, deadline: float) -> None:
        self._read_timer = self._loop.call_at(deadline, self._read_timer_fired)
        self._read_timer_at = deadline

    def _drop_timeout(self) -> None:
        self._read_deadline = None

    def _read_timer_fired(self) -> None:
        self._read_timer = None
        deadline = self._read_deadline
        if deadline is None:
            return  # nothing awaited: the timer ends, the next read starts one
        if self._loop.time() < deadline:  # there was activity since: sleep again
            self._arm(deadline)
            return
        self._read_deadline = None
        self._on_read_timeout()

    def _cancel_read_timer(self) -> None:
        self._read_deadline = None
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def close(self) -> None:
        super().close()
        self._cancel_read_timer()

    def abort(self) -> None:
        super().abort()
        self._cancel_read_timer()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._cancel_read_timer()
        super().connection_lost(exc)


def lazy_read_timeout(connector: object) -> bool:
    """Give a connector the client created the lazily re-armed read timeout; whether it
    was installed (``False``: aiohttp's private protocol is not the one known here, and
    aiohttp's own timer keeps the bound). Never for a caller's connector."""
    factory = getattr(connector, "_factory", None)
    if not (
        isinstance(factory, functools.partial)
        and factory.func is client_proto.ResponseHandler
        and not factory.args
        and set(factory.keywords) == {"loop"}
        and all(callable(getattr(client_proto.ResponseHandler, h, None)) for h in _HOOKS)
    ):
        return False
    connector._factory = functools.partial(  # type: ignore[attr-defined]
        _LazyReadTimeout, loop=factory.keywords["loop"]
    )
    return True
