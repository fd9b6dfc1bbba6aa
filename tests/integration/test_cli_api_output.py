"""What ``vidapi api`` prints of a hostile answer is valid JSON (``jq`` reads it: no
``NaN`` or ``Infinity``) and holds no character a terminal acts on (C1 controls such as
CSI, DEL, bidirectional overrides), escaped as JSON escapes so the value survives; an
integer too long for Python is an error naming it, not "not a JSON object". Served by
the raw-socket wire server; the oracle is the json module with NaN refused."""

from __future__ import annotations

import json
import unicodedata

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.integration.test_client_wire import TOKEN
from tests.wire import Reply, WireServer
from vidapi_async.cli._exit import EXIT_API

HOSTILE = "x\u009b[31my\u202ez\x7fw\u2028v\u200e"


def _strict(text: str) -> object:
    def refuse(name: str) -> object:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


async def test_vidapi_api_prints_valid_json_with_no_terminal_controls() -> None:
    body = (
        '{"big": 1e999999, "small": -1e999999, "text": '
        + json.dumps(HOSTILE)
        + ', "name": "caf\u00e9", "n": 1.5}'
    ).encode()
    reply = Reply(200, body, {"Content-Type": "application/json"})
    async with WireServer(lambda _: reply) as srv:
        env = {"VIDAPI_TOKEN": TOKEN, "VIDAPI_BASE_URL": srv.url}
        code, out, err = await vidapi("api", "/me", env=env)
    assert code == 0, err
    data = _strict(out)
    assert isinstance(data, dict)
    assert data["text"] == HOSTILE  # escaped, not lost
    assert data["name"] == "caf\u00e9" and data["n"] == 1.5
    assert data["big"] > 1e308 and data["small"] < -1e308
    assert "caf\u00e9" in out  # readable text stays readable
    bad = [c for c in out if c != "\n" and unicodedata.category(c) in {"Cc", "Cf", "Zl", "Zp"}]
    assert bad == [], bad


async def test_vidapi_api_with_a_nan_answer_prints_valid_json() -> None:
    reply = Reply(200, b'{"a": NaN, "b": [Infinity, -Infinity]}')
    async with WireServer(lambda _: reply) as srv:
        env = {"VIDAPI_TOKEN": TOKEN, "VIDAPI_BASE_URL": srv.url}
        code, out, err = await vidapi("api", "/me", env=env)
    assert code == 0, err
    _strict(out)


LONG = b'{"n": ' + b"7" * 4400 + b"}"


async def test_an_integer_too_long_is_named() -> None:
    reply = Reply(200, LONG, {"Content-Type": "application/json"})
    async with WireServer(lambda _: reply) as srv:
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.UnexpectedResponseError, match="4300 digits"):
                await client.get("/me")
        env = {"VIDAPI_TOKEN": TOKEN, "VIDAPI_BASE_URL": srv.url}
        code, out, err = await vidapi("api", "/me", env=env)
    assert code == EXIT_API, err
    assert "4300 digits" in err and out == ""
