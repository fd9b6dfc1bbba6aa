"""Who a client's requests act for, in one task: another account's token (and, in API
v2, another profile) than the client's own, set by the batch for a job of a manifest's
``account``/``profile`` (``internals(client).acting_as``); and the address of the feed
that named the task's sources (``internals(client).named_by``). Context variables, so
that the jobs of several accounts and feeds run at once through one client, one pool,
one pump."""

from __future__ import annotations

import contextvars

from ._models import AccessToken

__all__ = ["ACTING_PROFILE", "ACTING_TOKEN", "NAMED_BY"]

ACTING_TOKEN: contextvars.ContextVar[AccessToken | None] = contextvars.ContextVar(
    "vidapi_acting_token", default=None
)
"""The token this task's API requests carry instead of the client's (``None``: the
client's own). Never refreshed: a refusal of it is the job's error."""

ACTING_PROFILE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "vidapi_acting_profile", default=None
)
"""API v2: the profile this task's videos are created under instead of the client's."""

NAMED_BY: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "vidapi_named_by", default=None
)
"""The address of the feed that named this task's sources (a batch job's ``origin``):
each source fetched here is judged with it as the client's ``SourcePolicy.origin``
(``None``: the policy's own)."""
