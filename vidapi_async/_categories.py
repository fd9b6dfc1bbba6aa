"""The platform's categories (``GET /channels``), mixed into ``Client``: the slugs a
video's ``channel`` takes, kept per client for an hour and checked before an upload."""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from ._calls import CallsBase
from ._convert import category_page
from ._errors import APIError, InvalidArgumentError, TransportError
from ._observe import operation

__all__ = ["CATEGORIES_TTL", "CategoryCalls", "KeptCategories"]

log = logging.getLogger("vidapi_async")

CATEGORIES_TTL: Final = 3600.0
"""Seconds a client keeps the platform's category list."""


class KeptCategories:
    """The platform's category slugs as a client keeps them, for ``CATEGORIES_TTL``."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self._slugs: tuple[str, ...] | None = None
        self._until = 0.0

    def fresh(self, now: float) -> tuple[str, ...] | None:
        return self._slugs if now < self._until else None

    def keep(self, slugs: list[str], now: float) -> None:
        self._slugs, self._until = tuple(slugs), now + CATEGORIES_TTL


class CategoryCalls(CallsBase):
    """``categories()`` and the channel check of ``upload_video``."""

    _categories: KeptCategories

    @operation("categories")
    async def categories(self) -> list[str]:
        """``GET /channels``: the category slugs a video's ``channel`` takes, in the
        platform's order. Asked once, then kept by the client for an hour."""
        async with self._categories.lock:
            kept = self._categories.fresh(asyncio.get_running_loop().time())
            if kept is not None:
                return list(kept)
            slugs: list[str] = []
            for page in range(1, 101):  # the platform pages up to 100
                request = self._api(
                    "GET", "/channels", query=[("page", str(page)), ("limit", "100")]
                )
                items, more = category_page(await self._call(request), what=request.what)
                slugs += items
                if not more or not items:
                    break
            self._categories.keep(slugs, asyncio.get_running_loop().time())
            return list(slugs)

    async def _check_category(self, channel: str) -> None:
        """Refuse a channel that is not one of the platform's categories; where the
        list cannot be had, say so in the debug log and let the server judge."""
        try:
            slugs = await self.categories()
        except (APIError, TransportError) as exc:
            log.debug("GET /channels failed (%s): the server will judge the channel", exc)
            return
        if slugs and channel not in slugs:
            raise InvalidArgumentError(
                "channel", f"{channel!r} is not a category; the platform's: {', '.join(slugs)}"
            )
