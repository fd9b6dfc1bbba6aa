"""What the metrics registry prints for values and label sets it could not print before
(a lone surrogate in a label, NaN and infinities) and for label sets the server
controls (one series per upload host, without end). The text is read with
prometheus-client's parser (no code shared with the registry)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

import vidapi_async as va
from vidapi_async import _metrics
from vidapi_async._metrics import REGISTRY


@pytest.fixture
def counting() -> Iterator[None]:
    REGISTRY.start()
    try:
        yield
    finally:
        REGISTRY.stop()


def _families() -> dict[str, Any]:
    text = REGISTRY.render().encode().decode()  # encodable as UTF-8, as served
    return {f.name: f for f in text_string_to_metric_families(text)}


def _samples(name: str, suffix: str = "") -> list[Any]:
    return [s for s in _families()[name].samples if s.name == name + suffix]


@pytest.mark.usefixtures("counting")
def test_a_label_value_that_is_not_unicode_text_does_not_break_the_scrape() -> None:
    """Before: a lone surrogate in one label value (a base_url of the client's own, a
    server's answer) made every later scrape raise on encoding."""
    REGISTRY.add("vidapi.retries", 1, {"reason": "bad\udcffhost"})
    REGISTRY.observe("http.client.request.duration", 0.1, {"server.address": "\udcff.x"})
    reasons = [s.labels.get("reason") for s in _samples("vidapi_retries", "_total")]
    assert "bad\\udcffhost" in reasons
    counts = _samples("http_client_request_duration_seconds", "_count")
    assert [s.labels["server_address"] for s in counts] == ["\\udcff.x"]


@pytest.mark.usefixtures("counting")
def test_nan_and_infinities_are_written_as_prometheus_spells_them() -> None:
    REGISTRY.add("vidapi.upload.bytes", math.inf, {})
    REGISTRY.add("vidapi.quota.refusals", -math.inf, {})
    REGISTRY.observe("vidapi.job.duration", math.nan, {})
    text = REGISTRY.render()
    assert "vidapi_upload_bytes_total +Inf\n" in text
    assert "vidapi_quota_refusals_total -Inf\n" in text
    assert "vidapi_job_duration_seconds_sum NaN\n" in text
    [uploaded] = _samples("vidapi_upload_bytes", "_total")
    assert uploaded.value == math.inf
    [total] = _samples("vidapi_job_duration_seconds", "_sum")
    assert math.isnan(total.value)


@pytest.mark.usefixtures("counting")
def test_series_past_the_cap_are_folded_into_other() -> None:
    """Before: every distinct upload host added series, never evicted (5,000 hosts: a
    29 MB scrape). Now past ``MAX_SERIES`` label sets a metric's new ones are counted
    under one label set whose every value is ``other``: no count is lost."""
    cap = _metrics.MAX_SERIES
    for i in range(cap + 50):
        REGISTRY.add("vidapi.retries", 1, {"reason": f"r{i}"})
        REGISTRY.observe("http.client.request.body.size", 10, {"server.address": f"h{i}"})
    REGISTRY.add("vidapi.retries", 1, {"reason": "r0"})  # a known one is still its own
    retries = {s.labels.get("reason"): s.value for s in _samples("vidapi_retries", "_total")}
    assert len(retries) <= cap + 1
    assert retries["other"] >= 50
    assert retries["r0"] == 2
    assert sum(retries.values()) == cap + 51
    counts = {
        s.labels["server_address"]: s.value
        for s in _samples("http_client_request_body_size_bytes", "_count")
    }
    assert len(counts) <= cap + 1 and sum(counts.values()) == cap + 50
    assert counts["other"] >= 50


@pytest.mark.parametrize("url", ["http://\udcff.invalid", "https://api.example/\ud800"])
def test_a_base_url_that_cannot_be_sent_is_refused(url: str) -> None:
    with pytest.raises(va.InvalidArgumentError, match="base_url"):
        va.Client(base_url=url, access_token="t")
