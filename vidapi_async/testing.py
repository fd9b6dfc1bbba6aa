"""A client for the emulator, for tests and scripts (needs no pytest).

``client_for(emulator, **client_options)`` builds a ``Client`` for a
running ``Emulator``: its base URL, the demo token (every
scope) and trust in its certificate when it serves https. ``api="v2"``: its API v2
root and the demo API key (``demo-api-key``) instead.

Installing the package also registers a pytest plugin (``vidapi_async._pytest_plugin``,
loaded by its ``pytest11`` entry point only) with the fixtures ``vidapi_emulator`` and
``vidapi_client``; see that module for how to use them.
"""

from __future__ import annotations

from typing import Any, Final

from ._auth.api_key import ApiKey
from ._client import Client
from .emulator import Emulator

__all__ = ["client_for"]


DEMO_API_KEY: Final = ("demo-api-key", "demo-api-secret")
"""The emulator's demo API key and secret for API v2 (public by design)."""
V2_SCOPES: Final = (
    "account.read",
    "bundle.publisher",
    "playlist.read",
    "player.read",
    "live.read",
)
"""What ``client_for(..., api="v2")`` asks for: every operation v2 offers."""


def client_for(emulator: Emulator, **options: Any) -> Client:
    """A ``Client`` for a running emulator: its base URL, the demo token (every scope)
    unless ``access_token=`` or ``auth=`` is given, and trust in its certificate.
    With ``api="v2"``: the emulator's v2 root and, unless ``access_token=`` or
    ``auth=`` is given, ``ApiKey`` with its demo key."""
    v2 = options.get("api") == "v2"
    if "auth" not in options and "access_token" not in options:
        if v2:
            options["auth"] = ApiKey(*DEMO_API_KEY, scopes=V2_SCOPES)
        else:
            options["access_token"] = emulator.token
    if options.get("session") is None:
        options.setdefault("ssl", emulator.ssl_context())
    options.setdefault("base_url", emulator.v2_base_url if v2 else emulator.base_url)
    return Client(**options)
