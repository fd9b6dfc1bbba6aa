"""``iter_pages``: the one page loop. ``client.paginate``, ``client.videos.mine`` and
every namespace's listing page through it, so the same guards hold for every listing
(an empty page ends it; a page holding only items already seen is an
``UnexpectedResponseError``, since paging on would never end)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from .. import _protocol as wire
from .._errors import UnexpectedResponseError
from .._protocol import _v2 as v2

__all__ = ["MAX_PAGE", "MAX_V2_PAGES", "iter_next_pages", "iter_pages"]

MAX_V2_PAGES = 10_000
"""The most pages one API v2 listing is followed for; a ``next`` still given after
that is an ``UnexpectedResponseError`` (a server that never ends its list)."""


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


async def iter_next_pages(
    call: Callable[[wire.Request], Awaitable[Mapping[str, Any]]],
    first: wire.Request,
    *,
    max_items: int | None = None,
) -> AsyncIterator[tuple[wire.Request, Mapping[str, Any]]]:
    """API v2's listings: every item of ``data``, page after page, following ``next``
    until it is null (or a page is empty); at most ``max_items``. A ``next`` on another
    host, or naming a page already read, is an ``UnexpectedResponseError``
    (``_v2.next_page``)."""
    request, seen, given = first, {first.url}, 0
    while True:
        items, nxt = v2.page_items(await call(request), request.what)
        for item in items:
            yield request, item
            given += 1
            if max_items is not None and given >= max_items:
                return
        if nxt is None or not items:
            return
        if len(seen) >= MAX_V2_PAGES:
            raise UnexpectedResponseError(
                f"{request.what}: still a next page after {MAX_V2_PAGES} pages", status=None
            )
        request = v2.next_page(request, nxt, seen)
        seen.add(request.url)
