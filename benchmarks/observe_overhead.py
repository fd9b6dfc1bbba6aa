"""What logs, traces and metrics cost: client CPU per ``get_video`` and per pipeline.

    python benchmarks/observe_overhead.py [--baseline PATH] [--calls 3000]
        [--files 60] [--rounds 5] [--size-kib 64] [--tls] [--floor]

Variants, each in a fresh child process, alternated round by round:

- ``baseline``: another checkout (``--baseline``, e.g. a worktree of main before the
  change) imported through PYTHONPATH: the code without any hook;
- ``absent``: this checkout with OpenTelemetry made unimportable (the ``otel`` extra not
  installed);
- ``noop``: this checkout, the OpenTelemetry API installed and no SDK configured (its
  default no-op providers);
- ``base-sdk`` (``--baseline-sdk``): the other checkout with the SDK, as ``sdk``;
- ``sdk``: the OpenTelemetry SDK configured globally, spans to an in-memory exporter
  through a ``BatchSpanProcessor``, metrics kept for an in-memory reader.

Per call: ``Client.get_video`` against ``call_cpu.py``'s small aiohttp server, ``--calls``
calls at concurrency 16 after 200 warm-up calls; CPU (user + system) of the child over the
calls. Per pipeline: ``BatchUploader`` at concurrency 4 over ``--files`` files of 64 KiB
(upload address, upload on the pump's threads, create) against the emulator in its own
process; the child's CPU over the batch (the pump's and the span processor's threads
included). Ratios are against ``baseline`` (or ``absent`` without one) in the same round.

``--size-kib`` sets the pipeline's file size (64 by default; 256 is issue #21's pipeline)
and ``--tls`` runs the emulator over https (a self-signed certificate the clients trust),
as the platform's API and upload hosts are: the same pipeline, with what TLS costs.

``--floor``: in each round, one more child (``floor``) measures what the SDK itself needs
for what a pipeline records, with no request and none of our code: it runs the same batch
with the SDK (as ``sdk``) while keeping every span it exported and every metric call the
client made (through a meter provider that counts and forwards them), then replays exactly
those on a fresh SDK of the same set-up: each job's span tree (names, kinds, attributes,
parents; every attribute given at the start, the cheapest way) and each ``add``/``record``
with its attributes, under a current sampled span where the client's was (exemplars). The
replay's CPU per pipeline is a lower bound of the SDK's share (a loop with warm caches);
its ratio to ``noop`` in the same round says how much of the ``sdk`` overhead no change of
ours can remove.

``--callgrind``: a second, load-independent measure. Each variant's child runs under
``valgrind --tool=callgrind`` twice, at N and 2N units of work (``--cg-calls`` calls,
``--cg-files`` pipelines); ``(Ir(2N) - Ir(N)) / N`` is the instructions per unit, the
interpreter's start, the imports and the warm-up cancelling out. Callgrind counts every
thread of the process (the pump's and the ``BatchSpanProcessor``'s included), as the CPU
measure does: both are the client process's whole cost. ``--rounds 0`` skips the CPU
rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from call_cpu import FIELDS, _run  # noqa: E402
from pipeline_throughput import make_files, start_emulator  # noqa: E402

VARIANT = {"baseline": "noop", "base-sdk": "sdk"}
"""What the baseline checkout runs as: without an SDK, and with it (``--baseline-sdk``)."""


def sdk_providers() -> tuple[Any, Any, Any]:
    """The benchmark's SDK set-up: spans to an in-memory exporter through a
    ``BatchSpanProcessor``, metrics kept for an in-memory reader."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider, MeterProvider(metric_readers=[InMemoryMetricReader()]), exporter


def setup(variant: str) -> None:
    """Before vidapi_async is imported: what the variant installs."""
    if variant == "absent":
        for name in ("opentelemetry", "opentelemetry.trace", "opentelemetry.metrics"):
            sys.modules[name] = None  # type: ignore[assignment]
    elif variant == "sdk":
        from opentelemetry import metrics, trace

        tracer_provider, meter_provider, _ = sdk_providers()
        trace.set_tracer_provider(tracer_provider)
        metrics.set_meter_provider(meter_provider)


def child_call(variant: str, base_url: str, calls: int) -> None:
    setup(variant)
    import vidapi_async as va

    async def main() -> float:
        async with va.Client(access_token="demo-token", base_url=base_url) as client:

            async def one() -> None:
                video = await client.get_video("x8abc12", fields=FIELDS)
                assert video.id == "x8abc12"

            return await _run(calls, 16, one)

    print(json.dumps({"cpu": asyncio.run(main()) / calls}))


def _trust(base_url: str) -> Any:
    """The emulator's certificate, for an https emulator (``--tls``), else ``None``."""
    if not base_url.startswith("https:"):
        return None
    import ssl

    return ssl.create_default_context(cafile=os.environ["OBSERVE_CA_FILE"])


async def _batch(base_url: str, files: list[str], **providers: Any) -> float:
    """CPU seconds of one ``BatchUploader`` run over ``files``."""
    import vidapi_async as va

    async with (
        va.Client(
            access_token="demo-token", base_url=base_url, ssl=_trust(base_url), **providers
        ) as client,
        va.BatchUploader(client, concurrency=4) as batch,
    ):
        jobs = (
            va.UploadJob(path=p, title="t", channel="news", key=f"{p}-{time.time_ns()}")
            for p in files
        )
        cpu0 = time.process_time()
        results = [r async for r in batch.run(jobs)]
        cpu = time.process_time() - cpu0
    if not all(r.ok for r in results):
        sys.exit("a job failed")
    return cpu


def child_pipeline(variant: str, base_url: str, folder: str, count: int | None = None) -> None:
    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))[:count]
    if variant == "floor":
        print(json.dumps({"cpu": floor(base_url, files) / len(files)}))
        return
    setup(variant)
    print(json.dumps({"cpu": asyncio.run(_batch(base_url, files)) / len(files)}))


class _CountingMeter:
    """A meter whose instruments forward to ``meter``'s and log each call: instrument,
    method, value, attributes, and whether a sampled span was current (exemplars)."""

    def __init__(self, meter: Any, log: list[tuple[str, str, float, Any, bool]]) -> None:
        self._meter = meter
        self._log = log

    def __getattr__(self, name: str) -> Any:
        create = getattr(self._meter, name)
        if not name.startswith("create_"):
            return create
        log = self._log

        def created(instrument_name: str, *args: Any, **kwargs: Any) -> Any:
            from opentelemetry import trace

            real = create(instrument_name, *args, **kwargs)

            class Counted:
                def add(self, value: float, attributes: Any = None) -> None:
                    sampled = trace.get_current_span().get_span_context().trace_flags.sampled
                    log.append((instrument_name, "add", value, attributes, sampled))
                    real.add(value, attributes)

                def record(self, value: float, attributes: Any = None) -> None:
                    sampled = trace.get_current_span().get_span_context().trace_flags.sampled
                    log.append((instrument_name, "record", value, attributes, sampled))
                    real.record(value, attributes)

            return Counted()

        return created


class _CountingMeterProvider:
    def __init__(self, provider: Any, log: list[tuple[str, str, float, Any, bool]]) -> None:
        self._provider = provider
        self._log = log

    def get_meter(self, *args: Any, **kwargs: Any) -> _CountingMeter:
        return _CountingMeter(self._provider.get_meter(*args, **kwargs), self._log)


def floor(base_url: str, files: list[str]) -> float:
    """The SDK's own CPU for what a batch over ``files`` records: the batch runs with the
    SDK (its CPU not counted), then what it exported and every metric call are replayed
    on a fresh SDK of the same set-up; the replay's CPU seconds."""
    from opentelemetry import context, trace

    tracer_provider, meter_provider, exporter = sdk_providers()
    calls: list[tuple[str, str, float, Any, bool]] = []
    asyncio.run(
        _batch(
            base_url,
            files,
            tracer_provider=tracer_provider,
            meter_provider=_CountingMeterProvider(meter_provider, calls),
        )
    )
    tracer_provider.force_flush()
    spans = list(exporter.get_finished_spans())
    children: dict[int | None, list[Any]] = {}
    for span in sorted(spans, key=lambda s: s.start_time):
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent, []).append(span)

    replay_tracer_provider, replay_meter_provider, _ = sdk_providers()
    tracer = replay_tracer_provider.get_tracer("vidapi_async")
    meter = replay_meter_provider.get_meter("vidapi_async")
    instruments: dict[str, Any] = {}
    for name, method, _, _, _ in calls:
        if name not in instruments:
            kind = "histogram" if method == "record" else "up_down_counter"
            if name in ("vidapi.jobs", "vidapi.upload.bytes", "vidapi.retries"):
                kind = "counter"
            instruments[name] = getattr(meter, f"create_{kind}")(name)
    sampled = tracer.start_span("current")  # for the calls made under a sampled span
    sampled_context = trace.set_span_in_context(sampled)

    def replay(span: Any, parent: Any) -> None:
        new = tracer.start_span(
            span.name, context=parent, kind=span.kind, attributes=dict(span.attributes or {})
        )
        if span.status.status_code is not trace.StatusCode.UNSET:
            new.set_status(span.status)
        inner = trace.set_span_in_context(new)
        token = context.attach(inner)
        try:
            for child in children.get(span.context.span_id, []):
                replay(child, inner)
        finally:
            context.detach(token)
            new.end()

    # Replayed at least 400 pipelines' worth, so that a garbage collection, which comes
    # every so many allocations, is counted at its average share, not by the luck of
    # whether one falls inside a short replay
    times = max(1, -(-400 // len(files)))
    gc.collect()
    cpu0 = time.process_time()
    for _ in range(times):
        for root in children.get(None, []):
            replay(root, context.Context())
        for name, method, value, attributes, in_span in calls:
            token = context.attach(sampled_context) if in_span else None
            getattr(instruments[name], method)(value, attributes)
            if token is not None:
                context.detach(token)
    cpu = (time.process_time() - cpu0) / times
    print(f"floor: {len(spans)} spans, {len(calls)} metric calls, x{times}", file=sys.stderr)
    sampled.end()
    replay_tracer_provider.shutdown()
    tracer_provider.shutdown()
    return cpu


def run(args: list[str], env: dict[str, str] | None) -> float:
    out = subprocess.run(
        [sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=1800,
    )
    if out.returncode != 0:
        raise SystemExit(f"child {args[:2]} failed: {out.stderr[-2000:]}")
    return float(json.loads(out.stdout.strip().splitlines()[-1])["cpu"])


def instructions(args: list[str], env: dict[str, str] | None, out_file: str) -> int:
    """Instructions (Ir, all threads) of one child under callgrind."""
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
    out = subprocess.run(
        [*command, sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=3600,
    )
    if out.returncode != 0:
        raise SystemExit(f"child {args[:2]} under callgrind failed: {out.stderr[-2000:]}")
    total = 0
    for name in os.listdir(os.path.dirname(out_file)):  # one file per thread if asked
        path = os.path.join(os.path.dirname(out_file), name)
        if not path.startswith(out_file):
            continue
        with open(path) as f:
            found = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.MULTILINE)
        if found:
            total += int(found.group(1))
        os.remove(path)
    return total


def callgrind(
    variants: list[tuple[str, dict[str, str] | None]],
    api_url: str,
    emu_url: str,
    folder: str,
    tmp: str,
    calls: int,
    files: int,
) -> dict[str, dict[str, float]]:
    """Instructions per get_video and per pipeline, by the marginal difference."""
    per: dict[str, dict[str, float]] = {"call": {}, "pipeline": {}}
    out_dir = os.path.join(tmp, "callgrind")
    os.makedirs(out_dir, exist_ok=True)
    for name, env in variants:
        variant = VARIANT.get(name, name)
        for what, n in (("call", calls), ("pipeline", files)):
            counts = []
            for units in (n, 2 * n):
                if what == "call":
                    args = ["--call", variant, api_url, str(units)]
                else:
                    args = ["--pipeline", variant, emu_url, folder, str(units)]
                counts.append(instructions(args, env, os.path.join(out_dir, f"{name}.out")))
            per[what][name] = (counts[1] - counts[0]) / n
            print(f"callgrind {name} {what}: Ir {counts[0]} at {n}, {counts[1]} at {2 * n}")
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default=None, help="a checkout without the change")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--baseline-sdk", action="store_true", help="the baseline with the SDK too (base-sdk)"
    )
    parser.add_argument("--only", default=None, help="these variants only (comma-separated)")
    parser.add_argument("--callgrind", action="store_true", help="instruction counts too")
    parser.add_argument("--cg-calls", type=int, default=300, help="N calls under callgrind")
    parser.add_argument("--cg-files", type=int, default=12, help="N pipelines under callgrind")
    parser.add_argument("--size-kib", type=int, default=64, help="each pipeline's file size")
    parser.add_argument("--tls", action="store_true", help="the emulator over https")
    parser.add_argument(
        "--floor", action="store_true", help="the SDK's own share, replayed without I/O"
    )
    args = parser.parse_args()
    if args.callgrind and shutil.which("valgrind") is None:
        raise SystemExit("--callgrind: valgrind is not installed")
    variants: list[tuple[str, dict[str, str] | None]] = []
    if args.baseline:
        variants.append(("baseline", {"PYTHONPATH": os.path.abspath(args.baseline)}))
        if args.baseline_sdk:
            variants.append(("base-sdk", {"PYTHONPATH": os.path.abspath(args.baseline)}))
    variants += [("absent", None), ("noop", None), ("sdk", None)]
    if args.floor:
        variants.append(("floor", None))
    if args.only:  # one invocation per variant: callgrind runs side by side
        variants = [v for v in variants if v[0] in args.only.split(",")]
    reference = variants[0][0]
    with tempfile.TemporaryDirectory(prefix="vidapi-observe-") as tmp:
        folder = os.path.join(tmp, "files")
        make_files(folder, max(args.files, 2 * args.cg_files), args.size_kib * 1024)
        port_file = os.path.join(tmp, "port")
        server = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "call_cpu.py"), "--child", "server", port_file]
        )
        emulator, emu_url = start_emulator(tmp, 0.0, "emulator-tls" if args.tls else "emulator")
        if args.tls:  # the children trust the certificate the emulator made
            os.environ["OBSERVE_CA_FILE"] = emu_url.split()[1]
            emu_url = emu_url.split()[0]
        try:
            while not os.path.exists(port_file):
                time.sleep(0.05)
            with open(port_file) as f:
                api_url = f"http://127.0.0.1:{f.read().strip()}"
            per: dict[str, dict[str, list[float]]] = {"call": {}, "pipeline": {}}
            for r in range(args.rounds):
                order = variants if r % 2 == 0 else variants[::-1]
                for name, env in order:
                    variant = VARIANT.get(name, name)
                    if variant != "floor":  # the floor is a pipeline's only
                        call = run(["--call", variant, api_url, str(args.calls)], env)
                        per["call"].setdefault(name, []).append(call * 1e6)
                    pipe = run(["--pipeline", variant, emu_url, folder, str(args.files)], env)
                    per["pipeline"].setdefault(name, []).append(pipe * 1e3)
                print(f"round {r + 1} done", flush=True)
            counted = None
            if args.callgrind:
                counted = callgrind(
                    [v for v in variants if v[0] != "floor"],
                    api_url,
                    emu_url,
                    folder,
                    tmp,
                    args.cg_calls,
                    args.cg_files,
                )
        finally:
            server.terminate()
            server.wait()
            emulator.terminate()
            emulator.wait()
    for what, unit in (("call", "us per get_video"), ("pipeline", "ms per pipeline")):
        if counted is not None:
            ref_ir = counted[what][reference]
            print(f"\ninstructions (callgrind, marginal), {unit.split(' ', 1)[1]}")
            for name, _ in variants:
                if name not in counted[what]:
                    continue
                ir = counted[what][name]
                print(f"  {name:9s} {ir / 1e6:8.3f} M  x{ir / ref_ir:.3f} of {reference}")
        if not args.rounds:
            continue
        print(f"\nclient CPU, {unit} (median of {args.rounds} rounds; ratio: per-round median)")
        ref = per[what][reference]
        for name, _ in variants:
            if name not in per[what]:
                continue
            values = per[what][name]
            ratio = statistics.median(v / b for v, b in zip(values, ref, strict=True))
            print(f"  {name:9s} {statistics.median(values):8.2f}  x{ratio:.3f} of {reference}")
    print(f"\ncommand: python benchmarks/observe_overhead.py {' '.join(sys.argv[1:])}")
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "--call":
        child_call(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "--pipeline":
        child_pipeline(
            sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else None
        )
    else:
        main()
