"""Raw calls: ``client.get/post/delete(path, ...)`` and ``client.paginate(path, ...)``
(also ``client.raw.*``, where they are defined).

The escape hatch for any endpoint the typed operations do not cover. A raw call is built
by the client's dialect (``raw_request``) into the same ``wire.Request`` as a typed
call and sent by the client's requester: the
same token (refreshed), scope check, retry rules, rate and bandwidth limits, proxies,
typed errors and secret masking. Nothing here does I/O of its own. ``paginate`` pages
through ``_resources.pages.iter_pages``, as every typed listing does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from .. import _validate as check
from .._dialects.operations import Operation
from .._errors import InvalidArgumentError, UsageError
from .._observe import operation
from .service import Service

__all__ = ["RawCalls"]


class RawCalls(Service):
    """Raw calls to any path of the API, with everything a typed call has (token,
    scopes, retries, limits, typed errors). The client's flat ``get``, ``post``,
    ``delete`` and ``paginate`` are these."""

    @operation("get")
    async def get(
        self,
        path: str,
        params: Mapping[str, object] | None = None,
        *,
        fields: Iterable[str] | str | None = None,
    ) -> dict[str, Any]:
        """``GET path`` on the API and its decoded JSON answer (v2: paths under the v2
        root).

        ``path`` is a path on ``base_url`` (``"/me/videos"``); a url, a ``//host``, a
        ``..`` segment or a query in it is an ``InvalidArgumentError`` before anything is
        sent. ``params`` go in the query, in the platform's form conventions (booleans
        ``true``/``false``, lists comma-joined, ``None`` empty). ``fields`` names the
        fields to return (a list, or ``"id,title"``). Retried as every read is.
        """
        request = self._dialect.raw_request(
            self._requester.base_url, "GET", path, params=params, fields=fields
        )
        return dict(await self._requester.call(request))

    @operation("post")
    async def post(
        self,
        path: str,
        data: Mapping[str, object] | None = None,
        *,
        fields: Iterable[str] | str | None = None,
        idempotent: bool = False,
    ) -> dict[str, Any]:
        """``POST path`` with ``data`` form-encoded (the conventions of ``get``'s
        ``params``; ``None`` is the empty value that means NULL); in API v2, ``data``
        as a JSON body (``None`` is ``null``).

        A POST is retried only when it surely did not take effect (no connection was
        made, or a 429), unless ``idempotent=True`` says sending it twice is harmless
        (a write that sets values, not one that creates something).
        """
        if not isinstance(idempotent, bool):
            raise InvalidArgumentError("idempotent", "expected True or False")
        request = self._dialect.raw_request(
            self._requester.base_url,
            "POST",
            path,
            data=data or {},
            fields=fields,
            idempotent=idempotent,
        )
        return dict(await self._requester.call(request))

    @operation("patch")
    async def patch(self, path: str, data: Mapping[str, object]) -> dict[str, Any]:
        """API v2 only: ``PATCH path`` with ``data`` as a JSON body (only the fields
        sent change; the platform answers 204, returned as ``{}``). Retried as reads
        are (sending the same values twice changes nothing more)."""
        self._dialect.refuse(Operation.RAW_PATCH)
        request = self._dialect.raw_request(self._requester.base_url, "PATCH", path, data=data)
        return dict(await self._requester.call(request))

    @operation("delete")
    async def delete(self, path: str) -> dict[str, Any]:
        """``DELETE path``; retried as reads are (deleting twice deletes once)."""
        request = self._dialect.raw_request(self._requester.base_url, "DELETE", path)
        return dict(await self._requester.call(request))

    async def paginate(
        self,
        path: str,
        params: Mapping[str, object] | None = None,
        *,
        fields: Iterable[str] | str | None = None,
        limit: int = 100,
        max_items: int | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """The items of a list endpoint (``"/me/playlists"``), fetched ``limit`` at a
        time as the iteration goes, paging on ``has_more``; at most ``max_items``.
        In API v2: ``limit`` is sent as ``page_size``, the items are ``data``, and
        ``next`` is followed until it is null.

        An empty page ends it; a page that repeats items already listed, or a page 100
        (the platform's last) that still claims more, ends it with an
        ``UnexpectedResponseError``. ``page`` and ``limit`` are this method's: giving
        them in ``params`` is a ``UsageError``.
        """
        if not 1 <= check.positive_int(limit, "limit") <= 100:
            raise InvalidArgumentError("limit", "the platform pages by 1 to 100")
        if max_items is not None:
            check.positive_int(max_items, "max_items")
        given = dict(params or {})
        if "page" in given or "limit" in given or "page_size" in given:
            raise UsageError("paginate() sets page and limit itself: use limit= and max_items=")
        rows = self._dialect.raw_pages(self._requester, path, given, fields, limit, max_items)
        async for row in rows:
            yield row
