"""What logs, traces and metrics cost: client CPU per ``get_video`` and per pipeline.

    python benchmarks/observe_overhead.py [--baseline PATH] [--calls 3000]
        [--files 60] [--rounds 5]

Variants, each in a fresh child process, alternated round by round:

- ``baseline``: another checkout (``--baseline``, e.g. a worktree of main before the
  change) imported through PYTHONPATH: the code without any hook;
- ``absent``: this checkout with OpenTelemetry made unimportable (the ``otel`` extra not
  installed);
- ``noop``: this checkout, the OpenTelemetry API installed and no SDK configured (its
  default no-op providers);
- ``sdk``: the OpenTelemetry SDK configured globally, spans to an in-memory exporter
  through a ``BatchSpanProcessor``, metrics kept for an in-memory reader.

Per call: ``Client.get_video`` against ``call_cpu.py``'s small aiohttp server, ``--calls``
calls at concurrency 16 after 200 warm-up calls; CPU (user + system) of the child over the
calls. Per pipeline: ``BatchUploader`` at concurrency 4 over ``--files`` files of 64 KiB
(upload address, upload on the pump's threads, create) against the emulator in its own
process; the child's CPU over the batch (the pump's and the span processor's threads
included). Ratios are against ``baseline`` (or ``absent`` without one) in the same round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from call_cpu import FIELDS, _run  # noqa: E402
from pipeline_throughput import make_files, start_emulator  # noqa: E402


def setup(variant: str) -> None:
    """Before vidapi_async is imported: what the variant installs."""
    if variant == "absent":
        for name in ("opentelemetry", "opentelemetry.trace", "opentelemetry.metrics"):
            sys.modules[name] = None  # type: ignore[assignment]
    elif variant == "sdk":
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )

        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
        trace.set_tracer_provider(provider)
        metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


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


def child_pipeline(variant: str, base_url: str, folder: str) -> None:
    setup(variant)
    import vidapi_async as va

    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))

    async def main() -> float:
        async with (
            va.Client(access_token="demo-token", base_url=base_url) as client,
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

    print(json.dumps({"cpu": asyncio.run(main()) / len(files)}))


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default=None, help="a checkout without the change")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    variants: list[tuple[str, dict[str, str] | None]] = []
    if args.baseline:
        variants.append(("baseline", {"PYTHONPATH": os.path.abspath(args.baseline)}))
    variants += [("absent", None), ("noop", None), ("sdk", None)]
    reference = variants[0][0]
    with tempfile.TemporaryDirectory(prefix="vidapi-observe-") as tmp:
        folder = os.path.join(tmp, "files")
        make_files(folder, args.files, 64 * 1024)
        port_file = os.path.join(tmp, "port")
        server = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "call_cpu.py"), "--child", "server", port_file]
        )
        emulator, emu_url = start_emulator(tmp, 0.0)
        try:
            while not os.path.exists(port_file):
                time.sleep(0.05)
            with open(port_file) as f:
                api_url = f"http://127.0.0.1:{f.read().strip()}"
            per: dict[str, dict[str, list[float]]] = {"call": {}, "pipeline": {}}
            for r in range(args.rounds):
                order = variants if r % 2 == 0 else variants[::-1]
                for name, env in order:
                    variant = "noop" if name == "baseline" else name
                    call = run(["--call", variant, api_url, str(args.calls)], env)
                    pipe = run(["--pipeline", variant, emu_url, folder], env)
                    per["call"].setdefault(name, []).append(call * 1e6)
                    per["pipeline"].setdefault(name, []).append(pipe * 1e3)
                print(f"round {r + 1} done", flush=True)
        finally:
            server.terminate()
            server.wait()
            emulator.terminate()
            emulator.wait()
    for what, unit in (("call", "us per get_video"), ("pipeline", "ms per pipeline")):
        print(f"\nclient CPU, {unit} (median of {args.rounds} rounds; ratio: per-round median)")
        ref = per[what][reference]
        for name, _ in variants:
            values = per[what][name]
            ratio = statistics.median(v / b for v, b in zip(values, ref, strict=True))
            print(f"  {name:9s} {statistics.median(values):8.2f}  x{ratio:.3f} of {reference}")
    print(f"\ncommand: python benchmarks/observe_overhead.py {' '.join(sys.argv[1:])}")
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "--call":
        child_call(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "--pipeline":
        child_pipeline(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        main()
