"""Logs, OpenTelemetry spans and metrics, and the Prometheus endpoint, checked against
what the emulator saw: one span and one ``.http`` line per request it logged, the
``traceparent`` it received, and no secret in any line, attribute, event or label."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

import vidapi_async as va
from tests.conftest import fast_retry, make_file
from vidapi_async._observe import redacted_url
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

PASSWORD = "vid-pass-Zq81"
CLIENT_SECRET = "demo-secret"
USER_PASSWORD = "demo-password"


FAULTS = Faults(
    error_rate=0.25,
    seed=3,
    error_statuses=(500, 503),
    paths=("/upload", "/file/upload", "/video/"),  # requests retried (a create is not)
)


@pytest.fixture
def exporter() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    yield provider, spans
    provider.shutdown()


def oauth() -> va.OAuth:
    return va.OAuth.password(
        "demo-client",
        CLIENT_SECRET,
        username="demo",
        password=USER_PASSWORD,
        scopes=("manage_videos",),
    )


def every_value(spans: list[ReadableSpan]) -> Iterator[str]:
    """Every string a span exporter would ship: names, attributes, events, links."""
    for span in spans:
        yield span.name
        for value in (span.attributes or {}).values():
            yield str(value)
        for event in span.events:
            yield event.name
            yield from (str(v) for v in (event.attributes or {}).values())
        yield from span.attributes or {}


def seal_values(upload_url: str) -> list[str]:
    return [v for _, v in parse_qsl(urlsplit(upload_url).query) if len(v) >= 6]


async def token_of(client: va.Client) -> str:
    return (await client.access_token()).token


def assert_no_secret(texts: list[str], secrets: list[str]) -> None:
    assert secrets and all(secrets)
    for text in texts:
        for secret in secrets:
            assert secret not in text, (secret, text)


async def traced_run(
    emu: Emulator, provider: TracerProvider, tmp_path: Path, meters: MeterProvider | None = None
) -> tuple[list[str], va.Video]:
    """Uploads (chunked, retried) and calls under faults; the secrets they used."""
    video = make_file(tmp_path / "clip.mp4", 300_000)
    async with client_for(
        emu,
        auth=oauth(),
        retry=fast_retry(),
        tracer_provider=provider,
        meter_provider=meters,
        range_size=64_000,
    ) as client:
        session = await client.get_upload_session()
        uploaded = await client.upload_file(video, upload_session=session, chunked=True)
        await client.get_upload_progress(session)  # an API call, to the upload host
        created = await client.create_video(url=uploaded.url, title="t", channel="news")
        await client.set_password(created.id, PASSWORD)
        await client.get_video(created.id)
        single = await client.upload_video(video, title="u", channel="news", chunked=False)
        token = await token_of(client)
    secrets = [token, PASSWORD, CLIENT_SECRET, USER_PASSWORD, *seal_values(session.upload_url)]
    return secrets, single


async def test_a_span_per_request_the_server_saw_with_parents_and_no_secret(
    exporter: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path
) -> None:
    provider, memory = exporter
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    async with Emulator(faults=FAULTS, probe=False) as emu:
        secrets, _ = await traced_run(emu, provider, tmp_path, meters)
        seen = emu.requests
        upload_port = urlsplit(emu.upload_base).port
    spans = list(memory.get_finished_spans())
    requests = [s for s in spans if s.kind is SpanKind.CLIENT]
    assert len(requests) == len(seen)
    by_id = {s.context.span_id: s for s in spans}

    def operations_of(span: ReadableSpan) -> list[str]:
        """The operations a span runs in, innermost first (its parent chain)."""
        names = []
        while span.parent is not None:
            span = by_id[span.parent.span_id]
            names.append(span.name)
        return names

    for span in requests:
        attrs = span.attributes or {}
        assert attrs["http.request.method"] == span.name
        assert attrs["server.address"] == "127.0.0.1"
        assert str(attrs["url.full"]).startswith("http://127.0.0.1:")
        assert operations_of(span)[0].startswith("vidapi "), span.name
        if attrs["http.response.status_code"] >= 400:  # type: ignore[operator]
            assert attrs["error.type"] == str(attrs["http.response.status_code"])
    on_upload_host = [s for s in requests if (s.attributes or {})["server.port"] == upload_port]
    uploads = [s for s in on_upload_host if s.name == "POST"]  # the progress GET apart
    assert len(uploads) == len(on_upload_host) - 1
    ranges = [s for s in uploads if operations_of(s) == ["vidapi upload_file"]]
    assert len(ranges) >= 5  # 300 kB in 64 kB ranges, retries included
    for span in uploads:  # sent from the pump's threads, children of the operation
        assert str((span.attributes or {})["thread.name"]).startswith("vidapi-upload")
        assert "http.request.body.size" in (span.attributes or {})
    sizes = [(s.attributes or {})["http.request.body.size"] for s in ranges]
    assert 64_000 in sizes  # a range
    single = [s for s in uploads if operations_of(s)[1:] == ["vidapi upload_video"]]
    assert single and all(
        (s.attributes or {})["http.request.body.size"] > 300_000  # type: ignore[operator]
        for s in single
    )  # the single-shot request: the file and its multipart envelope
    resent = [s for s in requests if "http.request.resend_count" in (s.attributes or {})]
    assert resent, "the faults caused retries: their spans say so"
    # W3C traceparent on API calls, of the request's own span; never to the upload host.
    api_spans = {format(s.context.span_id, "016x"): s for s in requests if s not in uploads}
    for request in seen:
        parent = request.headers.get("traceparent") or request.headers.get("Traceparent")
        if request.host == "upload":
            assert parent is None
        else:
            assert parent is not None
            assert parent.split("-")[2] in api_spans
    assert_no_secret(list(every_value(spans)), secrets)
    retries = {p.attributes["reason"]: p.value for p in _points(reader)["vidapi.retries"]}
    assert retries and set(retries) <= {"500", "503"}
    meters.shutdown()


async def test_debug_logs_of_a_run_name_every_request_and_hold_no_secret(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG, logger="vidapi_async")
    async with Emulator(faults=FAULTS, probe=False) as emu:
        secrets, _ = await traced_run(emu, TracerProvider(), tmp_path)
        seen = emu.requests
    records = [r for r in caplog.records if r.name.startswith("vidapi_async")]
    lines = [r.getMessage() for r in records]
    http = [r for r in records if r.name == "vidapi_async.http"]
    assert len(http) == len(seen)
    assert {r.name for r in records} >= {
        "vidapi_async.http",
        "vidapi_async.retry",
        "vidapi_async.upload",
        "vidapi_async.auth",
    }
    assert any("fetched" in r.getMessage() for r in records if r.name == "vidapi_async.auth")
    assert_no_secret(lines, secrets)
    for line in lines:
        assert "%2F" not in line and "%3D" not in line  # no piece of a seal


def test_url_full_keeps_plain_parameters_and_redacts_the_rest() -> None:
    url = "https://u:p4ss@up.example/upload?uuid=abc&seal=x%2Fy&fields=id,title"
    assert redacted_url(url) == (
        "https://REDACTED:REDACTED@up.example/upload?uuid=REDACTED&seal=REDACTED&fields=id%2Ctitle"
    )
    # a bare key (a token given as the query's name) is a value as well
    assert redacted_url("https://h.example/x?abcSECRET&fields=id&k%3Dv") == (
        "https://h.example/x?REDACTED&fields=id&REDACTED"
    )
    assert redacted_url("https://h.example/x?fields") == "https://h.example/x?fields="


async def test_spans_and_metrics_of_a_batch_with_failures(
    exporter: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path
) -> None:
    provider, memory = exporter
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    files = [make_file(tmp_path / f"f{i}.mp4", 5000) for i in range(4)]
    jobs = [va.UploadJob(path=f, title=f"t{i}", channel="news") for i, f in enumerate(files)]
    jobs.append(va.UploadJob(path=tmp_path / "gone.mp4", title="x", channel="news"))
    jobs.append(va.UploadJob(path=files[0], title="bad", channel="no-such-channel", key="bad"))
    jobs.append(
        va.UploadJob(
            path=files[1], title="pw", channel="news", password=PASSWORD, key="with-password"
        )
    )
    async with (
        Emulator(probe=False) as emu,
        client_for(emu, meter_provider=meters, tracer_provider=provider) as client,
    ):
        async with va.BatchUploader(client, concurrency=2) as batch:
            results = [r async for r in batch.run(jobs)]
        seen = len(emu.requests)
        token = await token_of(client)
    outcomes = {r.status.value for r in results}
    assert outcomes == {"done", "failed"}
    points = _points(reader)
    jobs_by = {p.attributes["outcome"]: p.value for p in points["vidapi.jobs"]}
    assert jobs_by == {"done": 5, "failed": 2}
    for p in points["http.client.request.duration"]:  # API calls and uploads apart
        assert isinstance(p.attributes["server.port"], int), p.attributes
    # the histograms' buckets are the conventions' seconds and powers of four bytes, as
    # the Prometheus endpoint's (the SDK's default, 0 to 10000, is for milliseconds)
    from vidapi_async._metrics import BYTES_BUCKETS, SECONDS_BUCKETS

    for name, buckets in (
        ("http.client.request.duration", SECONDS_BUCKETS),
        ("vidapi.job.duration", SECONDS_BUCKETS),
        ("http.client.request.body.size", BYTES_BUCKETS),
    ):
        for p in points[name]:
            assert tuple(p.explicit_bounds) == buckets, (name, p.explicit_bounds)
    assert SECONDS_BUCKETS[0] == 0.005 and SECONDS_BUCKETS[-1] >= 60
    ports = {p.attributes["server.port"] for p in points["http.client.request.duration"]}
    assert len(ports) == 2  # the emulator's API and its upload host
    assert sum(p.value for p in points["vidapi.jobs.in_flight"]) == 0
    assert sum(p.count for p in points["http.client.request.duration"]) == seen
    # the bad channel's job is refused before its upload (the channel is checked
    # against the platform's categories first): five files sent
    assert sum(p.value for p in points["vidapi.upload.bytes"]) == 5 * 5000
    meters.shutdown()
    spans = list(memory.get_finished_spans())
    job_spans = [s for s in spans if s.name == "vidapi job"]
    assert len(job_spans) == 7
    keys = {(s.attributes or {}).get("vidapi.job.key") for s in job_spans}
    assert {"bad", "with-password"} <= keys
    assert len(keys - {None}) == 7  # a missing file's job is keyed by its path (recorded failed)
    from opentelemetry.trace import StatusCode

    failed = {r.key for r in results if not r.ok}
    for span in job_spans:  # a failed job's span says so, with the error's class
        attributes = span.attributes or {}
        if attributes.get("vidapi.job.key") in failed:
            assert span.status.status_code is StatusCode.ERROR, attributes
            assert attributes["error.type"] in ("FileError", "InvalidArgumentError")
        else:
            assert span.status.status_code is StatusCode.UNSET and "error.type" not in attributes
    # In a job, the job is the operation: each request's span (the upload's, made in a
    # pump thread, included) is a child of the job's span, with no operation span between
    by_id = {s.context.span_id: s for s in spans}
    client_spans = [s for s in spans if s.kind is SpanKind.CLIENT]
    assert {s.name for s in spans} == {"vidapi job"} | {s.name for s in client_spans}
    for span in client_spans:
        assert span.parent is not None
        assert by_id[span.parent.span_id].name == "vidapi job", span.attributes
    assert any("thread.name" in (s.attributes or {}) for s in client_spans)  # the uploads
    assert_no_secret(list(every_value(spans)), [token, PASSWORD])


def _points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    assert data is not None
    out: dict[str, list[Any]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            assert scope.scope.name == "vidapi_async"
            for metric in scope.metrics:
                out.setdefault(metric.name, []).extend(metric.data.data_points)
    return out


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX only")


async def test_spans_sampled_out_export_nothing_and_still_propagate(emulator: Emulator) -> None:
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    memory = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    async with client_for(emulator, tracer_provider=provider) as client:
        await client.me()
    provider.shutdown()
    assert memory.get_finished_spans() == ()
    [request] = [r for r in emulator.requests if r.path == "/me"]
    parent = request.headers.get("traceparent") or request.headers["Traceparent"]
    assert int(parent.split("-")[3], 16) & 1 == 0  # not sampled: the server may agree


async def test_a_source_fetch_is_a_span_without_its_credentials(
    emulator: Emulator, exporter: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    from tests.wire import Reply, Seen, WireServer

    def source(seen: Seen) -> Reply:
        return Reply(200, b"v" * 50_000, {"Content-Type": "video/mp4"})

    provider, memory = exporter
    async with WireServer(source) as src, client_for(emulator, tracer_provider=provider) as c:
        where = src.url.replace("://", "://src-user:src-Pw0rd@")
        await c.upload_from_url(f"{where}/clip.mp4?sig=sig-Value-9", headers={"X-K": "k-Val-7"})
        [get] = src.seen
        assert "traceparent" not in get.headers  # a source gets none
    spans = list(memory.get_finished_spans())
    [fetch] = [
        s
        for s in spans
        if (s.attributes or {}).get("url.full", "").endswith("clip.mp4?sig=REDACTED")
    ]  # type: ignore[union-attr]
    assert str((fetch.attributes or {})["url.full"]).startswith("http://REDACTED:REDACTED@")
    assert fetch.parent is not None
    # the source's GET and the upload it feeds are siblings in the operation: the GET's
    # span is not current while the upload runs (before: the upload was its child)
    [upload] = [s for s in spans if s.name == "POST"]
    assert upload.parent is not None and upload.parent.span_id == fetch.parent.span_id
    assert_no_secret(list(every_value(spans)), ["src-Pw0rd", "sig-Value-9", "k-Val-7"])


async def test_a_failed_upload_of_a_source_is_not_the_sources_error(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    from opentelemetry.trace import StatusCode

    from tests.wire import Reply, Seen, WireServer

    def source(seen: Seen) -> Reply:
        return Reply(200, b"v" * 50_000, {"Content-Type": "video/mp4"})

    provider, memory = exporter
    faults = Faults(error_rate=1.0, error_statuses=(400,), paths=("/upload",))
    async with (
        Emulator(probe=False, faults=faults) as emu,
        WireServer(source) as src,
        client_for(emu, tracer_provider=provider) as c,
    ):
        with pytest.raises(va.VidapiError):
            await c.upload_from_url(f"{src.url}/clip.mp4")
    [fetch] = [
        s
        for s in memory.get_finished_spans()
        if str((s.attributes or {}).get("url.full", "")).endswith("clip.mp4")
    ]
    assert fetch.status.status_code is StatusCode.UNSET  # the GET itself went well
    assert "error.type" not in (fetch.attributes or {})


async def test_a_request_span_has_its_attributes_when_the_sampler_decides(
    emulator: Emulator,
) -> None:
    """The HTTP conventions ask that a sampler can read the request's attributes: they
    are given at the span's start, not set after it."""
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, Sampler, SamplingResult

    seen: list[tuple[str, dict[str, Any]]] = []

    class Watching(Sampler):
        def should_sample(self, *args: Any, **kwargs: Any) -> SamplingResult:
            name, attributes = args[2], args[4] if len(args) > 4 else kwargs.get("attributes")
            seen.append((name, dict(attributes or {})))
            return ALWAYS_ON.should_sample(*args, **kwargs)

        def get_description(self) -> str:
            return "watching"

    memory = InMemorySpanExporter()
    provider = TracerProvider(sampler=Watching())
    provider.add_span_processor(SimpleSpanProcessor(memory))
    async with client_for(emulator, tracer_provider=provider) as client:
        await client.me()
    provider.shutdown()
    [attributes] = [a for n, a in seen if n == "GET"]
    assert attributes["http.request.method"] == "GET"
    assert urlsplit(str(attributes["url.full"])).path == "/me"
    assert attributes["server.address"] == urlsplit(str(attributes["url.full"])).hostname
    assert ("vidapi me", {}) in seen
    assert len(memory.get_finished_spans()) == len(seen)


async def test_a_failed_operation_records_its_error_and_leaves_no_span_current(
    emulator: Emulator, exporter: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    from opentelemetry import trace
    from opentelemetry.trace import StatusCode

    provider, memory = exporter
    async with client_for(emulator, tracer_provider=provider) as client:
        with pytest.raises(va.NotFoundError):
            await client.get_video("xnone00")
        assert not trace.get_current_span().get_span_context().is_valid
        await client.me()  # a new trace: nothing left current by the failure
    spans = list(memory.get_finished_spans())
    [op] = [s for s in spans if s.name == "vidapi get_video"]
    [request] = [
        s for s in spans if s.parent is not None and s.parent.span_id == op.context.span_id
    ]
    assert op.status.status_code is StatusCode.ERROR
    assert (op.status.description or "").startswith("NotFoundError: ")
    assert [e.name for e in op.events] == ["exception"]
    assert (op.attributes or {})["error.type"] == "NotFoundError"  # as a job's span has
    assert (request.attributes or {})["http.response.status_code"] == 404
    assert (request.attributes or {})["error.type"] == "404"
    assert request.kind is SpanKind.CLIENT
    assert request.status.status_code is StatusCode.ERROR  # a client span's 4xx is an error
    [me] = [s for s in spans if s.name == "vidapi me"]
    assert me.parent is None and me.context.trace_id != op.context.trace_id


@pytest.mark.parametrize("when", ["started", "uploading", "chunked", "done"])
async def test_a_call_from_a_progress_callback_keeps_its_own_operation_span(
    emulator: Emulator,
    exporter: tuple[TracerProvider, InMemorySpanExporter],
    tmp_path: Path,
    when: str,
) -> None:
    """Only the job's own calls are folded into its span: a task the caller's progress
    callback starts (at a job's start, during its upload, single-shot or chunked, at its
    end), or another client's call, is an operation of its own."""
    provider, memory = exporter
    started: list[asyncio.Task[Any]] = []

    def now(p: va.BatchProgress) -> bool:
        if when == "started":
            return p.started > 0
        if when == "done":
            return p.done > 0
        return bool(p.files)

    async with (
        client_for(emulator, tracer_provider=provider, range_size=64_000) as client,
        client_for(emulator, tracer_provider=provider) as other,
    ):

        def progress(p: va.BatchProgress) -> None:
            if not started and now(p):
                started.append(asyncio.ensure_future(client.me()))
                started.append(asyncio.ensure_future(other.me()))

        async with va.BatchUploader(client, progress=progress, chunked=when == "chunked") as batch:
            path = make_file(tmp_path / "p.mp4", 200_000)
            jobs = [va.UploadJob(path=path, title="t", channel="news")]
            assert all([r.ok async for r in batch.run(jobs)])
        await asyncio.gather(*started)
    spans = list(memory.get_finished_spans())
    assert len(started) == 2
    assert [s.name for s in spans].count("vidapi me") == 2


async def test_the_wait_for_the_request_rate_is_not_the_requests_time(
    emulator: Emulator, exporter: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """A request's span and duration start once the client's rate lets it go (before:
    8 calls at 4 a second summed 7 s of 'request time' from a server answering at once)."""
    provider, memory = exporter
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    async with client_for(
        emulator, tracer_provider=provider, meter_provider=meters, max_requests_per_second=4
    ) as client:
        started = asyncio.get_running_loop().time()
        await asyncio.gather(*(client.me() for _ in range(8)))
        elapsed = asyncio.get_running_loop().time() - started
    spans = [s for s in memory.get_finished_spans() if s.kind is SpanKind.CLIENT]
    assert len(spans) == 8
    in_spans = sum((s.end_time or 0) - (s.start_time or 0) for s in spans) / 1e9
    recorded = sum(p.sum for p in _points(reader)["http.client.request.duration"])
    meters.shutdown()
    assert elapsed >= 1.5  # the rate held them back
    assert in_spans < elapsed / 2 and recorded < elapsed / 2, (in_spans, recorded, elapsed)


@pytest.mark.parametrize("chunked", [False, True], ids=["single-shot", "chunked"])
@pytest.mark.parametrize("form", ["json-message", "text", "text-cut"])
async def test_an_upload_host_echoing_its_address_never_puts_the_seal_in_the_error(
    emulator: Emulator, tmp_path: Path, chunked: bool, form: str
) -> None:
    """An upload host may answer an error with the request target in it: the seal (every
    query value of the upload address, escaped as the platform's are) is masked in the
    error, hence in the operation's span, the logs and a journal (before: the seal was in
    all of them). The host is the scripted wire server, its answers in small segments."""
    from tests.wire import Reply, Seen, WireServer

    seal = "sealZ9Y8%2FX7W6V5"  # as written in the address; the host may echo it decoded

    def reject(seen: Seen) -> Reply:
        echoed = seen.target if form != "json-message" else unquote(seen.target)
        if form == "text-cut":  # the answer cut at 200 characters, inside the seal
            head = f"bad seal in {echoed}"
            echoed = "x" * (200 - head.index(seal) - 6) + echoed
        if form == "json-message":
            message = {"error": {"message": f"bad seal in {echoed}", "code": 403}}
            return Reply.json(message, status=403, segment=7)
        return Reply(403, f"bad seal in {echoed}".encode(), segment=7)

    path = make_file(tmp_path / "s.mp4", 5000)
    async with WireServer(reject) as host:
        session = va.UploadSession(
            upload_url=f"{host.url}/upload?uuid=u1&seal={seal}",
            progress_url=f"{host.url}/progress?uuid=u1",
        )
        async with client_for(emulator, retry=fast_retry()) as client:
            with pytest.raises(va.UploadRejectedError) as caught:
                await client.upload_file(path, upload_session=session, chunked=chunked)
        assert host.seen and all(seal in seen.target for seen in host.seen)
    text = f"{caught.value} {caught.value!r} {caught.value.args}"
    assert "bad seal in" in text or form == "text-cut"
    for written in (seal, unquote(seal)):
        assert written[:6] not in text, text


async def test_an_upload_stopped_by_its_progress_callback_names_the_callbacks_error(
    emulator: Emulator, exporter: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path
) -> None:
    """The pump's thread is told to stop; its span's error.type is why (the callback's
    error class), not the pump's private signal (before: ``_Aborted``)."""
    provider, memory = exporter
    path = make_file(tmp_path / "big.mp4", 8_000_000)

    def progress(sent: int, total: int) -> None:
        raise ValueError("stop here")

    async with client_for(emulator, tracer_provider=provider) as client:
        with pytest.raises(ValueError, match="stop here"):
            await client.upload_file(path, progress=progress, read_size=64 * 1024)
    [post] = [s for s in memory.get_finished_spans() if s.name == "POST"]
    assert (post.attributes or {})["error.type"] == "ValueError"
