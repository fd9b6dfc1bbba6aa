"""Flat names of ``Client`` that forward to a namespace's method (``client.upload_video``
is ``client.videos.upload``), typed for checkers: ``alias`` is a descriptor generic in
the method's parameters and result, so ``client.upload_video`` has
``client.videos.upload``'s full signature (``ParamSpec``), coroutine or async iterator
alike. At run time the flat name is the namespace's own bound method, kept on the
instance at its first use (a per-call cost of nothing: the client's CPU per call is
benchmarked against bare aiohttp's); a deprecated alias is looked up, and warns, at
each use. On the class (``Client.upload_video``) the alias answers ``inspect.signature``,
``help()`` and ``__doc__`` with the method's own signature and docstring, and calling it
with a client as the first argument calls the namespaced method.
"""

from __future__ import annotations

import inspect
import operator
import warnings
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = ["alias", "deprecated"]

P = ParamSpec("P")
R = TypeVar("R")


class alias(Generic[P, R]):
    """``name = alias("videos", Videos.upload)`` in a class body: ``obj.name`` is
    ``obj.videos.upload``; with ``warn=True`` each access warns (``DeprecationWarning``)."""

    def __init__(
        self, service: str, method: Callable[Concatenate[Any, P], R], *, warn: bool = False
    ) -> None:
        self.service = service
        self.method = method.__name__
        self.warn = warn
        self._get = operator.attrgetter(f"{service}.{method.__name__}")
        self.name = self.__name__ = self.__qualname__ = self.method
        self.__module__ = method.__module__
        # What inspect, help() and pydoc read: the method's own signature (its ``self``
        # is the client's) and docstring, then where the name forwards to.
        self.__signature__ = inspect.signature(method)
        own = inspect.getdoc(method)
        alias_of = f"Alias of ``client.{service}.{method.__name__}``."
        self.__doc__ = f"{own}\n\n{alias_of}" if own else alias_of
        # What makes inspect take it for a function (``iscoroutinefunction``,
        # ``isasyncgenfunction``) and help() write ``async`` before a coroutine's name:
        # the method's code object and defaults; its signature is still __signature__'s.
        self.__code__ = method.__code__
        self.__defaults__ = method.__defaults__
        self.__kwdefaults__ = method.__kwdefaults__
        self.__annotations__ = method.__annotations__

    @property
    def target(self) -> str:
        """The namespaced name this one forwards to (``videos.upload``)."""
        return f"{self.service}.{self.method}"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.__name__ = name
        self.__qualname__ = f"{owner.__qualname__}.{name}"
        self.__module__ = owner.__module__

    def __call__(self, obj: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        """``Client.upload_video(client, ...)``: as ``client.upload_video(...)``."""
        method: Callable[P, R] = self.__get__(obj, type(obj))
        return method(*args, **kwargs)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> alias[P, R]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        bound = self._get(obj)
        if self.warn:
            deprecated(f"client.{self.name}", f"client.{self.target}", stacklevel=3)
        else:
            # Kept on the instance: the next access is a plain attribute (the descriptor
            # is a non-data one), so a flat call costs what a namespaced one does.
            vars(obj)[self.name] = bound
        return bound

    def __repr__(self) -> str:
        return f"<alias {self.name} of {self.target}>"


def deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` (``DeprecationWarning``)."""
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=stacklevel)
