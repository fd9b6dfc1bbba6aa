"""A job the queue runs again, or fails for good, after one of our own expected
failures (``Transient``, ``GivenBack``: recorded in the journal and said by our log)
is one line of procrastinate's, never a traceback (the fresh user's look at issue 41:
a worker without an account's variable printed one)."""

from __future__ import annotations

import logging

import pytest

from vidapi_async.batch._queue import GivenBack, Transient


@pytest.mark.parametrize(
    "exc",
    [
        Transient("AccountNotSetError: VIDAPI_NEWS_TOKEN is not set", attempts=5),
        GivenBack("the account waits for its quota"),
    ],
)
def test_our_expected_failures_come_without_a_traceback(
    caplog: pytest.LogCaptureFixture, exc: Exception
) -> None:
    logger = logging.getLogger("procrastinate.worker")
    with caplog.at_level(logging.INFO, logger="procrastinate.worker"):
        try:
            raise exc
        except Exception as raised:
            logger.error("Job vidapi.pipeline[9] ended with status: Error", exc_info=raised)
    [record] = caplog.records
    assert record.getMessage().startswith("Job vidapi.pipeline[9] ended")
    assert record.exc_info is None and "Traceback" not in caplog.text


def test_any_other_failure_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("procrastinate.worker")
    with caplog.at_level(logging.INFO, logger="procrastinate.worker"):
        try:
            raise RuntimeError("a fault of ours")
        except RuntimeError as raised:
            logger.error("Job vidapi.pipeline[9] ended with status: Error", exc_info=raised)
    assert "Traceback" in caplog.text and "a fault of ours" in caplog.text
