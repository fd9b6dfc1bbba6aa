"""When to try again, and how long to wait: ``RetryPolicy``, a small object with names.

Exponential backoff with full jitter (a random wait between 0 and
``min(max_delay, base_delay * 2 ** (attempt - 1))``), a cap on attempts and on total time,
and the server's ``Retry-After`` honoured on 429 and 503. The random source, the clock
and the sleep are injectable, so tests fix them.

What is retried depends on whether sending twice is safe:

- reads, uploads (a body rebuilt from the file for every attempt) and writes that set a
  value: on connection errors, timeouts, 429 and 5xx;
- writes that create something: only when the request is known not to have been acted on
  (no connection was made, or a 429), unless the caller can check that it did not take
  effect (``create_video(dedupe_tag=...)`` does).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import attrs

from ._errors import (
    ConnectError,
    RateLimitedError,
    ServerError,
    TransportError,
    UploadRejectedError,
    VidapiError,
)
from ._observe import ATTEMPT, retried

__all__ = ["NO_RETRY", "RetryPolicy", "create_checked", "retrying"]

log = logging.getLogger("vidapi_async.retry")
T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How often and how patiently to retry. Immutable; ``attrs.evolve`` to adjust."""

    max_attempts: int = 4
    """Attempts in all, the first included (1 means no retry)."""
    base_delay: float = 0.5
    """Seconds: the backoff ceiling of the first retry; it doubles for each next one."""
    max_delay: float = 30.0
    """Seconds: no wait is longer. A server that asks (Retry-After) for a longer wait is
    not retried: its error is raised at once, ``retry_after`` saying when to come back."""
    max_total: float | None = 300.0
    """Seconds from the first attempt after which no retry starts."""
    random: Callable[[], float] = attrs.field(default=random.random, repr=False)
    """Returns a float in [0, 1): the jitter. Fix it in tests."""
    clock: Callable[[], float] = attrs.field(default=time.monotonic, repr=False)
    """Seconds, monotonic: what ``max_total`` is measured with. Fix it in tests."""
    sleep: Callable[[float], Awaitable[None]] = attrs.field(default=asyncio.sleep, repr=False)
    """Waits between attempts (``asyncio.sleep``). Replace it in tests."""

    def backoff(self, attempt: int) -> float:
        """The jittered wait after failed attempt number ``attempt`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return self.random() * ceiling

    def delay(
        self, exc: BaseException, attempt: int, started: float, *, idempotent: bool
    ) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or ``None`` to give up."""
        if attempt >= self.max_attempts or not retryable(exc, idempotent=idempotent):
            return None
        server_says = getattr(exc, "retry_after", None)
        wait = float(server_says) if server_says is not None else self.backoff(attempt)
        if wait > self.max_delay:
            return None  # never sleep a day on a server's word
        if self.max_total is not None and self.clock() - started + wait > self.max_total:
            return None
        return wait


def retryable(exc: BaseException, *, idempotent: bool) -> bool:
    """Whether ``exc`` is worth another attempt of a request."""
    if isinstance(exc, ConnectError | RateLimitedError):
        return True  # nothing was acted on
    if isinstance(exc, UploadRejectedError):
        return exc.status in RETRYABLE_STATUSES
    if not idempotent:
        return False
    return isinstance(exc, TransportError | ServerError)


NO_RETRY = RetryPolicy(max_attempts=1)
"""Never retry: every failure is raised at once."""


async def retrying(
    policy: RetryPolicy,
    operation: Callable[[int], Awaitable[T]],
    *,
    idempotent: bool,
    what: str,
    started: float | None = None,
    failed: VidapiError | None = None,
) -> T:
    """Run ``operation(attempt)`` until it succeeds or the policy gives up; the error
    raised then carries ``attempts``. ``failed``: the first attempt was the caller's own
    (``Requester.call``, inline: one coroutine fewer when it succeeds) and raised this;
    ``started``: the clock when it started."""
    if started is None:
        started = policy.clock()
    attempt = 0
    if failed is not None:
        attempt = 1
        await _before_next(policy, failed, attempt, started, idempotent, what)
    while True:
        attempt += 1
        # Seen by the request's span (http.request.resend_count) and its log line; set
        # only when it differs, so a first attempt costs one lookup.
        token = ATTEMPT.set(attempt) if attempt > 1 or ATTEMPT.get() > 1 else None
        try:
            return await operation(attempt)
        except VidapiError as exc:
            await _before_next(policy, exc, attempt, started, idempotent, what)
        finally:
            if token is not None:
                ATTEMPT.reset(token)


async def _before_next(
    policy: RetryPolicy,
    exc: VidapiError,
    attempt: int,
    started: float,
    idempotent: bool,
    what: str,
) -> None:
    """After failed attempt ``attempt``: raise ``exc`` (carrying ``attempts``) if the
    policy gives up, else wait for the next one."""
    wait = policy.delay(exc, attempt, started, idempotent=idempotent)
    exc.attempts = attempt
    if wait is None:
        raise exc
    log.info(
        "%s: attempt %d failed (%s); retrying in %.2fs",
        what,
        attempt,
        type(exc).__name__,
        wait,
    )
    retried(_reason(exc))
    await policy.sleep(wait)


def _reason(exc: VidapiError) -> str:
    """A short, bounded label for why a request is tried again."""
    status = getattr(exc, "status", None)
    if isinstance(status, int):
        return str(status)
    return type(exc).__name__


async def create_checked(
    policy: RetryPolicy,
    create: Callable[[], Awaitable[T]],
    find: Callable[[], Awaitable[T | None]],
    *,
    what: str,
) -> T:
    """Create something at most once: after a failure whose outcome is unknown, ``find``
    looks for what an earlier attempt may have created before ``create`` runs again."""

    async def attempt(n: int) -> T:
        if n > 1:
            found = await find()
            if found is not None:
                log.info("%s: adopting what an earlier attempt created", what)
                return found
        return await create()

    return await retrying(policy, attempt, idempotent=True, what=what)
