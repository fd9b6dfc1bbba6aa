"""Raw calls: ``client.get/post/delete(path, ...)`` and ``client.paginate(path, ...)``.

The escape hatch for any endpoint the typed operations do not cover. A raw call is built
into the same ``wire.Request`` as a typed call and sent by the client's own ``_call``:
the same token (refreshed), scope check, retry rules, rate and bandwidth limits,
proxies, typed errors and secret masking. Nothing here does I/O of its own.

``iter_pages`` is the one page loop: ``paginate``, ``iter_videos`` and the typed
resources' listings all page through it, so the same guards hold for every listing
(an empty page ends it; a page holding only items already seen is an
``UnexpectedResponseError``, since paging on would never end).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any, Final

from . import _protocol as wire
from . import _validate as check
from ._calls import CallsBase
from ._errors import InvalidArgumentError, UnexpectedResponseError, UsageError
from ._observe import operation

__all__ = ["MAX_PAGE", "RawCalls", "iter_pages", "raw_request", "scope_for"]

_SCOPES: Final = (
    # (methods, path pattern, scope): the scope each known write needs, so that a raw
    # call is refused before sending when the token's scopes are known (as typed ones).
    (("GET", "POST"), r"/file/upload/?", "manage_videos"),
    (("POST",), r"/(me|user/[^/]+)/videos/?|/videos/?", "manage_videos"),
    (("DELETE",), r"/video/[^/]+/?", "manage_videos"),
    (("POST", "DELETE"), r"/video/[^/]+/subtitles/?|/subtitle/[^/]+/?", "manage_subtitles"),
    (("POST",), r"/me/playlists/?", "manage_playlists"),
    (("POST", "DELETE"), r"/playlist/[^/]+(/videos(/[^/]+)?)?/?", "manage_playlists"),
    (("POST",), r"/me/players/?", "manage_players"),
    (("POST", "DELETE"), r"/player/[^/]+/?", "manage_players"),
)


def scope_for(method: str, path: str) -> str | None:
    """The scope a request to ``path`` needs, where the platform documents one."""
    for methods, pattern, scope in _SCOPES:
        if method in methods and re.fullmatch(pattern, path):
            return scope
    return None


def raw_request(
    base_url: str,
    method: str,
    path: object,
    *,
    params: Mapping[str, object] | None = None,
    data: Mapping[str, object] | None = None,
    fields: Iterable[str] | str | None = None,
    idempotent: bool = True,
) -> wire.Request:
    """The request of a raw call, every argument checked before anything is sent."""
    try:
        checked = wire.api_path(path)
    except ValueError as exc:
        raise InvalidArgumentError("path", str(exc)) from None
    try:
        query = wire.form_fields(params, "params")
        form = None if method != "POST" else wire.form_fields(data, "data")
    except TypeError as exc:
        raise InvalidArgumentError(str(exc).split(":", 1)[0], str(exc).split(": ", 1)[1]) from None
    if fields is not None:
        if isinstance(fields, str):
            fields = fields.split(",")  # "id,title" as the platform writes it
        if any(k == "fields" for k, _ in query):
            raise UsageError("give the fields once: fields= or params['fields'], not both")
        query.append(("fields", check.fields_value(fields)))
    return wire.api_request(
        base_url,
        method,
        checked,
        query=query,
        form=form,
        scope=scope_for(method, checked.rstrip("/") or "/"),
        idempotent=idempotent,
    )


def _key(item: object) -> str:
    """What identifies an item of a listing: its id, else a digest of its JSON."""
    if isinstance(item, Mapping) and isinstance(item.get("id"), str):
        return f"id:{item['id']}"
    text = json.dumps(item, sort_keys=True, default=str)
    return "sha1:" + hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


MAX_PAGE = 100
"""The platform's last page of any listing."""


async def iter_pages(
    call: Callable[[wire.Request], Awaitable[Mapping[str, Any]]],
    page_request: Callable[[int], wire.Request],
    *,
    max_items: int | None = None,
) -> AsyncIterator[tuple[wire.Request, Mapping[str, Any]]]:
    """Every item of a listing, with the request that fetched it, paging on
    ``has_more`` (the platform's ``total`` is approximate).

    An empty page ends the listing whatever ``has_more`` claims; an item already seen
    (a listing that shifted while paging) is skipped; a page holding nothing but items
    already seen while claiming more is an ``UnexpectedResponseError`` (a server
    repeating a page would otherwise be paged for ever). The platform pages at most
    up to page ``MAX_PAGE`` (100): a page 100 that still claims more ends the listing
    with an ``UnexpectedResponseError`` (after its items), not silently.
    """
    seen: set[str] = set()
    given = 0
    page = 1
    while True:
        request = page_request(page)
        data = await call(request)
        items = data.get("list")
        if not isinstance(items, list):
            raise UnexpectedResponseError(f"{request.what}: the answer has no list", status=200)
        fresh = 0
        for item in items:
            if not isinstance(item, Mapping):
                raise UnexpectedResponseError(
                    f"{request.what}: a list item is not an object", status=200
                )
            key = _key(item)
            if key in seen:
                continue
            seen.add(key)
            fresh += 1
            yield request, item
            given += 1
            if max_items is not None and given >= max_items:
                return
        if data.get("has_more") is not True or not items:
            return
        if page >= MAX_PAGE:
            raise UnexpectedResponseError(
                f"{request.what}: page {page} still claims more, but the platform pages no "
                f"further than page {MAX_PAGE}; narrow the listing to see the rest",
                status=200,
            )
        if not fresh:
            raise UnexpectedResponseError(
                f"{request.what}: page {page} repeats items already listed while claiming "
                "more; stopped rather than paging for ever",
                status=200,
            )
        page += 1


class RawCalls(CallsBase):
    """The raw calls, mixed into ``Client`` (which provides ``_call``)."""

    @operation("get")
    async def get(
        self,
        path: str,
        params: Mapping[str, object] | None = None,
        *,
        fields: Iterable[str] | str | None = None,
    ) -> dict[str, Any]:
        """``GET path`` on the API and its decoded JSON answer.

        ``path`` is a path on ``base_url`` (``"/me/videos"``); a url, a ``//host``, a
        ``..`` segment or a query in it is an ``InvalidArgumentError`` before anything is
        sent. ``params`` go in the query, in the platform's form conventions (booleans
        ``true``/``false``, lists comma-joined, ``None`` empty). ``fields`` names the
        fields to return (a list, or ``"id,title"``). Retried as every read is.
        """
        request = raw_request(self.base_url, "GET", path, params=params, fields=fields)
        return dict(await self._call(request))

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
        ``params``; ``None`` is the empty value that means NULL).

        A POST is retried only when it surely did not take effect (no connection was
        made, or a 429), unless ``idempotent=True`` says sending it twice is harmless
        (a write that sets values, not one that creates something).
        """
        if not isinstance(idempotent, bool):
            raise InvalidArgumentError("idempotent", "expected True or False")
        request = raw_request(
            self.base_url, "POST", path, data=data or {}, fields=fields, idempotent=idempotent
        )
        return dict(await self._call(request))

    @operation("delete")
    async def delete(self, path: str) -> dict[str, Any]:
        """``DELETE path``; retried as reads are (deleting twice deletes once)."""
        return dict(await self._call(raw_request(self.base_url, "DELETE", path)))

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
        if "page" in given or "limit" in given:
            raise UsageError("paginate() sets page and limit itself: use limit= and max_items=")
        raw_request(self.base_url, "GET", path, params=given, fields=fields)  # checked now

        def page_request(page: int) -> wire.Request:
            query = {**given, "page": page, "limit": limit}
            return raw_request(self.base_url, "GET", path, params=query, fields=fields)

        async for _, item in iter_pages(self._call, page_request, max_items=max_items):
            yield dict(item)
