"""One HTTP/1.1 exchange of the upload pump, framed by h11 (sans-io: bytes in, events
out). The request's head is h11's; its body is sent by the caller (``sendfile``, ``ssl``)
and only counted here (``send_with_data_passthrough``), so h11 checks the length
declared. The answer is h11's strict reading: 1xx answers skipped, status and lengths
ASCII digits, chunk sizes hex digits, ``Transfer-Encoding`` exactly ``chunked``, two
different Content-Lengths refused, a Content-Length with a Transfer-Encoding refused
(RFC 9112 6.3), a body capped in size.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence

import attrs
import h11

__all__ = ["Answer", "AnswerFramer", "AnswerTooLarge", "BrokenAnswer", "UnsendableRequest"]


class UnsendableRequest(ValueError):
    """HTTP/1.1 cannot carry the request as given (a control character in a header or
    the target)."""


class BrokenAnswer(Exception):
    """The answer is not well-formed HTTP/1.1, or ended early."""


class AnswerTooLarge(BrokenAnswer):
    """The answer's body is larger than the cap."""


@attrs.frozen
class Answer:
    status: int
    headers: dict[str, str]
    """As the server spelled the names; a repeated header keeps its last value."""
    body: bytes


_NAME = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
"""A header's name: a token (RFC 9110; h11's ``field_name``)."""
_VALUE = re.compile(rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?")
"""A header's value (h11's ``field_value``): no control character, no CR or LF, no
space at either end."""


class _Sized:
    """Stands for body bytes the caller sends itself: h11 only counts them."""

    def __init__(self, n: int) -> None:
        self._n = n

    def __len__(self) -> int:
        return self._n


class AnswerFramer:
    """``request_head()``, the body sent by the caller (``body_sent(n)``), then
    ``feed(data)`` until it returns the ``Answer`` (``b""``: the connection closed).
    ``reusable`` afterwards: the connection may carry the next request (the answer was
    delimited, both sides keep it alive, and nothing arrived past the answer).

    The usual exchange (a request with one Host and an exact Content-Length, an answer
    ``HTTP/1.1`` with a status of 200 to 599 but 204 and 304, plain ASCII headers and one
    Content-Length) is framed here without h11, which costs more than the rest of an
    upload's exchange (issue 43): what it accepts is a subset of what h11 accepts, read
    the same. Anything else (1xx, chunked, no length, a header outside that subset, the
    connection closed early, bytes past the answer's head cap) hands every segment so far
    to h11 as it came, and h11 decides, as it did for everything before."""

    def __init__(
        self,
        method: str,
        target: str,
        headers: Sequence[tuple[str, str]],
        *,
        cap: int,
        head_cap: int = 64 * 1024,
    ) -> None:
        try:
            # The headers checked here, with h11's own grammar, in one pass (h11's
            # check of each one costs more than the rest of the exchange); h11 still
            # checks the method, the target, Host and the lengths.
            raw = [(name.encode("ascii"), value.encode("ascii")) for name, value in headers]
            if not all(_NAME.fullmatch(n) and _VALUE.fullmatch(v) for n, v in raw):
                raise UnsendableRequest("a header holds what HTTP cannot carry")
            self._method = method.encode("ascii")
            self._target = target.encode("ascii")
        except UnicodeEncodeError:
            raise UnsendableRequest("a header or the target holds what HTTP cannot carry") from None
        self._raw = raw
        self._head_cap = head_cap
        self._cap = cap
        self._status: int | None = None
        self._headers: dict[str, str] = {}
        self._body = bytearray()
        self.answer: Answer | None = None
        self._declared = _plain_request(self._method, self._target, raw)
        """The body's length when this framer reads the usual exchange itself; ``None``:
        h11 does everything (``_conn``)."""
        self._conn: h11.Connection | None = None
        self._segments: list[bytes] = []
        """What arrived so far, as it came (handed to h11 if it has to take over)."""
        self._buffer = bytearray()
        self._plain: tuple[int, int, dict[str, str], int, bool] | None = None
        """Once its head is read: where the body starts, and ``_plain_head``'s reading."""
        self._sent: int | None = None
        self._keep = False
        """Both sides keep the connection alive, nothing came past the answer."""
        if self._declared is None:
            self._take_over()

    def _take_over(self) -> None:
        """h11, from the start: the request and the body as sent, then every segment
        received so far (``feed`` goes on with it)."""
        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=self._head_cap)
        try:
            request = h11.Request(
                method=self._method, target=self._target, headers=self._raw, _parsed=True
            )
        except h11.LocalProtocolError:  # its message may quote a header
            raise UnsendableRequest("a header or the target holds what HTTP cannot carry") from None
        self._conn, self._declared = conn, None
        head = conn.send(request)
        if self._sent is not None:
            self._h11_body_sent(self._sent)
        self._request_head = head

    def request_head(self) -> bytes:
        """The request line and headers (as h11 writes them: Host first)."""
        if self._conn is not None:
            head = self._request_head
            assert head is not None
            return head
        host = [f for f in self._raw if f[0].lower() == b"host"]
        rest = [f for f in self._raw if f[0].lower() != b"host"]
        lines = [b"%s %s HTTP/1.1\r\n" % (self._method, self._target)]
        lines += [b"%s: %s\r\n" % field for field in host + rest]
        lines.append(b"\r\n")
        return b"".join(lines)

    def body_sent(self, n: int) -> None:
        if self._conn is None and n != self._declared:
            self._take_over()  # (h11 says what is wrong with it)
        if self._conn is not None:
            self._h11_body_sent(n)
        else:
            self._sent = n

    def _h11_body_sent(self, n: int) -> None:
        assert self._conn is not None
        if n:
            self._conn.send_with_data_passthrough(h11.Data(data=_Sized(n)))  # type: ignore[arg-type]
        self._conn.send(h11.EndOfMessage())

    def feed(self, data: bytes) -> Answer | None:
        """More of the answer (``b""`` at the end of the connection): the ``Answer``
        once whole, else ``None``; ``BrokenAnswer`` if it cannot be one."""
        if self._conn is None:
            self._segments.append(data)
            if self._sent is not None and data:
                with contextlib.suppress(_Unusual):
                    return self._plain_answer()  # (None: more to come)
            return self._replay()
        try:
            self._conn.receive_data(data)
            return self._events()
        except h11.RemoteProtocolError as exc:
            raise BrokenAnswer(f"not a well-formed HTTP/1.1 answer ({exc})") from None

    def _replay(self) -> Answer | None:
        """h11 takes over: each segment so far handed to it as it came."""
        segments, self._segments = self._segments, []
        self._take_over()
        answer = None
        for segment in segments:
            answer = self.feed(segment)
            if answer is not None:
                break
        return answer

    def _plain_answer(self) -> Answer | None:
        """The usual answer, read here: the ``Answer`` or ``None`` (more to come);
        ``_Unusual`` for anything else (h11 decides). The head is read once, whole."""
        searched = max(0, len(self._buffer) - 2)  # (each byte searched once)
        self._buffer += self._segments[-1]
        received = self._buffer
        if self._plain is None:
            if not _STATUS_START.startswith(received[: len(_STATUS_START)]):
                raise _Unusual  # (h11 may refuse it now: a first byte below "!", no line)
            blank = _BLANK_LINE.search(received, searched)
            if blank is None:
                if len(received) > self._head_cap:
                    raise _Unusual
                return None
            end = blank.start() - 1
            if received[end : blank.end()] != b"\r\n\r\n":
                raise _Unusual  # h11's head ends at a bare LF: its reading, now
            plain = self._plain_head(bytes(received[: end + 2]))
            if plain is None:
                raise _Unusual
            self._plain = (end + 4, *plain)
        start, status, headers, length, closes = self._plain
        if len(received) - start < length:
            return None
        self._keep = len(received) - start == length and not closes and self._keeps_alive()
        self._status, self._headers = status, headers
        self.answer = Answer(status, headers, bytes(received[start : start + length]))
        return self.answer

    def _plain_head(self, head: bytes) -> tuple[int, dict[str, str], int, bool] | None:
        """(status, headers, Content-Length, says close) of a head in the usual subset;
        ``None`` for any other."""
        found = _PLAIN_HEAD.fullmatch(head)
        if found is None:
            return None
        status = int(found[1])
        if status in (204, 304):
            return None
        headers: dict[str, str] = {}
        length: int | None = None
        lengths = 0
        closes = False
        for name, value in _PLAIN_FIELD.findall(found[2]):
            key = name.lower()
            if key == b"content-length":
                lengths += 1
                if not value.isdigit() or len(value) > 20:
                    return None
                length = int(value)
            elif key == b"transfer-encoding":
                return None
            elif key == b"connection":
                closes = closes or b"close" in _comma_values(value)
            headers[name.decode("latin-1")] = value.decode("latin-1")
        if lengths != 1 or length is None:
            return None
        if length > self._cap:
            raise AnswerTooLarge(f"an answer larger than {self._cap} bytes")
        return status, headers, length, closes

    def _keeps_alive(self) -> bool:
        """Whether the request asked to keep the connection (no ``Connection: close``)."""
        return not any(
            b"close" in _comma_values(value)
            for name, value in self._raw
            if name.lower() == b"connection"
        )

    def _events(self) -> Answer | None:
        assert self._conn is not None
        while True:
            event = self._conn.next_event()
            if event is h11.NEED_DATA:
                return None
            if isinstance(event, h11.InformationalResponse):
                continue  # 100 Continue, 103 Early Hints: the answer is still to come
            if isinstance(event, h11.Response):
                self._status = event.status_code
                self._headers = {
                    k.decode("latin-1"): v.decode("latin-1") for k, v in event.headers.raw_items()
                }
                names = {name.lower() for name in self._headers}
                if {"content-length", "transfer-encoding"} <= names:
                    # RFC 9112 6.3: a sign of smuggling; the connection is not reused.
                    raise BrokenAnswer("an answer with both Content-Length and Transfer-Encoding")
                length = _length(self._headers)
                if length is not None and length > self._cap:
                    raise AnswerTooLarge(f"an answer larger than {self._cap} bytes")
            elif isinstance(event, h11.Data):
                self._body += event.data
                if len(self._body) > self._cap:
                    raise AnswerTooLarge(f"an answer larger than {self._cap} bytes")
            elif isinstance(event, h11.EndOfMessage):
                assert self._status is not None
                self.answer = Answer(self._status, self._headers, bytes(self._body))
                return self.answer
            elif event is h11.PAUSED and self._status is not None:
                # A CONNECT's 2xx: what follows belongs to the tunnel, not to HTTP.
                self.answer = Answer(self._status, self._headers, b"")
                return self.answer
            else:  # ConnectionClosed before the answer was whole
                raise BrokenAnswer("the connection closed before the answer was complete")

    @property
    def tunnel_clean(self) -> bool:
        """After a CONNECT's 2xx: the proxy sent nothing past its answer."""
        assert self._conn is not None  # (a CONNECT is always h11's)
        pending, closed = self._conn.trailing_data
        return not pending and not closed

    @property
    def reusable(self) -> bool:
        if self._conn is None:
            return self.answer is not None and self._keep
        pending, closed = self._conn.trailing_data
        return (
            self.answer is not None
            and self._conn.our_state is h11.DONE
            and self._conn.their_state is h11.DONE
            and not pending
            and not closed
        )


class _Unusual(Exception):
    """An answer outside the subset ``AnswerFramer`` reads itself: h11's to read."""


_TOKEN = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
_PLAIN_HEAD = re.compile(
    rb"HTTP/1\.1 ([2-5][0-9][0-9]) [\x20-\x7e]*\r\n((?:"
    + _TOKEN
    + rb":[ \t]*(?:[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*[ \t]*)?\r\n)*)"
)
"""An answer's head in the subset this module reads without h11: HTTP/1.1, a final
status, headers of printable ASCII (no obs-fold, no obs-text). Each line can be read
one way only (the spaces around an empty value are the first ``[ \t]*``'s): a pattern
with two readings of a line backtracks through all their products when a later line
is outside the subset."""
_PLAIN_FIELD = re.compile(
    rb"(" + _TOKEN + rb"):[ \t]*(?:([\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*)[ \t]*)?\r\n"
)
_STATUS_START = b"HTTP/1.1 "
"""How the subset's answers begin: anything else is h11's from its first segment."""
_BLANK_LINE = re.compile(rb"\n\r?\n")
"""Where h11 sees a head's end (it takes a bare LF as a line's end)."""
_TARGET = re.compile(rb"[\x21-\x7e]+")
"""A request target (h11's ``request_target``)."""


def _comma_values(value: bytes) -> list[bytes]:
    """A comma-separated header's values, lowercased (h11's ``get_comma_header``)."""
    return [part.strip().lower() for part in value.split(b",")]


def _plain_request(method: bytes, target: bytes, raw: list[tuple[bytes, bytes]]) -> int | None:
    """The body's length if the request is one this module frames without h11 (one
    Host, one Content-Length of digits, no Transfer-Encoding or Expect, not HEAD or
    CONNECT, a valid method and target), else ``None``: h11 frames it (and refuses
    what it must)."""
    if method in (b"HEAD", b"CONNECT") or not _NAME.fullmatch(method):
        return None
    if not _TARGET.fullmatch(target):
        return None
    hosts = 0
    length: int | None = None
    for name, value in raw:
        key = name.lower()
        if key == b"host":
            hosts += 1
        elif key == b"content-length":
            if length is not None or not value.isdigit() or len(value) > 20:
                return None
            length = int(value)
        elif key in (b"transfer-encoding", b"expect"):
            return None
    return length if hosts == 1 else None


def _length(headers: dict[str, str]) -> int | None:
    for name, value in headers.items():
        if name.lower() == "content-length":
            return int(value.split(",")[0])  # h11 checked: digits, one value
    return None
