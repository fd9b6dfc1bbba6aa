"""The decoding of a server's JSON answer (``_answers.json_object``) reads what
``json.loads(body)`` reads, as an object or nothing: the oracle is the standard library's
own function, called here on the same bytes."""

from __future__ import annotations

import json

import pytest

from vidapi_async._protocol._answers import json_object


def loads_object(body: bytes) -> object:
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if type(value) is dict else None


@pytest.mark.parametrize(
    "body",
    [
        b'{"id": "x1", "n": 3, "f": 1.5, "b": false, "z": null, "l": [1, {"a": []}]}',
        b"{}",
        b'{"a": 1} \t\r\n',  # JSON's whitespace after the object: read
        b'{"a": 1}\x0b',  # other whitespace is not JSON's: refused
        '{"a": 1}\u3000'.encode(),
        b'{"a": 1}\x00',
        b'{"a": 1}}',
        b'{"a": 1} {"b": 2}',
        b'{"a": 1}x',
        b'  {"a": 1}',  # leading whitespace: json.loads' own path
        b'\n{"a": [1, 2]}\n',
        b'{"a": NaN, "b": -Infinity}',
        b'{"a": 1, "a": 2}',
        b'{"a": "\\ud800"}',
        b'{"a": 1',
        b'{"a": 1,}',
        b'{"a" 1}',
        b"{",
        b'{"a": 01}',
        b"[1]",
        b'"text"',
        b"",
    ],
)
def test_an_answer_is_read_as_json_loads_reads_it(body: bytes) -> None:
    assert repr(json_object(body)) == repr(loads_object(body))
