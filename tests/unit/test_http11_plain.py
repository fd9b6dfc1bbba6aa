"""``AnswerFramer`` reads the usual exchange without h11 (issue 43): what it reads must be
what h11 reads. The oracle is the same framer with h11 doing everything (``_plain_request``
made to refuse every request): for the same request, the same answer cut into the same
segments, both give the same request head, the same answer (status, headers, body), the
same ``reusable``, or the same error. Answers are generated around the subset's edges:
final and 1xx statuses, 204/304, repeated or odd lengths, ``Connection: close``, chunked,
HTTP/1.0, whitespace, obs-text, reason phrases, bytes past the answer, a short body, heads
and bodies at the caps."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.examples import examples
from vidapi_async._protocol import _http11
from vidapi_async._protocol._http11 import AnswerFramer

CAP = 300
HEAD_CAP = 400

name = st.sampled_from(
    ["Content-Length", "content-length", "Connection", "Transfer-Encoding", "X-A", "Date"]
) | st.text(alphabet="abcxyz-", min_size=1, max_size=6)
value = st.sampled_from(
    [
        "0",
        "5",
        "007",
        "10",
        "301",
        " 5",
        "5 ",
        "5, 5",
        "close",
        "Close, keep-alive",
        "keep-alive",
        "chunked",
        "identity",
        "a\tb",
        "caf\xe9",
        "",
    ]
) | st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=8)


@st.composite
def usual_answers(draw: st.DrawFn) -> bytes:
    """Answers inside the subset, or one step out of it."""
    status = draw(st.sampled_from([200, 201, 400, 500]))
    body = draw(st.binary(max_size=20))
    fields = [("Content-Length", str(len(body)))]
    fields += draw(
        st.lists(
            st.sampled_from(
                [
                    ("Connection", "close"),
                    ("connection", "Keep-Alive, Close"),
                    ("Connection", "keep-alive"),
                    ("Connection", "closed"),
                    ("Keep-Alive", "timeout=5"),
                    ("X-A", "1"),
                    ("x-a", "2"),
                    ("content-length", str(len(body))),  # the same twice: h11 takes it
                    ("Content-Length", str(len(body) + 1)),  # two lengths: refused
                    ("Transfer-Encoding", "chunked"),
                ]
            ),
            max_size=3,
        )
    )
    fields = draw(st.permutations(fields))
    lines = b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in fields)
    past = draw(st.sampled_from([b"", b"", b"", b"x"]))
    return b"HTTP/1.1 %d OK\r\n" % status + lines + b"\r\n" + body + past


@st.composite
def answers(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        return draw(usual_answers())
    version = draw(st.sampled_from([b"HTTP/1.1", b"HTTP/1.1", b"HTTP/1.1", b"HTTP/1.0"]))
    status = draw(st.sampled_from([200, 201, 204, 304, 400, 404, 500, 599, 100, 103, 600]))
    reason = draw(st.sampled_from([b" OK", b" ", b"", b" Not\tFound", b" Caf\xe9", b" A B"]))
    head = version + b" %d" % status + reason + b"\r\n"
    body = draw(st.binary(max_size=40))
    fields = draw(st.lists(st.tuples(name, value), max_size=4))
    if draw(st.booleans()):  # most answers say their length, right or wrong
        length = draw(st.sampled_from([len(body), len(body), max(0, len(body) - 3), len(body) + 2]))
        fields.insert(draw(st.integers(0, len(fields))), ("Content-Length", str(length)))
    lines = b""
    ends = [b"\r\n"] * 6 + [b"\n"]  # h11 also takes a bare LF as a line's end
    for key, val in fields:
        gap = draw(st.sampled_from([b" ", b"", b"\t", b"  "]))
        lines += key.encode() + b":" + gap + val.encode("latin-1") + draw(st.sampled_from(ends))
    if draw(st.booleans()):
        lines += b"X-Pad: " + b"p" * draw(st.integers(0, HEAD_CAP)) + b"\r\n"
    informational = b"HTTP/1.1 100 Continue\r\n\r\n" if draw(st.booleans()) else b""
    past = draw(st.sampled_from([b"", b"", b"HTTP/1.1 200 OK\r\n", b"x"]))
    lead = draw(st.sampled_from([b""] * 6 + [b"\r\n", b"\n", b" ", b"\x00", b"X"]))
    blank = draw(st.sampled_from(ends))
    return lead + informational + head + lines + blank + body + past


def run(
    raw: bytes, cuts: list[int], method: str, headers: list[tuple[str, str]], sent: int
) -> tuple[Any, ...]:
    """What one framer made of it: its request head, then the answer and ``reusable`` or
    the error (class and message) where it stopped."""
    outcome: list[Any] = []
    at = -1  # the segment it stopped at: the same answer later is a wait (a hang)
    try:
        framer = AnswerFramer(method, "/u?x=%2F", headers, cap=CAP, head_cap=HEAD_CAP)
        outcome.append(framer.request_head())
        framer.body_sent(sent)
        points = sorted({c % (len(raw) + 1) for c in cuts})
        pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
        for at, piece in enumerate([*filter(None, pieces), b""]):
            answer = framer.feed(piece)
            if answer is not None:
                outcome += [at, answer.status, answer.headers, answer.body, framer.reusable]
                return tuple(outcome)
        outcome.append("no answer at the end of the input")
    except Exception as exc:  # what is compared: which one, its words, and where
        outcome.append((at, type(exc).__name__, str(exc)))
    return tuple(outcome)


def both(monkeypatch: pytest.MonkeyPatch, *args: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    plain = run(*args)
    with monkeypatch.context() as patch:
        patch.setattr(_http11, "_plain_request", lambda *a: None)  # h11 does everything
        oracle = run(*args)
    return plain, oracle


request_headers = st.lists(
    st.sampled_from(
        [
            ("Connection", "close"),
            ("Connection", "keep-alive"),
            ("X-B", "1"),
            ("Host", "h2"),
            ("Content-Length", "5"),
            ("Expect", "100-continue"),
            ("Transfer-Encoding", "chunked"),
        ]
    ),
    max_size=3,
)


@settings(
    max_examples=examples(1000),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    answers(),
    st.lists(st.integers(0, 10_000), max_size=5),
    st.sampled_from(["POST", "PUT", "HEAD", "GET"]),
    request_headers,
    st.sampled_from([0, 0, 5, 7]),
)
def test_the_usual_exchange_read_without_h11_is_read_as_h11_reads_it(
    monkeypatch: pytest.MonkeyPatch,
    raw: bytes,
    cuts: list[int],
    method: str,
    extra: list[tuple[str, str]],
    sent: int,
) -> None:
    headers = [("Host", "h"), ("Content-Length", str(sent)), *extra]
    plain, oracle = both(monkeypatch, raw, cuts, method, headers, sent)
    assert plain == oracle


@pytest.mark.parametrize(
    ("raw", "reads_itself"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", True),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n", False),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", False),
    ],
)
def test_the_usual_answer_is_read_without_h11_and_the_rest_by_it(
    monkeypatch: pytest.MonkeyPatch, raw: bytes, reads_itself: bool
) -> None:
    """The subset is taken (h11 never made) and left (h11 made) where it should be: the
    comparison above would pass if the framer always handed everything to h11."""
    made: list[object] = []
    real: Callable[..., Any] = _http11.h11.Connection

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_http11.h11, "Connection", counting)
    framer = AnswerFramer("POST", "/u", [("Host", "h"), ("Content-Length", "0")], cap=CAP)
    framer.request_head()
    framer.body_sent(0)
    assert framer.feed(raw) is not None
    assert framer.answer is not None and framer.answer.body == b"hi"
    assert (made == []) is reads_itself


@pytest.mark.parametrize(
    ("scheme", "port", "host"),
    [("http", 80, b"h"), ("http", 443, b"h:443"), ("https", 443, b"h"), ("https", 80, b"h:80")],
)
def test_the_host_header_leaves_out_only_the_scheme_s_own_port(
    scheme: str, port: int, host: bytes
) -> None:
    from vidapi_async._aio._pump import request_framer

    framer = request_framer("POST", "h", port, "/u", {}, 0, keep_alive=True, scheme=scheme)
    assert b"\r\nHost: " + host + b"\r\n" in framer.request_head()


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 200 OK\nContent-Length: 2\n\nhi",  # bare LFs: h11 reads it
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\nhi",  # the head ends at LF LF
        b"HTTP/1.1 200 OK\nContent-Length: 2\r\n\r\nhi",
        b"\x00HTTP/1.1 2",  # refused by h11 at once, head unfinished
        b" HTTP/1.1 200 OK\r\n",
        b"\r\n",  # an empty first line: no response line
        b"\n",
    ],
)
def test_what_h11_decides_on_a_segment_is_decided_on_that_segment(
    monkeypatch: pytest.MonkeyPatch, raw: bytes
) -> None:
    """The fast path must not wait for bytes h11 does not need: a server that keeps the
    connection open after an answer h11 reads (or refuses) would leave the upload
    waiting for its timeouts."""

    def first(framer: AnswerFramer) -> Any:
        try:
            return framer.feed(raw)
        except Exception as exc:
            return type(exc).__name__, str(exc)

    def framer() -> AnswerFramer:
        made = AnswerFramer("POST", "/u", [("Host", "h"), ("Content-Length", "0")], cap=CAP)
        made.request_head()
        made.body_sent(0)
        return made

    plain = first(framer())
    with monkeypatch.context() as patch:
        patch.setattr(_http11, "_plain_request", lambda *a: None)
        oracle = first(framer())
    assert plain == oracle


def test_a_head_in_one_byte_segments_is_searched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server dripping its head a byte at a time (up to ``head_cap``) costs the fast
    path no more than a pass over it: a search from the start on each segment was
    quadratic (64 KiB in bytes of one: about 1 s of CPU, h11 0.13 s)."""
    searched = 0
    real = _http11._BLANK_LINE

    class Counting:
        def search(self, data: bytearray, pos: int = 0) -> Any:
            nonlocal searched
            searched += len(data) - pos
            return real.search(data, pos)

    monkeypatch.setattr(_http11, "_BLANK_LINE", Counting())
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: " + b"a" * 2000 + b"\r\n\r\nhi"
    framer = AnswerFramer("POST", "/u", [("Host", "h"), ("Content-Length", "0")], cap=CAP)
    framer.request_head()
    framer.body_sent(0)
    answers = [framer.feed(raw[i : i + 1]) for i in range(len(raw))]
    assert answers[-1] is not None and answers[-1].body == b"hi"
    assert searched <= 3 * len(raw)


def test_a_head_of_blank_headers_with_one_odd_line_is_read_in_linear_time() -> None:
    """Headers with an empty value and two spaces (``X:  ``) could each be read three
    ways by the subset's pattern (the spaces before or after the empty value): one line
    out of the subset (here obs-text, which h11 takes) after n of them made the fast
    path backtrack through 3**n readings, holding the GIL: 16 of them cost seconds, 40
    (240 bytes from a server) would freeze the process for good."""
    head = b"HTTP/1.1 200 OK\r\n" + b"X:  \r\n" * 16 + b"Y: \xe9\r\nContent-Length: 0\r\n\r\n"
    framer = AnswerFramer("POST", "/u", [("Host", "h"), ("Content-Length", "0")], cap=CAP)
    framer.request_head()
    framer.body_sent(0)
    started = time.process_time()  # this process's CPU, not the machine's load
    answer = framer.feed(head)
    assert time.process_time() - started < 1.0  # linear: about 0.1 ms; before: 15 s
    assert answer is not None and answer.headers["Y"] == "\xe9"
