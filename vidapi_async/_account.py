"""``client.account``: who the token belongs to (``me``, ``auth_info``) and the
account's webhook (``set_webhook``, ``get_webhook``, ``remove_webhook``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from . import _protocol as wire
from . import _validate as check
from ._convert import structure
from ._errors import UnexpectedResponseError, UnsupportedOperationError
from ._models import User, Webhook
from ._observe import operation
from ._protocol import _v2 as v2
from ._service import Service

__all__ = ["USER_FIELDS", "Account", "webhook_of"]

USER_FIELDS: Final = ("id", "username", "screenname", "fullname")


def webhook_of(data: Mapping[str, Any], what: str) -> Webhook | None:
    """The webhook in ``/me``'s ``webhook_url``/``webhook_events``; ``None`` if unset."""
    url, events = data.get("webhook_url"), data.get("webhook_events")
    if url in (None, ""):
        return None
    if not isinstance(url, str):
        raise UnexpectedResponseError(f"{what}: webhook_url is not a string", status=200)
    if isinstance(events, str):
        names = tuple(e for e in events.split(",") if e)
    elif isinstance(events, list) and all(isinstance(e, str) for e in events):
        names = tuple(events)
    elif events is None:
        names = ()
    else:
        raise UnexpectedResponseError(f"{what}: webhook_events is not a list", status=200)
    return Webhook(url=url, events=names)


class Account(Service):
    """The account the token belongs to, and its webhook."""

    @operation("get_auth_info")
    async def auth_info(self) -> dict[str, Any]:
        """``GET /auth``: who the token belongs to (``id``, ``username``,
        ``screenname``, ``scope``), as the platform says it."""
        self._requester.refuse("get_auth_info")
        return dict(await self._requester.call(self._requester.api("GET", "/auth")))

    @operation("me")
    async def me(self, fields: Iterable[str] = USER_FIELDS) -> User:
        """``GET /me``: the account the token belongs to."""
        names = check.fields_value(fields)
        if self._requester.v2:  # GET /me: the user and its profiles (v2 takes no fields)
            request = v2.me(self._requester.base_url)
            data = v2.user_from(await self._requester.call(request))
            return structure(data, User, what=request.what)
        request = self._requester.api("GET", "/me", query=[("fields", names)])
        return structure(await self._requester.call(request), User, what=request.what)

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
        if self._requester.v2:
            if secret is not None:
                raise UnsupportedOperationError(
                    "set_webhook(secret=...)", "v2", "v2 documents no webhook signing secret"
                )
            await self._write_profile(target, names)
            found = await self.get_webhook()
            if found is None:
                raise UnexpectedResponseError(
                    "PATCH /profiles: the webhook was not kept", status=204
                )
            return found
        form = [("webhook_url", target), ("webhook_events", wire.form_value(names))]
        if secret is not None:
            form.append(("webhook_secret", check.text(secret, "secret", blank=False)))
        found = webhook_of(await self._write_me(form), "POST /me")
        if found is None:
            raise UnexpectedResponseError("POST /me: the webhook was not kept", status=200)
        return found

    @operation("get_webhook")
    async def get_webhook(self) -> Webhook | None:
        """The account's webhook (``GET /me?fields=webhook_url,webhook_events``), or
        ``None`` when none is set (v2: the profile's ``webhook``)."""
        if self._requester.v2:
            profile_id = await self._requester.profile_id()
            request = v2.get_profile(self._requester.base_url, profile_id)
            hook = v2.webhook_from(await self._requester.call(request))
            return (
                None
                if hook is None
                else webhook_of(
                    {"webhook_url": hook["url"], "webhook_events": hook["events"]}, request.what
                )
            )
        request = self._requester.api("GET", "/me", query=[("fields", _WEBHOOK_FIELDS)])
        return webhook_of(await self._requester.call(request), request.what)

    @operation("remove_webhook")
    async def remove_webhook(self) -> None:
        """Stop the account's events: ``webhook_url`` written empty (a form's NULL;
        v2: the profile's ``webhook`` written null)."""
        if self._requester.v2:
            await self._write_profile(None, ())
            return
        await self._write_me([("webhook_url", wire.form_value(None))])

    async def _write_profile(self, url: str | None, events: Iterable[str]) -> None:
        profile_id = await self._requester.profile_id()
        request = v2.set_webhook(self._requester.base_url, profile_id, url, tuple(events))
        await self._requester.call(request)

    async def _write_me(self, form: list[tuple[str, str]]) -> Mapping[str, Any]:
        request = self._requester.api(
            "POST",
            "/me",
            query=[("fields", _WEBHOOK_FIELDS)],
            form=form,
            scope="manage_videos",
        )
        return await self._requester.call(request)


_WEBHOOK_FIELDS: Final = "webhook_url,webhook_events"
