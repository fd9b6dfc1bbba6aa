"""Secrets a hostile server echoes in an error answer never reach the error's message
(``str(exc)``, what batches, logs and spans carry), however the echo is written: JSON
``\\u``-escaped, HTML-escaped, split into a list, at the edge where the message is cut,
or pushed there by masks that shrink the text. Served by the raw-socket wire server;
the oracle decodes the message every way a reader could (its own code, not the
client's)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

import vidapi_async as va
from tests.integration.test_seal_mask import rejected_upload
from tests.wire import Reply, Seen, WireServer
from vidapi_async import _protocol as wire
from vidapi_async._protocol import _v2 as v2

TOKEN = "TKNqzW8Y3vRmB5xJ"
SEAL = "SLqXv9Kd/23+456789=AbCdEfGhJkMnPqRsTuVwXyZ234"
"""Reserved characters in it: written %-escaped in the upload address. Long, so that
masking its fully escaped echoes shrinks a text a lot."""
PASSWORD = "PWqj7Zr2Nc4Lm"


def _views(text: str) -> list[str]:
    """``text`` as a reader could decode it: as is, %-decoded (twice), HTML-unescaped,
    JSON-unescaped, and with everything but letters and digits squeezed out."""
    unjson = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    views = [text, unquote(text), unquote(unquote(text)), html.unescape(text), unjson]
    return [*views, *(re.sub(r"[^A-Za-z0-9]", "", v) for v in views)]


def _shows(text: str, secret: str) -> bool:
    """Whether any four characters in a row of ``secret`` can be read in ``text``."""
    plain = re.sub(r"[^A-Za-z0-9]", "", secret)
    pieces = {s[i : i + 4] for s in (secret, plain) for i in range(len(s) - 3)}
    return any(p in v for v in _views(text) for p in pieces)


def _json_escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def _all_escaped(text: str) -> str:
    return "".join(f"%{b:02X}" for b in text.encode())


API_BODIES = {
    "json-escaped, error not text": b'{"error":5,"echo":"' + _json_escaped(TOKEN).encode() + b'"}',
    "json-escaped, no error": b'{"detail":"' + _json_escaped(TOKEN).encode() + b'"}',
    "cut inside the token": b"x" * 190 + TOKEN.encode(),
    "cut inside the token, json": b'{"e":"' + b"x" * 185 + TOKEN.encode() + b'"}',
    "error a list": json.dumps({"error": list(TOKEN)}).encode(),
    "message a list": json.dumps({"error": {"message": list(TOKEN)}}).encode(),
    "html-escaped": f"<p>token={html.escape(TOKEN)}</p>".encode(),
    "html-escaped hex": ("<p>" + "".join(f"&#x{ord(c):x};" for c in TOKEN) + "</p>").encode(),
}


@pytest.mark.parametrize("name", API_BODIES)
@pytest.mark.parametrize("status", [400, 500])
async def test_an_api_error_never_shows_the_token(name: str, status: int) -> None:
    reply = Reply(status, API_BODIES[name], {"Content-Type": "application/json"})
    async with WireServer(lambda _: reply) as srv:
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.APIError) as caught:
                await client.get("/me")
    exc = caught.value
    assert f"HTTP {status}" in str(exc)
    text = f"{exc} {exc!r} {exc.args} {json.dumps(exc.body)}"
    assert not _shows(text, TOKEN), text


@pytest.mark.parametrize("name", API_BODIES)
def test_a_v2_error_never_shows_the_token(name: str) -> None:
    request = wire.Request("GET", "http://h/v2/me")
    exc = v2.api_error(request, 400, {}, API_BODIES[name], secrets=[TOKEN])
    text = f"{exc} {exc!r} {exc.args} {json.dumps(exc.body)}"
    assert not _shows(text, TOKEN), text


@pytest.mark.parametrize("where", [150, 195, 198])
async def test_a_password_echoed_by_the_token_endpoint_is_masked_at_the_cut(where: int) -> None:
    body = (b"y" * where + PASSWORD.encode() + b" rejected").decode()

    def handler(seen: Seen) -> Reply:
        return Reply(400, body.encode())

    auth = va.OAuth.password("cid", "csecret", username="u", password=PASSWORD)
    async with WireServer(handler) as srv:
        async with va.Client(auth=auth, base_url=srv.url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.OAuthError) as caught:
                await client.get("/me")
    text = f"{caught.value} {caught.value!r}"
    assert "yyy" in text
    assert not _shows(text, PASSWORD), text


def _upload_bodies() -> dict[str, tuple[bytes, dict[str, str]]]:
    escaped = _all_escaped(SEAL)
    shrink = (escaped + " ").encode()
    count = 4083 // len(shrink)
    pad = b"p" * (4084 - count * len(shrink))  # the seal starts at byte 4084
    assert count * 4 + len(pad) < 180  # once masked, the seal's start is in the 200 shown
    as_json = {"Content-Type": "application/json"}
    return {
        "json-escaped detail": (
            b'{"detail":"bad seal ' + _json_escaped(SEAL).encode() + b'"}',
            as_json,
        ),
        "shrink then cut": (shrink * count + pad + SEAL.encode() + b" end", {}),
        "html-escaped": (
            f"<html><p>bad seal={html.escape(SEAL).replace('/', '&#x2F;').replace('=', '&#x3D;')}</p>".encode(),
            {"Content-Type": "text/html"},
        ),
        "html-escaped, no name": (
            f"<p>bad: {''.join(f'&#{ord(c)};' for c in SEAL)}</p>".encode(),
            {"Content-Type": "text/html"},
        ),
        "error a list": (json.dumps({"error": list(SEAL)}).encode(), as_json),
        "message a list": (json.dumps({"error": {"message": list(SEAL)}}).encode(), as_json),
        "cut inside the seal": (b"z" * 190 + SEAL.encode(), {}),
        "any seal=": (b"bad address /upload?seal=" + b"OTHERq1w2e3r4" + b"&x=1", {}),
    }


UPLOAD_BODIES = _upload_bodies()


@pytest.mark.parametrize("name", UPLOAD_BODIES)
@pytest.mark.parametrize("chunked", [False, True], ids=["single-shot", "chunked"])
async def test_an_upload_error_never_shows_the_seal(
    tmp_path: Path, name: str, chunked: bool
) -> None:
    body, headers = UPLOAD_BODIES[name]

    def reject(seen: Seen) -> Reply:
        return Reply(400, body, headers)

    text, seen = await rejected_upload(tmp_path, reject, quote(SEAL, safe=""), chunked)
    assert seen
    assert not _shows(text, SEAL), text
    assert not _shows(text, "OTHERq1w2e3r4"), text


def test_a_secret_split_across_a_list_is_masked_in_the_data() -> None:
    data: Any = {"a": [list(SEAL)], "b": "kept", "c": ["x", "y"]}
    masked = wire.redact_data(data, [SEAL])
    assert not _shows(json.dumps(masked), SEAL)
    assert masked["b"] == "kept" and masked["c"] == ["x", "y"]
