"""A batch's progress: jobs started, done, skipped, failed, updated and adopted, bytes sent, the
uploads in flight, handed to the caller's ``progress`` callback as ``BatchProgress``."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from .. import _metrics
from .._observe import outside_job
from ._jobs import BatchProgress
from ._quota import QuotaWindow, Told

__all__ = ["QuotaTold", "Tally"]


class Tally:
    """The counts of one batch, told to ``callback`` (if any) as they move."""

    def __init__(self, callback: Callable[[BatchProgress], Any] | None) -> None:
        self.callback = callback
        """The caller's ``progress``, or ``None`` (then nothing is counted per byte)."""
        self.counts = {
            "started": 0,
            "done": 0,
            "skipped": 0,
            "failed": 0,
            "updated": 0,
            "adopted": 0,
        }
        """Jobs per outcome so far."""
        self.bytes_sent = 0
        """Bytes of files sent so far (a retried file's bytes counted again)."""
        self.bytes_total = 0
        """Bytes of the files known so far."""
        self.files: dict[str, tuple[str, int, int]] = {}
        """The uploads in flight by job key: source, bytes sent, bytes in all."""
        self.quota: dict[str, tuple[int, int, float]] = {}
        """Accounts waiting for their quota's window (``BatchProgress.quota``)."""
        self.started_at = time.monotonic()

    def reset(self) -> None:
        """Everything back to zero (a new ``run``)."""
        self.started_at = time.monotonic()
        self.counts = dict.fromkeys(self.counts, 0)
        self.bytes_sent = self.bytes_total = 0

    def count(self, name: str, n: int = 1) -> None:
        """``n`` more jobs of outcome ``name`` (``-1``: one taken back), said."""
        self.counts[name] += n
        self.report()

    def report(self) -> None:
        """Tell the callback the counts now."""
        if self.callback is None:
            return
        progress = BatchProgress(
            started=self.counts["started"],
            done=self.counts["done"],
            skipped=self.counts["skipped"],
            failed=self.counts["failed"],
            updated=self.counts["updated"],
            adopted=self.counts["adopted"],
            bytes_sent=self.bytes_sent,
            bytes_total=self.bytes_total,
            elapsed=time.monotonic() - self.started_at,
            files=dict(self.files),
            quota=dict(self.quota),
        )
        outside_job(self.callback, progress)

    def watch(self, key: str, where: str, size: int | None) -> Callable[[int, int], None] | None:
        """An upload's progress callback for job ``key`` (``size``: its file's, when
        known before it starts); ``None`` without a callback: nobody sees the counts,
        so the upload posts nothing to the loop as it goes, and its thread never waits
        for the loop before the body's last bytes (the barrier that lets a callback's
        error stop the body)."""
        if size is not None:
            self.bytes_total += size
        sent_before = 0
        counted = size is not None

        def progress(sent: int, total: int) -> None:
            nonlocal sent_before, counted
            if not counted:  # a url's size is known once its answer has come
                self.bytes_total += total
                counted = True
            if sent < sent_before:
                sent_before = 0  # a retry starts the file again: its bytes go out again
            self.bytes_sent += sent - sent_before
            sent_before = sent
            self.files[key] = (where, sent, total)
            self.report()

        return progress if self.callback is not None else None


class QuotaTold(Told):
    """A local batch's windows told: their waits to the progress (``Tally.quota``),
    their creates to the journal, when it keeps them (``SQLiteJournal.save_quota``,
    read by ``vidapi status``), and to the metrics' gauges ``vidapi.quota.used`` and
    ``vidapi.quota.next_free`` (when served; the estimate is a shared queue's only)."""

    def __init__(self, tally: Tally, journal: Callable[[], object]) -> None:
        self._tally = tally
        self._journal = journal

    def wait(self, window: QuotaWindow, waiting: tuple[int, float] | None) -> None:
        if waiting is None:
            if self._tally.quota.pop(window.label, None) is None:
                return
        else:
            used, at = waiting
            self._tally.quota[window.label] = (used, window.quota.videos, at)
        _gauges(window)
        self._tally.report()

    async def ended(self, window: QuotaWindow) -> None:
        ends = window.ends()
        _gauges(window)
        save: Callable[..., Awaitable[None]] | None = getattr(self._journal(), "save_quota", None)
        if save is not None:
            await save(window.label, window.quota.videos, window.quota.period, ends)


def _gauges(window: QuotaWindow) -> None:
    """``window``'s places used and seconds until the next frees, as the gauges a shared
    queue's worker sets too (here as of the account's last create or wait)."""
    if _metrics.REGISTRY.on:
        labels = {"account": window.label or "own"}
        _metrics.REGISTRY.set("vidapi.quota.used", window.used(), labels)
        _metrics.REGISTRY.set("vidapi.quota.next_free", window.next_free(), labels)
