"""The account's own calls, mixed into ``Client``: ``me()``, ``set_thumbnail()``.

Kept apart from the client's machinery (``_client``) so that the client file holds only
how requests are made; these only say which requests.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from . import _protocol as wire
from . import _validate as check
from ._convert import structure
from ._errors import UnexpectedResponseError
from ._models import User, Video, Webhook
from ._observe import operation
from ._upload_calls import UploadCalls

if TYPE_CHECKING:
    from ._sources import UploadSource

__all__ = ["USER_FIELDS", "AccountCalls", "webhook_of"]

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


class AccountCalls(UploadCalls):
    """``me``, ``set_thumbnail`` and the webhook; ``Client`` provides the machinery."""

    @operation("get_auth_info")
    async def get_auth_info(self) -> dict[str, Any]:
        """``GET /auth``: who the token belongs to (``id``, ``username``,
        ``screenname``, ``scope``), as the platform says it."""
        return dict(await self._call(self._api("GET", "/auth")))

    @operation("me")
    async def me(self, fields: Iterable[str] = USER_FIELDS) -> User:
        """``GET /me``: the account the token belongs to."""
        names = check.fields_value(fields)
        request = self._api("GET", "/me", query=[("fields", names)])
        return structure(await self._call(request), User, what=request.what)

    @operation("set_thumbnail")
    async def set_thumbnail(
        self, video_id: str | Video, source: str | os.PathLike[str] | UploadSource
    ) -> Video:
        """Give a video its thumbnail (``thumbnail_url`` written on the video).

        ``source`` is either an ``http(s)://`` address the platform fetches itself, or
        a local image in any form ``upload_file`` takes (a path, bytes, a file, chunks):
        it is uploaded first and its uploaded address written. A path that happens to
        start with ``http://`` is given as a ``pathlib.Path``.
        """
        vid = check.video_id(video_id)
        if isinstance(source, str) and source.lower().startswith(("http://", "https://")):
            url = check.http_url(source, "source")
        else:
            url = (await self.upload_file(source)).url
        request = self._api(
            "POST",
            f"/video/{vid}",
            query=[("fields", "id,thumbnail_url")],
            form=[("thumbnail_url", url)],
            scope="manage_videos",
        )
        return structure({"id": vid, **await self._call(request)}, Video, what=request.what)

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
        ``None`` when none is set."""
        request = self._api("GET", "/me", query=[("fields", _WEBHOOK_FIELDS)])
        return webhook_of(await self._call(request), request.what)

    @operation("remove_webhook")
    async def remove_webhook(self) -> None:
        """Stop the account's events: ``webhook_url`` written empty (a form's NULL)."""
        await self._write_me([("webhook_url", wire.form_value(None))])

    async def _write_me(self, form: list[tuple[str, str]]) -> Mapping[str, Any]:
        request = self._api(
            "POST",
            "/me",
            query=[("fields", _WEBHOOK_FIELDS)],
            form=form,
            scope="manage_videos",
        )
        return await self._call(request)


_WEBHOOK_FIELDS: Final = "webhook_url,webhook_events"
