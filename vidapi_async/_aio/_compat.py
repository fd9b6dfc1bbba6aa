"""The one place that touches aiohttp's private attributes, so that an aiohttp release
that moves them costs one module (``tests/test_layers.py`` checks them for the aiohttp
installed; supported: the 3.14 series).

``sendfile(2)`` writes the file straight into the socket behind aiohttp's back, so we
need (a) the socket transport and whether aiohttp would transform the bytes on the way
(compression, chunked framing, per-chunk trace hooks), and (b) aiohttp's byte counters,
kept as if the bytes had gone through ``writer.write``. Where any of it is missing, the
answer is "no sendfile": the body is then read and written like over TLS, which is
slower but always correct.
"""

from __future__ import annotations

import asyncio

from aiohttp.abc import AbstractStreamWriter

__all__ = ["count_sent", "sendfile_transport"]


def sendfile_transport(writer: AbstractStreamWriter) -> asyncio.Transport | None:
    """The socket transport when the kernel may copy the file straight into it: plain
    TCP, no compression or chunked framing, no per-chunk trace hooks to honour."""
    transport = getattr(writer, "transport", None)
    if (
        not isinstance(transport, asyncio.Transport)
        or transport.get_extra_info("sslcontext") is not None
        or transport.get_extra_info("socket") is None
        or getattr(writer, "chunked", True)
        or getattr(writer, "_compress", None) is not None
        or getattr(writer, "_on_chunk_sent", None) is not None
        or not isinstance(getattr(writer, "output_size", None), int)
    ):
        return None
    return transport


def count_sent(writer: AbstractStreamWriter, sent: int) -> None:
    """Keep aiohttp's accounting as if ``sent`` bytes had gone through ``writer.write``."""
    length = getattr(writer, "length", None)
    if isinstance(length, int):
        writer.length = length - sent
    writer.output_size += sent
