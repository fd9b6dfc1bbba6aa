"""The chunked protocol as a pure state machine: every kind of answer, driven by hand,
no socket and no event loop."""

from __future__ import annotations

import json

import pytest

import vidapi_async as va
from vidapi_async._protocol import ChunkedUpload

DESCRIPTOR = json.dumps({"url": "https://up.test/f.mp4#x", "size": "100"}).encode()


def upload(size: int = 100, range_size: int = 30, workers: int = 2) -> ChunkedUpload:
    return ChunkedUpload(size, "clip é.mp4", range_size=range_size, workers=workers)


def test_regions_split_the_file_into_whole_ranges_per_worker() -> None:
    state = upload()
    assert state.regions() == [(0, 60), (60, 100)]
    assert list(state.pending(0, 60)) == [(0, 30), (30, 30)]
    assert list(state.pending(60, 100)) == [(60, 30), (90, 10)]


def test_a_range_request_carries_its_headers() -> None:
    request = upload().send(30, 30)
    assert (request.first, request.length) == (30, 30)
    assert request.headers["Content-Range"] == "bytes 30-59/100"
    assert request.headers["Content-Type"] == "application/octet-stream"
    disposition = request.headers["Content-Disposition"]
    assert disposition.isascii() and "filename*=UTF-8''clip%20%C3%A9.mp4" in disposition


def test_the_ask_request_is_empty_with_a_star_range() -> None:
    request = upload().ask()
    assert request.length == 0 and dict(request.headers) == {"Content-Range": "bytes */100"}


@pytest.mark.parametrize("status", [202, 416])
def test_held_ranges_are_merged_and_skipped(status: int) -> None:
    state = upload()
    state.absorb(status, {"range": "0-29,60-89/100"}, b"{}")  # header names are any case
    assert state.held == [(0, 29), (60, 89)] and state.acknowledged == 60
    assert list(state.pending(0, 60)) == [(30, 30)]
    assert list(state.pending(60, 100)) == [(90, 10)]
    assert not state.done
    state.absorb(202, {"Range": "30-59/100"}, b"")
    assert state.held == [(0, 89)]  # touching ranges join


def test_two_hundred_completes_with_the_descriptor() -> None:
    state = upload()
    state.absorb(200, {}, DESCRIPTOR)
    assert state.done and state.acknowledged == 100
    assert state.descriptor["url"] == "https://up.test/f.mp4#x"
    assert list(state.pending(0, 100)) == []  # nothing more to send
    assert state.ask_first(1)  # another worker's range: check before sending


def test_a_retry_asks_first_and_skips_what_arrived() -> None:
    state = upload()
    assert not state.ask_first(1) and state.ask_first(2)
    state.absorb(202, {"Range": "0-29/100"}, b"")
    assert not state.still_needed(0, 30) and state.still_needed(30, 30)


def test_all_ranges_acknowledged_but_never_completed_is_an_error() -> None:
    state = upload()
    state.absorb(202, {"Range": "0-99/100"}, b"")
    with pytest.raises(va.UnexpectedResponseError, match="holds 100 of 100 bytes"):
        _ = state.descriptor


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (202, b"{}", va.UnexpectedResponseError),  # 202 without Range
        (403, b'{"error": "invalid seal"}', va.UploadRejectedError),
        (400, b'{"error": {"message": "bad range", "code": 400}}', va.UploadRejectedError),
        (500, b"oops", va.UploadRejectedError),
        (200, b"not json", va.UnexpectedResponseError),
        (200, b'{"error": "missing file"}', va.UploadRejectedError),
    ],
)
def test_other_answers_raise_the_servers_error(
    status: int, body: bytes, error: type[Exception]
) -> None:
    state = upload()
    with pytest.raises(error):
        state.absorb(status, {}, body)
    assert not state.done and state.held == []


def test_a_malformed_range_header_adds_nothing() -> None:
    state = upload()
    state.absorb(202, {"Range": "garbage/100"}, b"")
    assert state.held == []


def test_sizes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="above 0"):
        ChunkedUpload(0, "f", range_size=1, workers=1)
