"""Many accounts in one batch: a job's ``account`` names the environment variable that
holds its account's access token (read when the job runs, never stored, never shown),
its ``profile`` the API v2 profile it creates under. Jobs of several accounts share the
batch's client (its pool and upload pump): each job's requests carry its account's token
(``internals(client).acting_as``), and each account has its own quota window.

A paced batch takes its jobs account by account in turn (``in_turn``), within a
lookahead of ``LOOKAHEAD`` jobs. A known limit: a job waiting for its account's window
waits inside its pipeline, so once every pipeline holds such a job, other accounts'
jobs wait too (``docs/guides/migrating.md``).
"""

from __future__ import annotations

import collections
import contextlib
import os
from collections.abc import AsyncIterator, Iterator

from .._client import Client
from .._errors import (
    AccountError,
    AccountNotSetError,
    AuthenticationError,
    InsufficientScopeError,
    VidapiError,
)
from .._internals import internals
from ._jobs import UploadJob, check_variable

__all__ = ["LOOKAHEAD", "account_refused", "acting_for", "in_turn", "token_in"]

LOOKAHEAD = 1000
"""Jobs read ahead of the ones running, to take accounts in turn (held in memory)."""


def token_in(variable: str | None) -> str | None:
    """The token held by the environment variable ``variable`` (``None``: none asked);
    ``AccountError`` for a name an account may not have (``check_variable``: nothing
    read), ``AccountNotSetError`` naming the variable, never a value, when it is not set
    here."""
    if variable is None:
        return None
    check_variable(variable)
    token = os.environ.get(variable, "")
    if not token.strip():
        raise AccountNotSetError(
            f"the environment variable {variable} is not set here", variable=variable
        )
    return token


def account_refused(job: UploadJob, error: VidapiError) -> VidapiError:
    """``error`` as the job's failure: the API refusing the token of the job's account
    (401, or a scope it lacks) is that account's, not the client's: an ``AccountError``
    naming the variable (never its value), which fails this job alone for good (a
    shared queue's worker goes on with other jobs; fix the token, then run or enqueue
    the job again). Any other error as it is."""
    if job.account is None or not isinstance(error, AuthenticationError | InsufficientScopeError):
        return error
    status = "" if error.status is None else f", HTTP {error.status}"
    refused = AccountError(
        f"the API refused the token in {job.account} ({type(error).__name__}{status}); "
        "renew it, then run the job again",
        variable=job.account,
    )
    refused.__cause__ = error
    return refused


def acting_for(client: Client, job: UploadJob) -> contextlib.AbstractContextManager[None]:
    """In the block, the job's requests act for its account and profile (if it names
    them; else the client's own), and its sources are judged by its feed's address
    (``UploadJob.origin``) wherever the job runs (a shared queue's worker too)."""
    if job.origin is None and job.account is None and job.profile is None:
        return _AS_IS  # the usual job: no generator nor exit stack made for it
    return _acting_for(client, job)


_AS_IS = contextlib.nullcontext()


@contextlib.contextmanager
def _acting_for(client: Client, job: UploadJob) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        if job.origin is not None:
            stack.enter_context(internals(client).named_by(job.origin))
        if job.account is not None or job.profile is not None:
            stack.enter_context(internals(client).acting_as(token_in(job.account), job.profile))
        yield


async def in_turn(
    jobs: AsyncIterator[UploadJob], lookahead: int = LOOKAHEAD
) -> AsyncIterator[UploadJob]:
    """``jobs`` one account after the other, each account's in their order: up to
    ``lookahead`` jobs are read ahead. Jobs of one account come in their own order."""
    queues: collections.OrderedDict[tuple[str | None, str | None], collections.deque[UploadJob]]
    queues = collections.OrderedDict()
    held = 0
    more = True
    while more or held:
        while more and held < lookahead:
            try:
                job = await anext(jobs)
            except StopAsyncIteration:
                more = False
                break
            queues.setdefault((job.account, job.profile), collections.deque()).append(job)
            held += 1
        if not queues:
            break
        account, queue = next(iter(queues.items()))
        queues.move_to_end(account)
        held -= 1
        yield queue.popleft()
        if not queue:
            del queues[account]
