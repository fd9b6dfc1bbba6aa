"""One HTTP/1.1 exchange of the upload pump, framed by h11 (sans-io: bytes in, events
out). The request's head is h11's; its body is sent by the caller (``sendfile``, ``ssl``)
and only counted here (``send_with_data_passthrough``), so h11 checks the length
declared. The answer is h11's strict reading: 1xx answers skipped, status and lengths
ASCII digits, chunk sizes hex digits, ``Transfer-Encoding`` exactly ``chunked``, two
different Content-Lengths refused, a Content-Length with a Transfer-Encoding refused
(RFC 9112 6.3), a body capped in size.
"""

from __future__ import annotations

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
    delimited, both sides keep it alive, and nothing arrived past the answer)."""

    def __init__(
        self,
        method: str,
        target: str,
        headers: Sequence[tuple[str, str]],
        *,
        cap: int,
        head_cap: int = 64 * 1024,
    ) -> None:
        self._conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=head_cap)
        try:
            self._request = h11.Request(method=method, target=target, headers=list(headers))
        except h11.LocalProtocolError:  # its message may quote a header: not kept
            raise UnsendableRequest("a header or the target holds what HTTP cannot carry") from None
        self._cap = cap
        self._status: int | None = None
        self._headers: dict[str, str] = {}
        self._body = bytearray()
        self.answer: Answer | None = None

    def request_head(self) -> bytes:
        """The request line and headers."""
        head = self._conn.send(self._request)
        assert head is not None
        return head

    def body_sent(self, n: int) -> None:
        if n:
            self._conn.send_with_data_passthrough(h11.Data(data=_Sized(n)))  # type: ignore[arg-type]
        self._conn.send(h11.EndOfMessage())

    def feed(self, data: bytes) -> Answer | None:
        """More of the answer (``b""`` at the end of the connection): the ``Answer``
        once whole, else ``None``; ``BrokenAnswer`` if it cannot be one."""
        try:
            self._conn.receive_data(data)
            return self._events()
        except h11.RemoteProtocolError as exc:
            raise BrokenAnswer(f"not a well-formed HTTP/1.1 answer ({exc})") from None

    def _events(self) -> Answer | None:
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
        pending, closed = self._conn.trailing_data
        return not pending and not closed

    @property
    def reusable(self) -> bool:
        pending, closed = self._conn.trailing_data
        return (
            self.answer is not None
            and self._conn.our_state is h11.DONE
            and self._conn.their_state is h11.DONE
            and not pending
            and not closed
        )


def _length(headers: dict[str, str]) -> int | None:
    for name, value in headers.items():
        if name.lower() == "content-length":
            return int(value.split(",")[0])  # h11 checked: digits, one value
    return None
