"""The upload pump's HTTP/1.1 framing (issue 18, items 7-9): what a strict parser refuses
is refused, 1xx answers are skipped, and bytes past an answer make the connection
unusable. Driven without a socket, the answer cut in segments anywhere; then over a real
socket through the public API. The hypothesis test checks that every input, well-formed
or not, ends in an answer or a typed error."""

from __future__ import annotations

import json
from pathlib import Path

import h11
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vidapi_async as va
from tests.conftest import make_file
from tests.examples import examples
from tests.integration.test_client_wire import SEAL, TOKEN, descriptor, upload_api
from tests.wire import Reply, Seen, WireServer
from vidapi_async._protocol import AnswerFramer, BrokenAnswer

CAP = 64 * 1024


def frame(raw: bytes, cuts: list[int] | None = None, method: str = "POST") -> AnswerFramer:
    framer = AnswerFramer(method, "/u", [("Host", "h")], cap=CAP)
    framer.request_head()
    framer.body_sent(0)
    points = sorted({c % (len(raw) + 1) for c in cuts or []})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    for piece in [*filter(None, pieces), b""]:  # b"": the connection closed
        if framer.feed(piece) is not None:
            return framer
    raise AssertionError("unreachable: the end of input ends the answer or raises")


def test_1xx_answers_are_skipped() -> None:
    raw = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    )
    framer = frame(raw, [5, 30, 61])
    assert framer.answer is not None
    assert (framer.answer.status, framer.answer.body) == (200, b"ok")


def test_bytes_after_the_answer_make_the_connection_unusable() -> None:
    framer = AnswerFramer("POST", "/u", [("Host", "h")], cap=CAP)
    framer.request_head()
    framer.body_sent(0)
    answer = framer.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n")
    assert answer is not None and answer.body == b"ok"
    assert not framer.reusable
    clean = AnswerFramer("POST", "/u", [("Host", "h")], cap=CAP)
    clean.request_head()
    clean.body_sent(0)
    assert clean.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") is not None
    assert clean.reusable


@pytest.mark.parametrize(
    "raw",
    [
        "HTTP/1.1 2²0 OK\r\nContent-Length: 0\r\n\r\n".encode(),
        "HTTP/1.1 200 OK\r\nContent-Length: ²\r\n\r\n".encode(),
        b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0_2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n",
        b"SMTP ready\r\n\r\n",
        # Both lengths (RFC 9112 6.3: a smuggling attempt): an error, never reused.
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\ncontent-length: 0\r\n\r\n0\r\n\r\n",
    ],
)
def test_what_a_strict_parser_refuses_is_refused(raw: bytes) -> None:
    with pytest.raises(BrokenAnswer):
        frame(raw, [7])


def test_an_answer_past_the_cap_is_refused() -> None:
    body = b"x" * (CAP + 1)
    with pytest.raises(BrokenAnswer, match="larger"):
        frame(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunked += b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    with pytest.raises(BrokenAnswer, match="larger"):
        frame(chunked)


# --- every generated answer ends in an answer or a typed error ---------------------------

token = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12)
header = st.tuples(
    st.sampled_from(["Content-Length", "Transfer-Encoding", "Connection", "X-A", "content-length"])
    | token,
    st.sampled_from(["0", "2", "10", "chunked", "close", "identity", "²", "0x1", " 5 ", "-1"])
    | st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=10),
)


@st.composite
def answers(draw: st.DrawFn) -> tuple[bytes, bytes | None]:
    """An answer as bytes, and its body when it is well-formed by construction."""
    body = draw(st.binary(max_size=300))
    if draw(st.booleans()):  # well-formed
        informational = draw(st.lists(st.sampled_from([100, 102, 103]), max_size=2))
        head = b"".join(b"HTTP/1.1 %d X\r\n\r\n" % code for code in informational)
        # 204 and 304 carry no body whatever they declare: not "well-formed with a body"
        status = draw(st.integers(200, 599).filter(lambda n: n not in (204, 304)))
        if draw(st.booleans()):
            sizes = draw(st.lists(st.integers(1, 50), max_size=5))
            out, at = bytearray(), 0
            for size in sizes:
                piece = body[at : at + size]
                at += size
                if piece:
                    out += b"%x\r\n" % len(piece) + piece + b"\r\n"
            framed = b"Transfer-Encoding: chunked\r\n\r\n" + bytes(out) + b"0\r\n\r\n"
            body = body[: min(at, len(body))]
        else:
            framed = b"Content-Length: %d\r\n\r\n" % len(body) + body
        return head + b"HTTP/1.1 %d OK\r\n" % status + framed, body
    status_line = draw(st.sampled_from([b"HTTP/1.1 200 OK", b"HTTP/1.0 404 N", b"HTTP/1.1 1", b""]))
    headers = draw(st.lists(header, max_size=5))
    lines = b"".join(f"{k}: {v}\r\n".encode() for k, v in headers)
    noise = draw(st.binary(max_size=20))
    return status_line + b"\r\n" + lines + b"\r\n" + body + noise, None


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers(), st.lists(st.integers(0, 10_000), max_size=6))
def test_every_answer_ends_in_an_answer_or_a_typed_error(
    generated: tuple[bytes, bytes | None], cuts: list[int]
) -> None:
    raw, body = generated
    try:
        framer = frame(raw, cuts)
    except BrokenAnswer:
        assert body is None  # a well-formed answer is never refused
        return
    assert framer.answer is not None
    if body is not None:
        assert framer.answer.body == body
        assert framer.answer.status >= 200


# --- over a socket, through the public API ----------------------------------------------


@pytest.mark.usefixtures("upload_path")
async def test_an_upload_answered_100_continue_first_is_stored_not_rejected(
    tmp_path: Path,
) -> None:
    urls: list[str] = []
    inner = upload_api(urls)

    def handler(seen: Seen) -> Reply:
        if seen.path == "/upload":
            good = json.dumps(descriptor("http://x/f#y")).encode()
            return Reply(
                raw=b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: "
                b"application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                % len(good)
                + good
            )
        return inner(seen)  # type: ignore[no-any-return]

    async with WireServer(handler) as srv:
        urls.append(srv.url)
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            uploaded = await client.upload_file(make_file(tmp_path / "m.mp4", 1000))
    assert uploaded.url == "http://x/f#y"
    assert SEAL in next(s.target for s in srv.seen if s.path == "/upload")


def test_a_kept_connection_holding_unread_bytes_is_not_reused() -> None:
    import socket

    from vidapi_async._aio import Connection

    key = ("http", "127.0.0.1", 1)
    kept = Connection()
    ours, theirs = socket.socketpair()
    with theirs:
        kept.put(key, ours, 15.0)
        assert kept.take(key) is ours  # quiet: reused
        kept.put(key, ours, 15.0)
        theirs.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")  # unasked for
        assert kept.take(key) is None  # closed instead, a fresh one will be opened
        assert ours.fileno() == -1
        other, far = socket.socketpair()
        with far:
            kept.put(key, other, 15.0)
            far.close()  # the server closed it meanwhile
            assert kept.take(key) is None
    kept.close()


def test_a_header_http_cannot_carry_is_a_typed_error_that_does_not_echo_it() -> None:
    from vidapi_async._protocol import UnsendableRequest

    with pytest.raises(UnsendableRequest) as info:
        AnswerFramer("POST", "/u", [("Host", "h"), ("X-Key", "sec\r\nret")], cap=CAP)
    assert "sec" not in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("X-Key", "a\nb"),
        ("X-Key", "a\x00b"),
        ("X-Key", " padded"),
        ("X-Key", "padded\t"),
        ("X Key", "v"),
        ("X:Key", "v"),
        ("", "v"),
    ],
)
def test_every_header_is_held_to_http_grammar(name: str, value: str) -> None:
    """The head is checked as h11 would check it (the grammar of RFC 9110), whoever
    does the checking."""
    from vidapi_async._protocol import UnsendableRequest

    with pytest.raises(UnsendableRequest):
        AnswerFramer("POST", "/u", [("Host", "h"), (name, value)], cap=CAP)
    with pytest.raises(h11.LocalProtocolError):  # the oracle agrees
        h11.Request(method="POST", target="/u", headers=[("Host", "h"), (name, value.encode())])


def test_a_header_that_is_not_ascii_is_a_typed_error() -> None:
    from vidapi_async._protocol import UnsendableRequest

    with pytest.raises(UnsendableRequest):
        AnswerFramer("POST", "/u", [("Host", "h"), ("X-Key", "clé")], cap=CAP)


def test_a_well_formed_head_is_sent_as_given() -> None:
    framer = AnswerFramer(
        "POST",
        "/upload?uuid=1&seal=a%2Fb",
        [
            ("Host", "up.example"),
            ("X-Empty", ""),
            ("User-Agent", "a b\tc"),
            ("Content-Length", "0"),
        ],
        cap=CAP,
    )
    assert framer.request_head() == (
        b"POST /upload?uuid=1&seal=a%2Fb HTTP/1.1\r\nHost: up.example\r\nX-Empty: \r\n"
        b"User-Agent: a b\tc\r\nContent-Length: 0\r\n\r\n"
    )
