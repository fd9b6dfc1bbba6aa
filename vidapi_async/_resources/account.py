"""``client.account``: who the token belongs to (``me``, ``auth_info``) and the
account's webhook (``set_webhook``, ``get_webhook``, ``remove_webhook``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .. import _validate as check
from .._dialects.operations import Operation
from .._models import User, Webhook
from .._observe import operation
from .service import Service

__all__ = ["USER_FIELDS", "Account"]

USER_FIELDS: Final = ("id", "username", "screenname", "fullname")


class Account(Service):
    """The account the token belongs to, and its webhook."""

    @operation("get_auth_info")
    async def auth_info(self) -> dict[str, Any]:
        """``GET /auth``: who the token belongs to (``id``, ``username``,
        ``screenname``, ``scope``), as the platform says it."""
        self._dialect.refuse(Operation.GET_AUTH_INFO)
        return dict(await self._requester.call(self._requester.api("GET", "/auth")))

    @operation("me")
    async def me(self, fields: Iterable[str] = USER_FIELDS) -> User:
        """``GET /me``: the account the token belongs to."""
        names = check.fields_value(fields)
        return await self._dialect.me(self._requester, names)

    @operation("set_webhook")
    async def set_webhook(
        self, url: str, *, events: Iterable[str], secret: str | None = None
    ) -> Webhook:
        """Send the account's events to ``url`` (``POST /me`` with ``webhook_url`` and
        ``webhook_events``; scope ``manage_videos``). ``events`` are names such as
        ``video.format.ready`` (``vidapi_async.webhooks.EVENT_TYPES``; a newer
        well-formed name is sent as given).

        ``secret`` (this library's decision, see ``vidapi_async.webhooks``) is written
        as ``webhook_secret``: deliveries are then signed with it. The platform does not
        document signing: against it, leave it out and make the url unguessable.
        """
        target = check.http_url(url, "url")
        names = check.event_names(events)
        return await self._dialect.set_webhook(self._requester, target, names, secret)

    @operation("get_webhook")
    async def get_webhook(self) -> Webhook | None:
        """The account's webhook (``GET /me?fields=webhook_url,webhook_events``), or
        ``None`` when none is set (v2: the profile's ``webhook``)."""
        return await self._dialect.get_webhook(self._requester)

    @operation("remove_webhook")
    async def remove_webhook(self) -> None:
        """Stop the account's events: ``webhook_url`` written empty (a form's NULL;
        v2: the profile's ``webhook`` written null)."""
        await self._dialect.remove_webhook(self._requester)
