"""The account's quota as one batch knows it: once refused, no job of the batch starts
an upload or a create (each ends failed at the stage it reached, resumable)."""

from __future__ import annotations

import logging
import weakref

from .._errors import QuotaExceededError

__all__ = ["QuotaStop"]

log = logging.getLogger("vidapi_async.batch")


class QuotaStop:
    """The first refusal for the account's quota a batch saw (or was told of by a shared
    queue), and the refusals the batch made itself after it."""

    def __init__(self) -> None:
        self.reached: QuotaExceededError | None = None
        """The refusal that stops new uploads and creates, or ``None``."""
        self._not_sent: weakref.WeakSet[QuotaExceededError] = weakref.WeakSet()

    def check(self) -> None:
        """Raise ``QuotaExceededError`` (not sent: the batch's own stop) once the
        quota was reached; return otherwise."""
        hit = self.reached
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

    def refused(self, error: QuotaExceededError) -> bool:
        """Note a job's quota failure: ``True`` when the platform refused it (not the
        batch's own stop); the first such refusal stops the batch's new work."""
        if error in self._not_sent:
            return False
        if self.reached is None:
            self.reached = error
            log.warning("the account's quota is reached: no new upload will start")
        return True
