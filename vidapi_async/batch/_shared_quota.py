"""Each account's quota window shared by every worker of a shared queue: the places
live in PostgreSQL (table ``quota_slots`` of the batch's schema, ``quota_blocks`` for
the refusals' waits), on the database's clock, so that W workers together create at
most N videos per period per account.

A place is taken in one transaction under an advisory lock of the account (the expired
ones dropped, the window counted, a place inserted or the wait until one frees said);
a create's end stamps it (``now()``); a refusal deletes it and blocks the account for
the platform's ``Retry-After`` (at most a period). A place whose worker died before its
create ended counts until a period and an hour have passed since it was taken.

A worker does not hold a job whose account must wait longer than ``HAND_BACK_AFTER``
seconds: it gives it back to the queue for when the window frees a place (no attempt
counted), so that jobs of a waiting account never block other accounts' jobs.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import TYPE_CHECKING, Any

from .. import _metrics
from .._errors import QuotaExceededError
from ._quota import Pacing, Quota, QuotaWindow, Slot, finish_in, kept_quota

if TYPE_CHECKING:
    from ._postgres import PostgresJournal

__all__ = [
    "HAND_BACK_AFTER",
    "SharedWindow",
    "accounts_status",
    "finish_in",
    "publish_quota",
    "shared_pacing",
]

HAND_BACK_AFTER = 2.0
"""Seconds of wait for its account's window beyond which a worker gives a job back to
the queue (for when a place frees) instead of holding it."""

STALE_AFTER = 3600.0
"""Seconds after its period that a place whose create never ended stops counting."""


class SharedWindow(QuotaWindow):
    """One account's window in PostgreSQL (a shared queue's)."""

    def __init__(
        self, quota: Quota, journal: PostgresJournal, account: str | None, name: str | None = None
    ) -> None:
        super().__init__(quota, label=name or "")
        self._journal = journal
        self._account = account or ""
        """Its key in the tables (``account_key``: a digest of the token, never it)."""
        self._ready = False

    async def _tables(self) -> None:
        if self._ready:
            return
        journal = self._journal
        q = journal.statement

        async def fn(conn: Any) -> None:
            async with conn.transaction():
                await journal.lock_ddl(conn)
                await conn.execute(
                    q(
                        "create table if not exists {s}.quota_slots (id bigserial primary key, "
                        "account text not null, at timestamptz not null default now(), "
                        "ended boolean not null default false)"
                    )
                )
                await conn.execute(
                    q("create index if not exists quota_slots_account on {s}.quota_slots (account)")
                )
                await conn.execute(
                    q(
                        "create table if not exists {s}.quota_blocks "
                        "(account text primary key, until timestamptz not null)"
                    )
                )
                await conn.execute(
                    q(
                        "create table if not exists {s}.quota_accounts (account text primary "
                        "key, videos integer not null, period double precision not null)"
                    )
                )
                await conn.execute(  # the variable's name that shows it (jobs name it)
                    q("alter table {s}.quota_accounts add column if not exists name text")
                )
            await conn.execute(  # what vidapi status reads: this account's quota
                q(
                    "insert into {s}.quota_accounts (account, videos, period, name) "
                    "values (%s, %s, %s, %s) on conflict (account) do update set "
                    "videos = excluded.videos, period = excluded.period, name = excluded.name"
                ),
                (self._account, self.quota.videos, self.quota.period, self.label),
            )

        await journal.run(fn)
        self._ready = True

    async def _try(self) -> tuple[int | None, float]:
        """A place taken (its id), or none and the seconds until one frees."""
        await self._tables()
        journal, q = self._journal, self._journal.statement
        period, videos, account = self.quota.period, self.quota.videos, self._account

        async def fn(conn: Any) -> tuple[int | None, float]:
            async with conn.transaction():
                await conn.execute(
                    "select pg_advisory_xact_lock(7317041, hashtext(%s))",
                    (f"{journal.schema}:{account}",),
                )
                await conn.execute(
                    q(
                        "delete from {s}.quota_slots where account = %s and at <= now() - "
                        "(case when ended then 0 else %s end + %s) * interval '1 second'"
                    ),
                    (account, STALE_AFTER, period),
                )
                row = await (
                    await conn.execute(
                        q(
                            "select greatest(0, "
                            "coalesce(extract(epoch from (select until from {s}.quota_blocks "
                            "where account = %s) - now()), 0), "
                            "coalesce(extract(epoch from (select case when ended then at else "
                            "greatest(at, now()) end as t from {s}.quota_slots "
                            "where account = %s order by t desc offset %s limit 1) "
                            "+ %s * interval '1 second' - now()), 0))"
                        ),
                        (account, account, videos - 1, period),
                    )
                ).fetchone()
                wait = float(row[0])
                if wait > 0:
                    return None, wait
                got = await (
                    await conn.execute(
                        q("insert into {s}.quota_slots (account) values (%s) returning id"),
                        (account,),
                    )
                ).fetchone()
                return int(got[0]), 0.0

        return await journal.run(fn)

    async def free_in(self) -> float:
        """Seconds until the window has a free place (0: now), taking none."""
        await self._tables()
        return (await _window_now(self._journal, self._account, self.quota))[1]

    async def take(self) -> Slot:
        self.waiting += 1
        try:
            async with self._turn:
                while True:
                    got, wait = await self._try()
                    if got is not None:
                        return Slot(0.0, id=got)
                    self.waits += 1
                    await asyncio.sleep(wait)
        finally:
            self.waiting -= 1

    async def ended(self, slot: Slot) -> None:
        if not slot.ended:
            slot.ended = True
            self.created += 1
            await self._journal.execute(
                self._journal.statement(
                    "update {s}.quota_slots set at = now(), ended = true where id = %s"
                ),
                (slot.id,),
            )

    async def give_back(self, slot: Slot) -> None:
        if slot.sent:
            await self.ended(slot)
        else:
            await self._delete(slot)

    async def _delete(self, slot: Slot) -> None:
        await self._journal.execute(
            self._journal.statement("delete from {s}.quota_slots where id = %s"), (slot.id,)
        )

    async def refused(self, slot: Slot, error: QuotaExceededError) -> None:
        slot.sent = False
        self.refusals += 1
        await self._delete(slot)
        await self._journal.execute(
            self._journal.statement(
                "insert into {s}.quota_blocks values (%s, now() + %s * interval '1 second') "
                "on conflict (account) do update "
                "set until = greatest({s}.quota_blocks.until, excluded.until)"
            ),
            (self._account, self.refusal_wait(error)),
        )


async def _window_now(journal: PostgresJournal, account: str, quota: Quota) -> tuple[int, float]:
    """``account``'s places counted in its window now, and the seconds until one frees."""
    row = await journal.fetchone(
        journal.statement(
            "with w as (select case when ended then at else greatest(at, now()) end as t "
            "from {s}.quota_slots where account = %s and (not ended or at > now() - "
            "%s * interval '1 second')) "
            "select (select count(*) from w), greatest(0, coalesce(extract(epoch from "
            "(select until from {s}.quota_blocks where account = %s) - now()), 0), "
            "coalesce(extract(epoch from (select t from w order by t desc offset %s limit 1) "
            "+ %s * interval '1 second' - now()), 0))"
        ),
        (account, quota.period, account, quota.videos - 1, quota.period),
    )
    return int(row[0]), float(row[1])


async def accounts_status(journal: PostgresJournal) -> dict[str, dict[str, Any]]:
    """Each paced account of a shared queue (workers given ``--quota``): its quota, the
    places used in its window, when the next frees, its jobs not done and an estimate
    of when they are; by the variable's name (``""``: the workers' own token). Empty
    when no worker was paced."""
    q = journal.statement
    exists = await journal.fetchone(
        "select to_regclass(%s) is not null", (f"{journal.schema}.quota_accounts",)
    )
    if not exists or not exists[0]:
        return {}
    rows = await journal.fetchall(  # a.name read so, as a table of 0.x may lack it
        q(
            "select a.account, a.videos, a.period, now(), (select count(*) from {s}.specs s "
            "left join {s}.jobs j on j.key = s.key where j.stage is distinct from 'done' "
            "and coalesce(s.spec::json->>'account', '') = coalesce(to_jsonb(a)->>'name', "
            "a.account)), coalesce(to_jsonb(a)->>'name', a.account) "
            "from {s}.quota_accounts a order by 6"
        )
    )
    out: dict[str, dict[str, Any]] = {}
    for account, videos, period, now, left, name in rows:
        quota = kept_quota(videos, period)
        if quota is None:
            continue
        used, free_in = await _window_now(journal, account, quota)
        out[name] = {
            "quota": str(quota),
            "used": used,
            "next_free": (now + datetime.timedelta(seconds=free_in)).isoformat(),
            "left": int(left),
            "finish_estimate": (
                now + datetime.timedelta(seconds=finish_in(int(left), used, free_in, quota))
            ).isoformat(),
        }
    return out


async def publish_quota(journal: PostgresJournal) -> None:
    """Each paced account's window as the metrics' gauges ``vidapi.quota.used``,
    ``vidapi.quota.next_free`` and ``vidapi.quota.finish_estimate`` (label ``account``:
    the variable's name, ``own`` for the workers' own token; never a token)."""
    accounts = await accounts_status(journal)
    for name, values in accounts.items():
        labels = {"account": name or "own"}
        now = datetime.datetime.now(datetime.UTC)
        _metrics.REGISTRY.set("vidapi.quota.used", values["used"], labels)
        for metric, key in (
            ("vidapi.quota.next_free", "next_free"),
            ("vidapi.quota.finish_estimate", "finish_estimate"),
        ):
            at = datetime.datetime.fromisoformat(values[key])
            _metrics.REGISTRY.set(metric, max(0.0, (at - now).total_seconds()), labels)


def shared_pacing(quota: Quota, journal: PostgresJournal) -> Pacing:
    """A shared queue's windows: one per account, in the batch's PostgreSQL schema."""
    return Pacing(quota, new=lambda key, name: SharedWindow(quota, journal, key, name))
