"""CPU per upload exchange of the pump's HTTP/1.1 framing: h11 (``AnswerFramer``) beside
a hand-written head writer and answer reader (the pump's before issue 18), same run.

    python benchmarks/pump_framing.py [--exchanges 20000]

Each exchange builds a request head, counts the body, and reads a typical upload answer
(a JSON descriptor, Content-Length framed, delivered in two segments). The body bytes
themselves never pass through either (sendfile/ssl send them), so the cost is per
request: it is printed beside the time a 4 MiB range takes at 1 GB/s.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

from vidapi_async._protocol import AnswerFramer

BODY = json.dumps(
    {"url": "http://up/files/" + "a" * 32 + ".mp4#" + "b" * 200, "size": "4194304"}
).encode()
ANSWER = (
    b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nConnection: keep-alive\r\n\r\n" % len(BODY) + BODY
)
SEGMENTS = [ANSWER[:60], ANSWER[60:]]
HEADERS = [
    ("Host", "upload-01.example.com"),
    ("Accept", "application/json"),
    ("User-Agent", "vidapi-async/1 aiohttp/3 python/3.11"),
    ("Content-Type", "multipart/form-data; boundary=xyz"),
    ("Content-Length", "4194304"),
    ("Connection", "keep-alive"),
]


def with_h11() -> int:
    framer = AnswerFramer("POST", "/upload?uuid=u&seal=s", HEADERS, cap=1 << 24)
    head = framer.request_head()
    framer.body_sent(4194304)
    for piece in SEGMENTS:
        answer = framer.feed(piece)
    assert answer is not None
    assert framer.reusable
    return len(head) + answer.status


def by_hand() -> int:
    """The reference: what the pump did before (split lines, int(), find CRLFCRLF)."""
    lines = ["POST /upload?uuid=u&seal=s HTTP/1.1", *(f"{k}: {v}" for k, v in HEADERS), "", ""]
    head = "\r\n".join(lines).encode("latin-1")
    buf = bytearray()
    for piece in SEGMENTS:
        buf += piece
    idx = buf.find(b"\r\n\r\n")
    status_line, *rest = bytes(buf[:idx]).decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers = {}
    for line in rest:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    body = bytes(buf[idx + 4 : idx + 4 + int(headers["content-length"])])
    assert len(body) == len(BODY)
    return len(head) + status


def per_call(fn: object, n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        fn()  # type: ignore[operator]
    return (time.process_time() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--exchanges", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    h11s, hands = [], []
    for r in range(1, args.rounds + 1):
        h = per_call(with_h11, args.exchanges)
        m = per_call(by_hand, args.exchanges)
        h11s.append(h)
        hands.append(m)
        print(f"round {r}: h11 {h * 1e6:6.1f} us  by hand {m * 1e6:6.1f} us  ratio {h / m:4.1f}")
    h, m = sorted(h11s)[len(h11s) // 2], sorted(hands)[len(hands) // 2]
    range_time = 4 * 1024 * 1024 / 1e9
    print(f"machine: {platform.machine()}, Python {sys.version.split()[0]}")
    print(
        f"median CPU per exchange: h11 {h * 1e6:.1f} us, by hand {m * 1e6:.1f} us "
        f"(ratio {h / m:.1f}); extra per 4 MiB range at 1 GB/s: {(h - m) / range_time:.3%}"
    )


if __name__ == "__main__":
    main()
