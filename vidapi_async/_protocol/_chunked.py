"""The platform's chunked upload as a state machine: which requests to make and what
each answer means. No I/O, no asyncio, no aiohttp: ``_transfer.sending`` drives it over a
socket; tests drive it with answers written by hand.

Protocol (the official SDKs' since 2020; not in the public docs): each POST to the
upload address carries raw bytes and ``Content-Range: bytes F-L/TOTAL``; while bytes
are missing the server answers 202 (or 416) with ``Range: a-b,c-d/TOTAL``, the ranges
it holds; the POST that completes the file gets 200 and the descriptor. To learn what a
server holds without sending data (after a lost answer, or in a new process), we POST
an empty body with ``Content-Range: bytes */TOTAL``: the server answers as above (our
decision where the platform says nothing; the emulator agrees).

The file is cut into ``workers`` contiguous regions, each sent ``range_size`` bytes a
request, in order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from .._errors import UnexpectedResponseError
from ._answers import decode_upload_response
from ._multipart import attachment_disposition

__all__ = ["ChunkRequest", "ChunkedUpload", "merge_ranges", "parse_held_ranges", "regions"]


def parse_held_ranges(value: str | None) -> tuple[list[tuple[int, int]], int | None]:
    """The upload server's ``Range: a-b,c-d/TOTAL`` (inclusive byte ranges it holds)."""
    if not value:
        return [], None
    text = value.strip().removeprefix("bytes=").removeprefix("bytes ")
    spans, _, total = text.partition("/")
    ranges = []
    for span in filter(None, (p.strip() for p in spans.split(","))):
        m = re.fullmatch(r"([0-9]+)-([0-9]+)", span)
        if m:
            ranges.append((int(m.group(1)), int(m.group(2))))
    return ranges, int(total) if total.strip().isdigit() else None


def merge_ranges(ranges: Iterable[Sequence[int]]) -> list[tuple[int, int]]:
    """Inclusive byte ranges, sorted and merged (adjacent ones too)."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted((int(r[0]), int(r[1])) for r in ranges):
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def regions(total: int, workers: int, range_size: int) -> list[tuple[int, int]]:
    """``workers`` contiguous ``[start, end)`` regions, each a whole number of ranges
    (the last takes the rest)."""
    chunks = math.ceil(total / range_size)
    per = math.ceil(chunks / max(1, workers))
    out = []
    for start_chunk in range(0, chunks, per):
        start = start_chunk * range_size
        out.append((start, min(total, (start_chunk + per) * range_size)))
    return out


@attrs.frozen
class ChunkRequest:
    """One POST to the upload address: its headers, and the file region it carries
    (``length`` 0: the empty "what do you hold?" request)."""

    headers: Mapping[str, str]
    first: int = 0
    length: int = 0


class ChunkedUpload:
    """What has been acknowledged so far and what to send next, for one file.

    ``absorb`` every answer; ask ``pending`` which ranges a region still needs;
    ``descriptor`` once ``done``.
    """

    def __init__(
        self,
        size: int,
        filename: str,
        *,
        range_size: int,
        workers: int,
        secrets: tuple[str, ...] = (),
    ) -> None:
        if size < 1 or range_size < 1 or workers < 1:
            raise ValueError("size, range_size and workers must be above 0")
        self.secrets = secrets
        """Masked in the server's error messages (the address's query values)."""
        self.size = size
        self.range_size = range_size
        self.workers = workers
        self.held: list[tuple[int, int]] = []
        self._disposition = attachment_disposition(filename)
        self._descriptor: Mapping[str, Any] | None = None

    # --- what to send --------------------------------------------------------------------

    def regions(self) -> list[tuple[int, int]]:
        return regions(self.size, self.workers, self.range_size)

    def ask(self) -> ChunkRequest:
        """The empty request that makes the server say what it holds."""
        return ChunkRequest({"Content-Range": f"bytes */{self.size}"})

    def send(self, first: int, length: int) -> ChunkRequest:
        """The request carrying bytes ``first`` to ``first + length - 1``."""
        return ChunkRequest(
            {
                "Content-Type": "application/octet-stream",
                "Content-Disposition": self._disposition,
                "Content-Range": f"bytes {first}-{first + length - 1}/{self.size}",
            },
            first,
            length,
        )

    def pending(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """``(first, length)`` of each range of region ``[start, end)`` not yet held,
        as of each step (a range acknowledged meanwhile is skipped)."""
        pos = start
        while pos < end and not self.done:
            length = min(self.range_size, end - pos)
            if not self.covers(pos, pos + length - 1):
                yield pos, length
            pos += length

    def ask_first(self, attempt: int) -> bool:
        """Before (re)sending a range: a retry asks what the server holds first, since
        the lost answer may hide a range that did arrive."""
        return attempt > 1 or self.done

    def still_needed(self, first: int, length: int) -> bool:
        return not self.done and not self.covers(first, first + length - 1)

    # --- what the answers mean -----------------------------------------------------------

    def absorb(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """Take in one answer: 200 completes the file, 202/416 with ``Range`` report
        what is held; anything else raises the server's error."""
        if status == 200:
            self._descriptor = decode_upload_response(status, body, self.secrets)
            self.held = [(0, self.size - 1)]
            return
        range_header = _header(headers, "Range")
        if status in (202, 416) and range_header is not None:
            ranges, _ = parse_held_ranges(range_header)
            self.held = merge_ranges([*self.held, *ranges])
            return
        decode_upload_response(status, body, self.secrets)  # the server's own error, if any
        raise UnexpectedResponseError(
            f"the upload server answered {status} without a Range", status=status
        )

    def covers(self, first: int, last: int) -> bool:
        return any(a <= first and last <= b for a, b in self.held)

    @property
    def acknowledged(self) -> int:
        """Bytes the server says it holds."""
        return sum(b - a + 1 for a, b in self.held)

    @property
    def done(self) -> bool:
        return self._descriptor is not None

    @property
    def descriptor(self) -> Mapping[str, Any]:
        """The completing answer's descriptor; raises if the server never completed."""
        if self._descriptor is None:
            raise UnexpectedResponseError(
                f"the upload server holds {self.acknowledged} of {self.size} bytes after "
                "every range was sent",
                status=None,
            )
        return self._descriptor


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name.lower():
            return value
    return None
