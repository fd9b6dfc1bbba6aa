"""What every namespace of the client (``client.videos``, ``client.uploads``,
``client.playlists``, ...) shares: a small class holding the client's one requester
(``_requester.Requester``: token, scopes, retries, limits, decoding, observation) and
the client's API dialect (``_dialects.dialect.Dialect``), sending through them, as
openai-python's ``resources`` and stripe-python's services do. A namespace is given
what it needs when the client builds it and never sees the client itself. A new
group of operations is a new module, never a longer client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, TypeVar

from .. import _protocol as wire
from .. import _validate as check
from .._convert import structure
from .._requester import Requester
from .pages import iter_pages

if TYPE_CHECKING:
    from .._dialects.dialect import Dialect

__all__ = ["Service"]

T = TypeVar("T")


class Service:
    """A namespace of typed operations, sharing the client's token, retries, limits and
    errors through its requester."""

    def __init__(self, requester: Requester, dialect: Dialect) -> None:
        self._requester = requester
        """The client's requester: token, retries, limits, decoding, observation."""
        self._dialect = dialect
        """The API dialect spoken (``_dialects.dialect.Dialect``), chosen when the client was
        built: called where the legacy API and v2 differ, and refusing what it lacks."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._requester.base_url}>"

    async def _list(
        self, path: str, cls: type[T], fields: Iterable[str], scope: str | None = None
    ) -> AsyncIterator[T]:
        names = check.fields_value(fields)

        def page_request(page: int) -> wire.Request:
            query = [("fields", names), ("page", str(page)), ("limit", "100")]
            return self._requester.api("GET", path, query=query, scope=scope)

        async for request, item in iter_pages(self._requester.call, page_request):
            yield structure(item, cls, what=request.what)
