"""``Quota`` (its text, its checks) and ``QuotaWindow`` (a rolling window of creates)
on a clock of the test's own: no test here sleeps."""

from __future__ import annotations

import asyncio
import time

import pytest

import vidapi_async as va
from vidapi_async.batch._quota import Pacing, QuotaWindow


class FakeClock:
    """A clock that moves only when a waiter sleeps (and records each sleep)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


@pytest.mark.parametrize(
    ("text", "videos", "period"),
    [
        ("96/24h", 96, 86400.0),
        ("15/24h", 15, 86400.0),
        ("3/4s", 3, 4.0),
        ("2/0.5s", 2, 0.5),
        (" 10 / 30m ", 10, 1800.0),
        ("5/1d", 5, 86400.0),
        ("7/2min", 7, 120.0),
        ("100000/366d", 100000, 366 * 86400.0),
    ],
)
def test_a_quota_is_read_from_its_text(text: str, videos: int, period: float) -> None:
    quota = va.Quota.parse(text)
    assert (quota.videos, quota.period) == (videos, period)
    assert va.Quota.parse(str(quota)) == quota


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("96", "VIDEOS/PERIOD"),
        ("96/24", "VIDEOS/PERIOD"),
        ("96/h", "VIDEOS/PERIOD"),
        ("0/24h", "videos must be a whole number from 1"),
        ("3/0s", "period must be"),
        ("3/4y", "unknown unit 'y'"),
        ("-3/4s", "VIDEOS/PERIOD"),
        ("3.5/4s", "VIDEOS/PERIOD"),
        ("", "VIDEOS/PERIOD"),
        # bounded: a longer period overflowed dates (the journal's, PostgreSQL's)
        ("1/100000000d", "at most 366 days"),
        ("1/367d", "at most 366 days"),
        ("1/99999999999999999999999999999s", "at most 366 days"),
        ("1/1e400s", "VIDEOS/PERIOD"),
        ("100001/24h", "at most 100000"),
        ("99999999999999999999999/24h", "at most 100000"),
        # digits in ASCII only
        ("\u0661\u0665/\u0662\u0664h", "VIDEOS/PERIOD"),
        ("\uff11\uff15/\uff12\uff14h", "VIDEOS/PERIOD"),
        ("15/24\uff48", "VIDEOS/PERIOD"),
    ],
)
def test_a_bad_quota_is_refused_naming_the_problem(text: str, says: str) -> None:
    with pytest.raises(va.InvalidArgumentError, match=says) as info:
        va.Quota.parse(text)
    assert info.value.argument == "quota"


def test_a_quota_built_from_values_is_checked() -> None:
    with pytest.raises(va.InvalidArgumentError, match="videos"):
        va.Quota(True, 4.0)  # type: ignore[arg-type]
    with pytest.raises(va.InvalidArgumentError, match="period"):
        va.Quota(3, float("inf"))
    with pytest.raises(va.InvalidArgumentError, match="at most 366 days"):
        va.Quota(3, 367 * 86400.0)
    with pytest.raises(va.InvalidArgumentError, match="at most 100000"):
        va.Quota(10**6, 60.0)
    assert str(va.Quota(15, 86400)) == "15/1d"
    assert str(va.Quota(3, 4)) == "3/4s"


async def test_the_window_lets_n_creates_through_then_waits_for_the_oldest() -> None:
    clock = FakeClock()
    window = QuotaWindow(va.Quota(3, 4.0), clock=clock, sleep=clock.sleep)
    sent: list[float] = []
    for _ in range(7):
        slot = await window.take()
        slot.sent = True
        sent.append(clock.now)
        await window.ended(slot)
    # three at once, then three when the first three leave the window, then one more
    assert [t - 1000.0 for t in sent] == [0, 0, 0, 4, 4, 4, 8]
    assert window.waits == 2  # one wake-up per wait: no polling
    assert window.created == 7


async def test_any_window_of_a_period_holds_at_most_n_creates() -> None:
    clock = FakeClock()
    window = QuotaWindow(va.Quota(2, 10.0), clock=clock, sleep=clock.sleep)
    ends: list[float] = []

    async def job(upload: float) -> None:
        slot = await window.take()
        await clock.sleep(upload)  # its upload and create take time
        slot.sent = True
        await window.ended(slot)
        ends.append(clock.now)

    for upload in (1.0, 3.0, 0.5, 2.0, 0.0):
        await job(upload)
    for i, end in enumerate(ends):
        assert len([e for e in ends[i:] if e < end + 10.0]) <= 2


async def test_a_place_taken_and_never_sent_is_given_back() -> None:
    clock = FakeClock()
    window = QuotaWindow(va.Quota(1, 60.0), clock=clock, sleep=clock.sleep)
    slot = await window.take()
    assert window.used() == 1
    await window.give_back(slot)  # the job failed before its create
    assert window.used() == 0
    await window.take()
    assert clock.sleeps == []


async def test_a_refusal_closes_the_window_for_the_time_the_platform_says() -> None:
    clock = FakeClock()
    window = QuotaWindow(va.Quota(5, 60.0), clock=clock, sleep=clock.sleep)
    slot = await window.take()
    slot.sent = True
    await window.refused(slot, va.QuotaExceededError("no", status=403, retry_after=7))
    assert window.used() == 0
    assert window.next_free() == 7
    await window.take()
    assert clock.sleeps == [7]
    # said nothing: a whole period; said more than a period: a period
    for said in (None, 10_000.0):
        slot = await window.take()
        slot.sent = True
        await window.refused(slot, va.QuotaExceededError("no", status=403, retry_after=said))
        assert window.next_free() == 60
    assert window.refusals == 3


async def test_waiters_take_their_places_in_turn() -> None:
    clock = FakeClock()
    window = QuotaWindow(va.Quota(1, 5.0), clock=clock, sleep=clock.sleep)
    order: list[int] = []

    async def job(n: int) -> None:
        slot = await window.take()
        order.append(n)
        slot.sent = True
        await window.ended(slot)

    await asyncio.gather(*(job(n) for n in range(4)))
    assert order == [0, 1, 2, 3]
    assert clock.now - 1000.0 == 15.0


def test_each_account_has_its_own_window() -> None:
    pacing = Pacing(va.Quota(3, 4.0))
    assert pacing.window("A") is pacing.window("A")
    assert pacing.window("A") is not pacing.window("B")
    assert pacing.window(None) is not pacing.window("A")


def test_the_finish_estimate_counts_free_places_then_whole_windows() -> None:
    from vidapi_async.batch._shared_quota import finish_in

    quota = va.Quota(3, 100.0)
    assert finish_in(0, 3, 50.0, quota) == 0
    assert finish_in(2, 1, 0.0, quota) == 0  # two places free now
    assert finish_in(3, 3, 40.0, quota) == 40  # the next window
    assert finish_in(4, 3, 40.0, quota) == 140
    assert finish_in(7, 1, 10.0, quota) == 110  # 2 now, 3 at +10, 2 at +110


def test_status_skips_a_window_an_earlier_release_kept_with_a_period_now_refused() -> None:
    from vidapi_async.batch._quota import local_accounts

    now = time.time()
    windows = [("VIDAPI_OLD_TOKEN", 1, 100000000 * 86400.0, [now]), ("", 2, 60.0, [now])]
    accounts = local_accounts(windows, [])
    assert list(accounts) == [""]  # the one it can show; no crash on the other
    assert accounts[""]["quota"] == "2/1m" and accounts[""]["used"] == 1
