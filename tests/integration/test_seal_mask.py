"""An upload host's error echoing its address with the seal over-escaped (any character
percent-encoded, in either case of hex) still has the seal masked: compared on the
decoded form. The host is the raw-socket wire server."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, unquote_plus

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_client_wire import TOKEN
from tests.wire import Reply, Seen, WireServer
from vidapi_async import _protocol as wire

SEAL = "SEAL-SECRET.q7~Z_9"
"""Unreserved characters only: the platform writes it as is, a host may escape any."""
ESCAPED_SEAL = "sEaL%2Fq7%2bX"
"""Written with escapes in the address."""


def _over_escape(text: str, which: str, lower: bool) -> str:
    """``text`` with each character in ``which`` percent-encoded."""
    out = []
    for char in text:
        if char in which:
            code = "".join(f"%{b:02X}" for b in char.encode())
            out.append(code.lower() if lower else code)
        else:
            out.append(char)
    return "".join(out)


def _forms(seal: str) -> list[str]:
    decoded = unquote(seal)
    return [
        _over_escape(decoded, "-", lower=False),  # SEAL%2DSECRET
        _over_escape(decoded, "-", lower=True),
        _over_escape(decoded, "SE.~_", lower=False),
        _over_escape(decoded, "AlRq9", lower=True),
        _over_escape(decoded, decoded, lower=False),  # every character
        _over_escape(seal, "%", lower=False),  # escaped once more: %252F
    ]


def _seal_shows(text: str, seal: str) -> bool:
    """Whether the seal shows in ``text`` once decoded (twice, to see a re-escape), its
    first six characters enough to tell."""
    decoded = unquote(seal)
    views = {text, unquote(text), unquote(unquote(text)), unquote_plus(text)}
    return any(decoded[:6] in v or seal[:6] in v for v in views)


async def rejected_upload(
    tmp_path: Path, reject: Callable[[Seen], Reply], seal: str, chunked: bool
) -> tuple[str, list[Seen]]:
    """Upload to a host that answers ``reject``, with ``seal`` in the upload address:
    the ``UploadRejectedError``'s text (str, repr, args) and the requests the host saw."""
    path = make_file(tmp_path / "s.mp4", 3000)
    async with WireServer(reject) as host:
        session = va.UploadSession(
            upload_url=f"{host.url}/upload?uuid=u1&seal={seal}",
            progress_url=f"{host.url}/progress?uuid=u1",
        )
        async with va.Client(TOKEN, base_url=host.url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.UploadRejectedError) as caught:
                await client.upload_file(path, upload_session=session, chunked=chunked)
    return f"{caught.value} {caught.value!r} {caught.value.args}", host.seen


@pytest.mark.parametrize("seal", [SEAL, ESCAPED_SEAL])
@pytest.mark.parametrize("form", range(6))
@pytest.mark.parametrize("chunked", [False, True], ids=["single-shot", "chunked"])
@pytest.mark.parametrize("shape", ["json", "text"])
async def test_an_over_escaped_seal_in_an_upload_error_is_masked(
    tmp_path: Path, seal: str, form: int, chunked: bool, shape: str
) -> None:
    echoed = _forms(seal)[form]
    assert _seal_shows(echoed, seal)  # the oracle sees it unmasked

    def reject(seen: Seen) -> Reply:
        target = re.sub(r"seal=[^&]*", f"seal={echoed}", seen.target)
        if shape == "json":
            return Reply.json({"error": {"message": f"bad seal in {target}", "code": 403}}, 403)
        return Reply(403, f"bad seal in {target}".encode(), segment=5)

    text, seen = await rejected_upload(tmp_path, reject, seal, chunked)
    assert seen and all(f"seal={seal}" in s.target for s in seen)
    assert "bad seal in" in text
    assert not _seal_shows(text, seal), text


@pytest.mark.parametrize("form", range(6))
def test_redact_masks_every_escaping_of_a_secret(form: int) -> None:
    for seal in (SEAL, ESCAPED_SEAL):
        echoed = _forms(seal)[form]
        masked = wire.redact(f"x {echoed} y", wire.query_values(f"http://h/u?seal={seal}"))
        assert masked == "x *** y", (seal, echoed, masked)


def test_redact_leaves_other_text_alone() -> None:
    text = "the seal SEAL-SECRE and SEAL%2DSECRE (shorter) and %ZZ"
    assert wire.redact(text, [SEAL]) == text
