"""The ``vidapi`` command (needs the ``cli`` extra, rich): upload, video, password,
embed, batch, serve, demo. The only part of the package that imports rich."""

from ._main import main

__all__ = ["main"]
