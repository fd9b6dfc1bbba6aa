"""Job metrics when clients share an OpenTelemetry meter provider, or get a new meter
object at each call (a vendor's wrapper, the API's proxy): every client's jobs and bytes
are counted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_observe import _points
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def test_clients_sharing_a_meter_provider_add_up_their_job_counts(
    tmp_path: Path,
) -> None:
    """The jobs, in-flight and upload-bytes counts are read by the SDK when it collects
    (asynchronous instruments): two clients on one provider, and a third made after the
    first two are gone, all count (the SDK keeps an instrument's first callbacks only)."""
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    files = [make_file(tmp_path / f"f{i}.mp4", 3000 + i) for i in range(3)]
    async with Emulator(probe=False) as emu:
        async with (
            client_for(emu, meter_provider=meters) as one,
            client_for(emu, meter_provider=meters) as two,
        ):
            for client, path in ((one, files[0]), (two, files[1])):
                async with va.BatchUploader(client) as batch:
                    jobs = [va.UploadJob(path=path, title="t", channel="news")]
                    assert all([r.ok async for r in batch.run(jobs)])
        async with client_for(emu, meter_provider=meters) as three:
            async with va.BatchUploader(three) as batch:
                jobs = [
                    va.UploadJob(path=files[2], title="t", channel="news"),
                    va.UploadJob(path=tmp_path / "gone.mp4", title="t", channel="news"),
                ]
                assert [r.status.value async for r in batch.run(jobs)].count("done") == 1
    points = _points(reader)
    meters.shutdown()
    assert {p.attributes["outcome"]: p.value for p in points["vidapi.jobs"]} == {
        "done": 3,
        "failed": 1,
    }
    assert sum(p.value for p in points["vidapi.upload.bytes"]) == 3000 + 3001 + 3002
    assert sum(p.value for p in points["vidapi.jobs.in_flight"]) == 0
    assert sum(p.count for p in points["vidapi.job.duration"]) == 4


class _FreshMeters:
    """A meter provider whose ``get_meter`` hands out a new object each call (as the
    API's proxy provider and some vendors' wrappers do), over one real meter."""

    def __init__(self, real: MeterProvider) -> None:
        self.real = real

    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        meter = self.real.get_meter(*args, **kwargs)

        class Fresh:
            def __getattr__(self, name: str) -> Any:
                return getattr(meter, name)

        return Fresh()


@pytest.mark.parametrize("shared", [True, False], ids=["one-wrapper", "wrapper-per-client"])
async def test_job_counts_add_up_when_meter_objects_differ(tmp_path: Path, shared: bool) -> None:
    """A provider handing out a new meter object each call, shared by the clients or one
    per client over one SDK provider (a vendor's wrapper, the API's proxy given
    explicitly): every client's jobs and bytes are counted (they were lost while the
    counts were asynchronous instruments, whose first callbacks alone the SDK keeps)."""
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    one = _FreshMeters(meters)
    files = [make_file(tmp_path / f"m{i}.mp4", 3000 + i) for i in range(2)]
    async with Emulator(probe=False) as emu:
        for path in files:
            provider = one if shared else _FreshMeters(meters)
            async with client_for(emu, meter_provider=provider) as client:
                async with va.BatchUploader(client) as batch:
                    jobs = [va.UploadJob(path=path, title="t", channel="news")]
                    assert all([r.ok async for r in batch.run(jobs)])
    points = _points(reader)
    meters.shutdown()
    assert {p.attributes["outcome"]: p.value for p in points["vidapi.jobs"]} == {"done": 2}
    assert sum(p.value for p in points["vidapi.upload.bytes"]) == 3000 + 3001
