"""Each account's quota as one batch knows it. Without a ``Quota`` (``QuotaStop``): once
an account is refused, no job of that account starts an upload or a create (each ends
failed at the stage it reached, resumable); other accounts' jobs go on. With one
(``QuotaWindow``, one per account): each job takes a place in the account's rolling
window before its upload, waiting for one if need be, and a refusal makes it wait and
send its create again."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import logging
import math
import os
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import attrs

from .._errors import InvalidArgumentError, QuotaExceededError

__all__ = [
    "MAX_PERIOD",
    "MAX_VIDEOS",
    "Pacing",
    "Quota",
    "QuotaStop",
    "QuotaWindow",
    "Slot",
    "finish_in",
    "kept_quota",
    "local_accounts",
    "quota_of",
]

log = logging.getLogger("vidapi_async.batch")


class QuotaStop:
    """Per account (keyed by ``account_key``), the first refusal for its quota a batch
    saw (or was told of by a shared queue), and the refusals the batch made itself
    after it: one account's refusal never stops another account's jobs."""

    def __init__(self) -> None:
        self.reached: dict[str | None, QuotaExceededError] = {}
        """Per account, the refusal that stops its new creates."""
        self._not_sent: weakref.WeakSet[QuotaExceededError] = weakref.WeakSet()

    def check(self, account: str | None) -> None:
        """Raise ``QuotaExceededError`` (not sent: the batch's own stop) once the quota
        of the account of the variable ``account`` (``None``: the client's own) was
        reached; return otherwise."""
        hit = self.reached.get(account_key(account))
        if hit is not None:
            not_sent = QuotaExceededError(
                "not sent: the account's quota was reached earlier in this batch",
                status=hit.status,
                error_type=hit.error_type,
                reason=hit.reason,
                retry_after=hit.retry_after,
            )
            self._not_sent.add(not_sent)  # the batch's own stop: not a platform refusal
            raise not_sent

    def refused(self, error: QuotaExceededError, account: str | None) -> bool:
        """Note a job's quota failure: ``True`` when the platform refused it (not the
        batch's own stop); the first such refusal stops its account's new creates."""
        if error in self._not_sent:
            return False
        if self.reached.setdefault(account_key(account), error) is error:
            log.warning("the account's quota is reached: no new create will start for it")
        return True

    def told(self, account: str | None, until: datetime.datetime | None) -> None:
        """A shared queue's word on the account's quota: reached until ``until`` (no
        create of its starts), or not (``None``)."""
        key = account_key(account)
        if until is None:
            self.reached.pop(key, None)
        elif key not in self.reached:
            self.reached[key] = QuotaExceededError(
                f"the account's quota was reached; it resets at {until:%Y-%m-%d %H:%M %Z}",
                status=403,
                retry_after=max(0.0, (until - datetime.datetime.now(datetime.UTC)).total_seconds()),
            )


MAX_PERIOD = 366 * 86400.0
"""The longest quota period, in seconds (366 days): a longer one is refused."""

MAX_VIDEOS = 100_000
"""The most creates a quota may allow in its period (the platform's are 15 and 96)."""

_PERIOD = re.compile(r"\s*([0-9]+)\s*/\s*([0-9]+(?:\.[0-9]+)?|\.[0-9]+)\s*([a-z]+)\s*", re.ASCII)
_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


@attrs.frozen
class Quota:
    """An account's upload quota: at most ``videos`` creates in any ``period`` seconds
    (a rolling window). ``Quota.parse("15/24h")``; the platform's are ``15/24h``
    (standard accounts) and ``96/24h`` (premium)."""

    videos: int
    """Creates allowed in any window of ``period`` seconds."""
    period: float
    """The window's length, in seconds."""

    def __attrs_post_init__(self) -> None:
        if isinstance(self.videos, bool) or not isinstance(self.videos, int) or self.videos < 1:
            raise InvalidArgumentError(
                "quota", f"videos must be a whole number from 1, not {self.videos!r}"
            )
        if self.videos > MAX_VIDEOS:
            raise InvalidArgumentError(
                "quota", f"videos must be at most {MAX_VIDEOS} in a period, not {self.videos}"
            )
        period = self.period
        if (
            isinstance(period, bool)
            or not isinstance(period, int | float)
            or not math.isfinite(period)
            or period <= 0
        ):
            raise InvalidArgumentError(
                "quota", f"the period must be a number of seconds above 0, not {period!r}"
            )
        if period > MAX_PERIOD:
            raise InvalidArgumentError(
                "quota", f"the period must be at most 366 days, not {period / 86400:g} days"
            )

    @classmethod
    def parse(cls, text: str) -> Quota:
        """``N/PERIOD``: a whole number of videos, then a period with its unit, ``s``,
        ``m`` (or ``min``), ``h`` or ``d``: ``96/24h``, ``15/24h``, ``3/4s``, ``2/0.5s``.
        ``InvalidArgumentError("quota", ...)`` naming what is wrong otherwise."""
        if not isinstance(text, str):
            raise InvalidArgumentError("quota", f"expected text such as '15/24h', not {text!r}")
        match = _PERIOD.fullmatch(text)
        if match is None:
            raise InvalidArgumentError(
                "quota",
                f"{text!r} is not VIDEOS/PERIOD in digits 0-9 with a unit (s, m, h, d), "
                "e.g. '15/24h' or '3/4s'",
            )
        videos, amount, unit = match.groups()
        if unit not in _UNITS:
            raise InvalidArgumentError(
                "quota", f"unknown unit {unit!r} in {text!r}: use s, m, h or d"
            )
        if len(videos.lstrip("0")) > len(str(MAX_VIDEOS)):  # no int() of a thousand digits
            raise InvalidArgumentError(
                "quota",
                f"videos must be at most {MAX_VIDEOS} in a period, in {text.strip()[:40]!r}",
            )
        return cls(int(videos), float(amount) * _UNITS[unit])

    def __str__(self) -> str:
        for unit in ("d", "h", "m"):
            if self.period >= _UNITS[unit] and (self.period / _UNITS[unit]).is_integer():
                return f"{self.videos}/{self.period / _UNITS[unit]:g}{unit}"
        return f"{self.videos}/{self.period:g}s"


def kept_quota(videos: int, period: float) -> Quota | None:
    """The quota a journal kept for an account's window, or ``None`` when it is one
    this release refuses (an earlier release let a period of centuries through): such
    a window is not shown (nor read further) by ``vidapi status``."""
    try:
        return Quota(int(videos), float(period))
    except InvalidArgumentError:
        log.warning("a window's quota kept in the journal is out of bounds; not shown")
        return None


def quota_of(value: Quota | str | None) -> Quota | None:
    """``BatchUploader(quota=)`` checked: a ``Quota``, its text, or ``None``."""
    if value is None or isinstance(value, Quota):
        return value
    if isinstance(value, str):
        return Quota.parse(value)
    raise InvalidArgumentError("quota", f"expected a Quota or text such as '15/24h', not {value!r}")


@attrs.define(eq=False)
class Slot:
    """One create's place in an account's window: taken before the job's upload, sent
    with its create, and counted from the create's end (when the platform has counted
    it for sure) for one period."""

    at: float
    """When it was taken, then when its create ended."""
    sent: bool = False
    """Its create was sent (else, given back when the job ends)."""
    ended: bool = False
    """Its create ended: ``at`` is final."""
    id: int | None = None
    """Its row, in a window shared through PostgreSQL."""


class QuotaWindow:
    """One account's rolling window, kept by the batch on its own clock: ``take`` waits,
    first come first served, until the window has a free place, and takes it."""

    def __init__(
        self,
        quota: Quota,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        label: str = "",
        told: Told | None = None,
    ) -> None:
        self.quota = quota
        self.label = label
        """The account's name as shown: its variable's, ``""`` for the client's own."""
        self.told = told or Told()
        """Who hears of its waits and creates (the progress, the journal)."""
        self._clock = clock
        self._sleep = sleep
        self._slots: list[Slot] = []
        self._blocked_until = -math.inf
        self._turn = asyncio.Lock()
        self.waiting = 0
        """Jobs waiting for a place now."""
        self.waits = 0
        """Times a job slept for a place (one wake-up each: no polling)."""
        self.refusals = 0
        """Creates the platform refused for the quota while paced (waited, then sent again)."""
        self.created = 0
        """Creates that ended (made, or their outcome unknown)."""

    def _free_at(self, now: float) -> float:
        """When the window has a free place (``now`` or later); a place whose create
        has not ended counts as ending now."""
        period = self.quota.period
        self._slots = [s for s in self._slots if not s.ended or s.at > now - period]
        at = max(now, self._blocked_until)
        if len(self._slots) >= self.quota.videos:
            stamps = sorted(s.at if s.ended else max(s.at, now) for s in self._slots)
            at = max(at, stamps[len(stamps) - self.quota.videos] + period)
        return at

    def used(self) -> int:
        """Places taken in the window now."""
        self._free_at(self._clock())
        return len(self._slots)

    def next_free(self) -> float:
        """How many seconds until the window has a free place (0: now)."""
        now = self._clock()
        return max(0.0, self._free_at(now) - now)

    async def take(self) -> Slot:
        """Wait for a free place (in turn), and take it."""
        self.waiting += 1
        try:
            async with self._turn:
                while True:
                    now = self._clock()
                    wait = self._free_at(now) - now
                    if wait <= 0:
                        slot = Slot(now)
                        self._slots.append(slot)
                        return slot
                    self.waits += 1
                    self.said_wait(len(self._slots), wait)
                    await self._sleep(wait)
        finally:
            self.waiting -= 1
            self.told.wait(self, None)

    def said_wait(self, used: int, wait: float) -> None:
        """A job waits ``wait`` seconds for a place, ``used`` taken: said at INFO (the
        account, the window, when the next place frees) and in the progress."""
        at = time.time() + wait
        shown = datetime.datetime.fromtimestamp(at).strftime(
            "%H:%M:%S" if wait < 43200 else "%Y-%m-%d %H:%M:%S"
        )
        log.info(
            "%s waits for its quota (%s): %d of %d places used; the next frees at %s",
            self.label or "the client's own account",
            self.quota,
            used,
            self.quota.videos,
            shown,
        )
        self.told.wait(self, (used, at))

    def ends(self) -> list[float]:
        """When the creates counted in the window now ended (seconds since the epoch)."""
        now, wall = self._clock(), time.time()
        self._free_at(now)
        return sorted(wall - (now - s.at) for s in self._slots if s.ended)

    async def ended(self, slot: Slot) -> None:
        """The create of ``slot`` ended (made, or its outcome unknown): the window counts
        it from now."""
        if not slot.ended:
            slot.at, slot.ended = self._clock(), True
            self.created += 1
            await self.told.ended(self)

    async def give_back(self, slot: Slot) -> None:
        """The job of ``slot`` ended: a place whose create was never sent is free again;
        one sent whose end was not seen (cancelled) counts from now."""
        if not slot.sent:
            with contextlib.suppress(ValueError):
                self._slots.remove(slot)
        else:
            await self.ended(slot)

    def refusal_wait(self, error: QuotaExceededError) -> float:
        """How long a refusal closes the window: the platform's ``retry_after``, at most
        a period; a period when it said nothing."""
        said = error.retry_after
        if said is None or not math.isfinite(said):
            return self.quota.period
        return min(max(said, 0.0), self.quota.period)

    async def refused(self, slot: Slot, error: QuotaExceededError) -> None:
        """The platform refused the create of ``slot`` for the quota (its clock, or
        creates made elsewhere, differ from this window): the place is given back and
        the window closed for the platform's ``retry_after`` (at most a period; a
        period when it said nothing)."""
        slot.sent = False
        with contextlib.suppress(ValueError):
            self._slots.remove(slot)
        self.refusals += 1
        wait = self.refusal_wait(error)
        self._blocked_until = max(self._blocked_until, self._clock() + wait)
        log.info("the platform refused a create for the quota; waiting %.1f s, then again", wait)


class Told:
    """Who hears of a window's waits and creates: the batch's progress (``wait``) and
    its journal (``ended``); by default, nobody."""

    def wait(self, window: QuotaWindow, waiting: tuple[int, float] | None) -> None:
        """``window``'s account waits (places used, when the next frees, in seconds
        since the epoch), or (``None``) no longer does."""

    async def ended(self, window: QuotaWindow) -> None:
        """A create of ``window``'s account ended (counted in its window)."""


def account_key(variable: str | None) -> str | None:
    """The key of the account whose token the environment variable ``variable`` holds
    (``None``: the client's own): a digest of the token (``token:`` and 16 hex digits
    of its SHA-256), so that two variables holding one token share one window; never
    the token. A variable not set here keys by its name (its job fails before a create)."""
    if variable is None:
        return None
    token = os.environ.get(variable, "")
    if not token.strip():
        return variable
    digest = hashlib.sha256(b"vidapi-quota-window\0" + token.encode("utf-8", "surrogateescape"))
    return "token:" + digest.hexdigest()[:16]


class Pacing:
    """A batch's windows, one per account (keyed by ``account_key``: two variables
    holding one token are one account), each of the same ``Quota``; ``new(key, name)``
    makes one (default: a ``QuotaWindow`` that tells ``told``) for the account of the
    variable ``name`` (``None``: the client's own token), shown by that name."""

    def __init__(
        self,
        quota: Quota,
        *,
        new: Callable[[str | None, str | None], QuotaWindow] | None = None,
        told: Told | None = None,
    ) -> None:
        self.quota = quota
        self._new = new or (lambda key, name: QuotaWindow(quota, label=name or "", told=told))
        self.windows: dict[str | None, QuotaWindow] = {}
        """Each account's window by its key, made by its first job."""

    def window(self, account: str | None) -> QuotaWindow:
        """The window of the account whose token the variable ``account`` holds (the
        first variable seen names it)."""
        key = account_key(account)
        found = self.windows.get(key)
        if found is None:
            found = self.windows[key] = self._new(key, account)
        return found


def finish_in(left: int, used: int, free_in: float, quota: Quota) -> float:
    """An estimate of the seconds until ``left`` more creates are made, with ``used``
    places taken in the window and the next one free in ``free_in`` seconds: the places
    free now, then a window's worth per period (uploads not counted)."""
    now_free = max(0, quota.videos - used)
    if left <= now_free:
        return 0.0
    rest = left - now_free
    return free_in + (math.ceil(rest / quota.videos) - 1) * quota.period


def local_accounts(
    windows: Iterable[tuple[str, int, float, list[float]]], records: Iterable[Any]
) -> dict[str, dict[str, Any]]:
    """Each paced account of a local journal (``SQLiteJournal.quota_sync``: the quota
    and the creates of its last window, kept by the batch as it went): its quota, the
    places used now, when the next frees, its jobs journaled and not done, and an
    estimate of when they are (``accounts_status``' shape; by the variable's name,
    ``""``: the client's own token). ``records``: the journal's ``JobRecord``s; jobs a
    run has not reached yet are not counted."""
    left: dict[str, int] = {}
    for record in records:
        if str(record.stage) != "done" and record.account is not None:
            left[record.account] = left.get(record.account, 0) + 1
    now = time.time()
    out: dict[str, dict[str, Any]] = {}
    for name, videos, period, ends in windows:
        quota = kept_quota(videos, period)
        if quota is None:
            continue
        inside = sorted(t for t in ends if t > now - period)
        free_in = 0.0
        if len(inside) >= videos:
            free_in = max(0.0, inside[len(inside) - videos] + period - now)
        mine = left.get(name, 0)

        def at(seconds: float) -> str:
            return datetime.datetime.fromtimestamp(now + seconds, datetime.UTC).isoformat()

        out[name] = {
            "quota": str(quota),
            "used": len(inside),
            "next_free": at(free_in),
            "left": mine,
            "finish_estimate": at(finish_in(mine, len(inside), free_in, quota)),
        }
    return out
