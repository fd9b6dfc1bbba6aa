"""The platform's categories (``GET /channels``) as a client keeps them: the slugs a
video's ``channel`` takes, kept for an hour (``client.videos.categories()`` asks for them
and ``client.videos.upload`` checks a channel against them)."""

from __future__ import annotations

import asyncio
from typing import Final

__all__ = ["CATEGORIES_TTL", "KeptCategories"]

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
