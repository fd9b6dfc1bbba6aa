"""Fuzz the upload pump's HTTP/1.1 answer framing (``AnswerFramer``) with atheris.

    pip install atheris && python scripts/fuzz_http11.py -max_total_time=120

Every input, cut into segments where its first bytes say, must end in an ``Answer`` or
a ``BrokenAnswer``: any other exception is a finding. Not part of the test suite (the
hypothesis test in tests/integration/test_http11_answers.py is); results go in the change's notes.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import h11  # noqa: F401 - instrumented: the parser under test

    from vidapi_async._protocol import AnswerFramer, BrokenAnswer


def one(data: bytes) -> None:
    if len(data) < 2:
        return
    cut_a, cut_b, raw = data[0], data[1], data[2:]
    framer = AnswerFramer("POST", "/u", [("Host", "h")], cap=4096)
    framer.request_head()
    framer.body_sent(0)
    pieces = [raw[:cut_a], raw[cut_a : cut_a + cut_b], raw[cut_a + cut_b :], b""]
    try:
        for piece in pieces:
            if (piece or piece is pieces[-1]) and framer.feed(piece) is not None:
                return
    except BrokenAnswer:
        return


if __name__ == "__main__":
    atheris.Setup(sys.argv, one)
    atheris.Fuzz()
