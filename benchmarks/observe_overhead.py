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
- ``base-sdk`` (``--baseline-sdk``): the other checkout with the SDK, as ``sdk``;
- ``sdk``: the OpenTelemetry SDK configured globally, spans to an in-memory exporter
  through a ``BatchSpanProcessor``, metrics kept for an in-memory reader.

Per call: ``Client.get_video`` against ``call_cpu.py``'s small aiohttp server, ``--calls``
calls at concurrency 16 after 200 warm-up calls; CPU (user + system) of the child over the
calls. Per pipeline: ``BatchUploader`` at concurrency 4 over ``--files`` files of 64 KiB
(upload address, upload on the pump's threads, create) against the emulator in its own
process; the child's CPU over the batch (the pump's and the span processor's threads
included). Ratios are against ``baseline`` (or ``absent`` without one) in the same round.

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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from call_cpu import FIELDS, _run  # noqa: E402
from pipeline_throughput import make_files, start_emulator  # noqa: E402

VARIANT = {"baseline": "noop", "base-sdk": "sdk"}
"""What the baseline checkout runs as: without an SDK, and with it (``--baseline-sdk``)."""


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


def child_pipeline(variant: str, base_url: str, folder: str, count: int | None = None) -> None:
    setup(variant)
    import vidapi_async as va

    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))[:count]

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
    args = parser.parse_args()
    if args.callgrind and shutil.which("valgrind") is None:
        raise SystemExit("--callgrind: valgrind is not installed")
    variants: list[tuple[str, dict[str, str] | None]] = []
    if args.baseline:
        variants.append(("baseline", {"PYTHONPATH": os.path.abspath(args.baseline)}))
        if args.baseline_sdk:
            variants.append(("base-sdk", {"PYTHONPATH": os.path.abspath(args.baseline)}))
    variants += [("absent", None), ("noop", None), ("sdk", None)]
    if args.only:  # one invocation per variant: callgrind runs side by side
        variants = [v for v in variants if v[0] in args.only.split(",")]
    reference = variants[0][0]
    with tempfile.TemporaryDirectory(prefix="vidapi-observe-") as tmp:
        folder = os.path.join(tmp, "files")
        make_files(folder, max(args.files, 2 * args.cg_files), 64 * 1024)
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
                    variant = VARIANT.get(name, name)
                    call = run(["--call", variant, api_url, str(args.calls)], env)
                    pipe = run(["--pipeline", variant, emu_url, folder, str(args.files)], env)
                    per["call"].setdefault(name, []).append(call * 1e6)
                    per["pipeline"].setdefault(name, []).append(pipe * 1e3)
                print(f"round {r + 1} done", flush=True)
            counted = None
            if args.callgrind:
                counted = callgrind(
                    variants, api_url, emu_url, folder, tmp, args.cg_calls, args.cg_files
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
                ir = counted[what][name]
                print(f"  {name:9s} {ir / 1e6:8.3f} M  x{ir / ref_ir:.3f} of {reference}")
        if not args.rounds:
            continue
        print(f"\nclient CPU, {unit} (median of {args.rounds} rounds; ratio: per-round median)")
        ref = per[what][reference]
        for name, _ in variants:
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
