"""What a batch's pipeline steps share (``PipelineState``: the client, the journal, the
upload settings, the addresses fetched ahead, the playlists, the quota, and the one
way a step records its stage) and one job on its way through them (``JobRun``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from .._client import Client
from .._errors import (
    FileError,
    InvalidArgumentError,
    UsageError,
)
from .._internals import internals
from .._transfer.files import LocalFile
from ._adopt import (
    Adoption,
    Held,
)
from ._duplicates import Duplicates
from ._jobs import UploadJob
from ._journal import JobRecord, Journal, Stage
from ._playlists import Playlists
from ._progress import Tally
from ._quota import Pacing, QuotaStop, Slot
from ._spares import Spares

__all__ = ["JobRun", "PipelineState"]


@attrs.define
class JobRun:
    """One job on its way through the steps: the job, its record (written as it goes)
    and what its disk checks found."""

    job: UploadJob
    record: JobRecord
    local: LocalFile | FileError | None = None
    """Its file checked (``None``: a url job), or why it cannot be sent."""
    subtitles: dict[str, LocalFile] | UsageError = attrs.Factory(dict)
    """Its subtitle files checked, by language, or the first broken one."""
    seq: int | None = None
    """Its place in ``BatchUploader.run`` (playlists get videos in this order)."""
    slot: Slot | None = None
    """Its place in its account's quota window (a paced batch), once taken."""
    adopted: Held | None = None
    """The video the platform held for it, adopted in this run (no upload, no create)."""
    carried: dict[str, str] = attrs.Factory(dict)
    """Its thumbnail's and subtitles' urls carried to the platform's upload host in
    this run, before its create: each source url to the platform's url of its file."""
    doing: str | None = None
    """What it is doing that its stage does not say (``"thumbnail"``, ``"subtitles"``:
    fetching or sending a carried file): a failure there is said at it."""

    @contextlib.contextmanager
    def at(self, step: str) -> Iterator[None]:
        """In the block the job is doing ``step``; left by an error, it stays so (the
        failure is said at it)."""
        self.doing = step
        yield
        self.doing = None

    @property
    def video_id(self) -> str:
        """The job's video (a step after the create)."""
        assert self.record.video_id is not None
        return self.record.video_id


class PipelineState:
    """The ``Pipeline``'s state and its record of a job's stage (its base)."""

    def __init__(
        self,
        client: Client,
        journal: Journal,
        *,
        uploads: Mapping[str, Any],
        spares: Spares,
        playlists: Playlists,
        tally: Tally,
        quota: QuotaStop,
        duplicates: Duplicates,
        waiting: Callable[[], int],
        ready_timeout: float | None,
        pacing: Pacing | None = None,
        adoption: Adoption | None = None,
    ) -> None:
        self.client = client
        self.machinery = internals(client)
        """``internals(client)``, made once (a job asks for it several times)."""
        self.journal = journal
        self.uploads = dict(uploads)
        """``chunked``, ``workers``, ``read_size`` and ``range_size``, as the batch says."""
        self.spares = spares
        self.playlists = playlists
        self.tally = tally
        self.quota = quota
        self.duplicates = duplicates
        self.adoption = Adoption(client) if adoption is None else adoption
        """The platform's videos by bookkeeping tag, listed once per run."""
        self.adopt_only = False
        """Jobs are adopted or fail: nothing is uploaded, created or updated, and an
        adopted job is recorded done at once (``BatchUploader(adopt_only=True)``)."""
        self.waiting = waiting
        """How many queued jobs no pipeline has taken yet (addresses fetched ahead)."""
        self.ready_timeout = ready_timeout
        """``None``: jobs do not wait for their video's encoding; else how long."""
        self.pacing = pacing
        """Each account's quota window (``BatchUploader(quota=)``), or ``None``: an
        account's first refusal stops its new uploads and creates (``quota``)."""
        self.fenced = hasattr(journal, "claim")
        """A fenced journal (PostgreSQL): a write just before each create and send."""
        self._channels: dict[str, InvalidArgumentError | None] = {}

    def quota_stop(self, run: JobRun) -> None:
        """``QuotaExceededError`` (nothing sent) when the job's account's quota was
        refused earlier in an unpaced batch; a paced one waits for its window instead."""
        if self.pacing is None:
            self.quota.check(run.job.account)

    async def advance(self, record: JobRecord, stage: Stage, **changes: Any) -> None:
        """Record ``stage`` (and ``changes``) for the job, its last error cleared."""
        _moved(record, stage, changes)
        await self.journal.save(record)

    async def advance_soon(self, record: JobRecord, stage: Stage, **changes: Any) -> None:
        """``advance`` for a stage whose next step saves again, and waits for that,
        before anything depends on either (``uploaded``, then ``creating`` before the
        create): a journal with ``save_soon`` queues this write with that one's trip."""
        _moved(record, stage, changes)
        save_soon = getattr(self.journal, "save_soon", None)
        if save_soon is None:
            await self.journal.save(record)
        else:
            save_soon(record)


def _moved(record: JobRecord, stage: Stage, changes: dict[str, Any]) -> None:
    """``record`` at ``stage`` with ``changes``, its last error cleared."""
    for name, value in changes.items():
        setattr(record, name, value)
    record.stage = stage
    record.error = None
