"""A client for the emulator, for tests and scripts (needs no pytest).

``client_for(emulator, **client_options)`` builds a ``Client`` for a
running ``Emulator``: its base URL, the demo token (every
scope) and trust in its certificate when it serves https.

Installing the package also registers a pytest plugin (``vidapi_async._pytest_plugin``,
loaded by its ``pytest11`` entry point only) with the fixtures ``vidapi_emulator`` and
``vidapi_client``; see that module for how to use them.
"""

from __future__ import annotations

from typing import Any

from ._client import Client
from .emulator import Emulator

__all__ = ["client_for"]


def client_for(emulator: Emulator, **options: Any) -> Client:
    """A ``Client`` for a running emulator: its base URL, the demo token (every scope)
    unless ``access_token=`` or ``auth=`` is given, and trust in its certificate."""
    if "auth" not in options:
        options.setdefault("access_token", emulator.token)
    if options.get("session") is None:
        options.setdefault("ssl", emulator.ssl_context())
    return Client(base_url=emulator.base_url, **options)
