"""``vidapi.job.duration`` and ``vidapi.quota.refusals``, with the other job metrics, for
a batch that meets the account's quota (the emulator's ``videos_per_day``): what the
OpenTelemetry SDK's in-memory reader holds, and what the Prometheus endpoint serves in
the same run, checked against what happened (the jobs' results, the creates the emulator
saw, the videos it made, the batch's own elapsed time)."""

from __future__ import annotations

import asyncio
import math
import time
import urllib.request
from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    Histogram,
    InMemoryMetricReader,
    Metric,
    Sum,
)
from prometheus_client.parser import text_string_to_metric_families

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

PER_DAY = 2


class Run:
    """What one batch did, seen from outside the metrics."""

    def __init__(self) -> None:
        self.results: list[va.JobResult] = []
        self.creates = 0  # POST /me/videos the emulator received
        self.videos = 0  # videos it made
        self.elapsed = 0.0  # the batch's wall time, around all of its jobs
        self.metrics: dict[str, Metric] = {}
        self.prometheus: dict[str, Any] = {}

    def count(self, status: str) -> int:
        return sum(r.status.value == status for r in self.results)


def _metrics(reader: InMemoryMetricReader) -> dict[str, Metric]:
    data = reader.get_metrics_data()
    assert data is not None
    out: dict[str, Metric] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            assert scope.scope.name == "vidapi_async"
            for metric in scope.metrics:
                assert metric.name not in out
                out[metric.name] = metric
    return out


def _scrape(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {family.name: family for family in text_string_to_metric_families(text)}


async def _quota_batch(tmp_path: Path) -> Run:
    """One job refused for its channel, then jobs until the quota: ``PER_DAY`` done, the
    next refused by the platform, the rest never sent. One at a time, so that which job
    meets the quota is known."""
    files = [make_file(tmp_path / f"q{i}.mp4", 4000 + i) for i in range(PER_DAY + 3)]
    jobs = [va.UploadJob(path=files[0], title="bad", channel="no-such-channel", key="bad")]
    jobs += [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    run = Run()
    try:
        async with (
            Emulator(probe=False, faults=Faults(videos_per_day=PER_DAY)) as emu,
            client_for(emu, meter_provider=meters) as client,
        ):
            async with va.BatchUploader(client, concurrency=1, metrics_port=0) as batch:
                port = batch.metrics_port
                assert port is not None
                started = time.perf_counter()
                run.results = [r async for r in batch.run(jobs)]
                run.elapsed = time.perf_counter() - started
                run.prometheus = await asyncio.to_thread(_scrape, port)
            run.creates = sum(
                r.host == "api" and r.method == "POST" and r.path.rstrip("/") == "/me/videos"
                for r in emu.requests
            )
            run.videos = len(emu.videos())
        run.metrics = _metrics(reader)
    finally:
        meters.shutdown()
    return run


async def test_job_duration_and_quota_refusals_match_the_batch(tmp_path: Path) -> None:
    run = await _quota_batch(tmp_path)
    done, failed = run.count("done"), run.count("failed")
    assert (done, failed) == (PER_DAY, 4), [(r.key, r.status, r.error) for r in run.results]
    quota = [r for r in run.results if isinstance(r.error, va.QuotaExceededError)]
    assert len(quota) == 3
    refused_by_platform = run.creates - run.videos
    assert refused_by_platform == 1
    metrics = run.metrics

    refusals = metrics["vidapi.quota.refusals"]
    assert refusals.unit == "{refusal}"
    assert isinstance(refusals.data, Sum) and refusals.data.is_monotonic
    [point] = refusals.data.data_points
    assert dict(point.attributes or {}) == {}
    assert point.value == refused_by_platform

    durations = metrics["vidapi.job.duration"]
    assert durations.unit == "s"
    assert isinstance(durations.data, Histogram)
    by_outcome = {(p.attributes or {})["outcome"]: p for p in durations.data.data_points}
    assert {k: p.count for k, p in by_outcome.items()} == {"done": done, "failed": failed}
    for p in by_outcome.values():
        assert sum(p.bucket_counts) == p.count
        assert 0 < p.min <= p.max <= p.sum
    # one job at a time: together they took no longer than the batch
    assert sum(p.sum for p in by_outcome.values()) <= run.elapsed
    # a done job uploaded and created; a failed one was refused before (or at) its create
    assert by_outcome["done"].max <= run.elapsed

    jobs = metrics["vidapi.jobs"]
    assert isinstance(jobs.data, Sum)
    counted = {(p.attributes or {})["outcome"]: p.value for p in jobs.data.data_points}
    assert counted == {"done": done, "failed": failed}
    in_flight = metrics["vidapi.jobs.in_flight"]
    assert isinstance(in_flight.data, Sum) and not in_flight.data.is_monotonic
    assert sum(p.value for p in in_flight.data.data_points) == 0


async def test_the_prometheus_endpoint_serves_the_same_job_metrics(tmp_path: Path) -> None:
    run = await _quota_batch(tmp_path)
    served = run.prometheus
    # every family typed: a counter's TYPE line names its samples (``..._total``)
    assert {name: f.type for name, f in served.items() if f.type == "unknown"} == {}
    refusals = served["vidapi_quota_refusals"]
    assert refusals.type == "counter"
    [sample] = refusals.samples
    assert (sample.name, sample.labels) == ("vidapi_quota_refusals_total", {})
    assert sample.value == run.creates - run.videos == 1

    durations = served["vidapi_job_duration_seconds"]
    assert durations.type == "histogram"
    histogram = run.metrics["vidapi.job.duration"].data
    assert isinstance(histogram, Histogram)
    recorded = {(p.attributes or {})["outcome"]: p for p in histogram.data_points}
    for outcome in ("done", "failed"):
        rows = [s for s in durations.samples if s.labels.get("outcome") == outcome]
        buckets = [s for s in rows if s.name.endswith("_bucket")]
        [count] = [s.value for s in rows if s.name.endswith("_count")]
        [total] = [s.value for s in rows if s.name.endswith("_sum")]
        assert count == run.count(outcome) == recorded[outcome].count
        # the same durations as the SDK's: each job's time is measured once, fed to both
        assert math.isclose(total, recorded[outcome].sum, rel_tol=1e-9)
        cumulative = [s.value for s in buckets]
        assert cumulative == sorted(cumulative)
        assert buckets[-1].labels["le"] == "+Inf" and cumulative[-1] == count
        first_above = next(
            s.value for s in buckets if float(s.labels["le"]) >= recorded[outcome].max
        )
        assert first_above == count  # no job took longer than its bucket says

    jobs = served["vidapi_jobs"]
    assert jobs.type == "counter"
    assert {s.labels["outcome"]: s.value for s in jobs.samples} == {
        "done": run.count("done"),
        "failed": run.count("failed"),
        **{
            outcome: 0 for outcome in ("skipped", "updated", "adopted", "lost", "requeued")
        },  # 0 from the start
    }
    assert [s.value for s in served["vidapi_jobs_in_flight"].samples] == [0.0]


async def test_every_quota_refusal_from_the_platform_is_counted(tmp_path: Path) -> None:
    """Creates in flight together past the quota are each refused by the platform: each
    refusal counts (the jobs stopped by the batch without sending do not)."""
    files = [make_file(tmp_path / f"r{i}.mp4", 5000 + i) for i in range(PER_DAY + 4)]
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    try:
        slow_creates = Faults(videos_per_day=PER_DAY, latency=0.3, paths=("/me/videos",))
        async with (
            Emulator(probe=False, faults=slow_creates) as emu,
            client_for(emu, meter_provider=meters) as client,
        ):
            async with va.BatchUploader(client, concurrency=len(files)) as batch:
                jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
                results = [r async for r in batch.run(jobs)]
            creates = sum(
                r.host == "api" and r.method == "POST" and r.path.rstrip("/") == "/me/videos"
                for r in emu.requests
            )
            refused = creates - len(emu.videos())
        metrics = _metrics(reader)
    finally:
        meters.shutdown()
    assert sum(r.status == "done" for r in results) == PER_DAY
    assert refused >= 2, "the creates were not in flight together"
    [point] = metrics["vidapi.quota.refusals"].data.data_points
    assert point.value == refused


async def test_jobs_stopped_by_a_cancelled_batch_are_not_counted_failed(tmp_path: Path) -> None:
    """Stopping a batch (breaking out of ``run``, a worker's stop) cancels the jobs in
    flight: they did not fail, and ``vidapi.jobs`` has no outcome for them (before: each
    was counted ``failed``, a false alarm at every deploy); in-flight goes back to 0."""
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    files = [make_file(tmp_path / f"c{i}.mp4", 3000 + i) for i in range(6)]
    async with (
        Emulator(probe=False, faults=Faults(latency=0.05)) as emu,
        client_for(emu, meter_provider=meters) as client,
        va.BatchUploader(client, concurrency=4) as batch,
    ):
        jobs = [va.UploadJob(path=f, title="t", channel="news") for f in files]
        async for result in batch.run(jobs):
            assert result.ok
            break
    by_name = _metrics(reader)
    meters.shutdown()
    outcomes = {p.attributes["outcome"]: p.value for p in by_name["vidapi.jobs"].data.data_points}
    assert "failed" not in outcomes and outcomes.get("done", 0) >= 1, outcomes
    assert sum(p.value for p in by_name["vidapi.jobs.in_flight"].data.data_points) == 0


async def test_an_endpoint_started_mid_batch_never_serves_a_negative_in_flight(
    tmp_path: Path,
) -> None:
    """The endpoint counts from when it starts: a job begun before it ends after it
    without taking in-flight below zero (before: -1 for each such job)."""
    from vidapi_async._metrics import MetricsServer

    files = [make_file(tmp_path / f"n{i}.mp4", 3000 + i) for i in range(3)]
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    servers: list[MetricsServer] = []

    def progress(p: va.BatchProgress) -> None:
        if p.files and not servers:  # jobs in flight: the endpoint starts now
            servers.append(MetricsServer(0))

    try:
        async with (
            Emulator(probe=False, faults=Faults(latency=0.05)) as emu,
            client_for(emu, meter_provider=meters) as client,
            va.BatchUploader(client, concurrency=3, progress=progress) as batch,
        ):
            jobs = [va.UploadJob(path=f, title="t", channel="news") for f in files]
            assert all([r.ok async for r in batch.run(jobs)])
        assert servers
        scraped = await asyncio.to_thread(_scrape, servers[0].port)
    finally:
        for server in servers:
            server.close()
        meters.shutdown()
    [sample] = scraped["vidapi_jobs_in_flight"].samples
    assert sample.value == 0, sample
