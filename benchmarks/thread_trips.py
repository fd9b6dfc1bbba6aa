"""Thread trips and context switches per pipeline: what an instruction count does not see.

    python benchmarks/thread_trips.py [--files 1000] [--size-kib 64] [--rounds 3]
        [--server-cpu-ms 0.6] [--compare DIR] [--strace]

callgrind runs a process's threads one at a time and counts user-space instructions:
the cost of handing work to a thread and back (the GIL, futex wake-ups, the loop's
self-pipe) is not in it, and CPU time per pipeline showed it (issue 43, fourth pass).
This runs ``pipeline_throughput.py``'s lean child and vidapi child (and, with
``--compare``, the vidapi child on another checkout's package), alternating, against the
same stub (20 ms per request, ``--server-cpu-ms`` of CPU a pipeline), each with its
thread trips counted by wrapping, in the child only, what hands work to another thread:

- ``to_thread``/``run_in_executor`` calls (by the calling function),
- ``ThreadPool.submit`` (the upload pump's pool) and the journal worker's ``submit``,
- ``call_soon_threadsafe`` calls made from a thread other than the loop's (each wakes
  the loop through its self-pipe when it sleeps), by the calling function,

and printed per pipeline beside the process's voluntary and involuntary context switches
(``getrusage``) and CPU over the timed part, and the voluntary switches of each thread
(``/proc/self/task``, by the thread's name). ``--strace``: one more run of each child
under ``strace -c -f`` (the syscalls per pipeline; the run itself is slowed).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pipeline_throughput as pt  # noqa: E402
from _checkout import checkout as a_checkout  # noqa: E402

trips: collections.Counter[str] = collections.Counter()
wakes: collections.Counter[str] = collections.Counter()
_loop_thread = [0]
_at_start: dict[str, object] = {}
_from_to_thread: list[bool] = []


def _caller(depth: int) -> str:
    """The first frame outside asyncio/concurrent/threading/this file, as ``module.func``."""
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if not re.search(r"(asyncio|concurrent|threading|thread_trips)", name):
            module = os.path.splitext(os.path.basename(name))[0]
            return f"{module}.{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _per_thread() -> dict[str, int]:
    """Voluntary context switches of each live thread, by name (numbers dropped)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: collections.Counter[str] = collections.Counter()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                status = f.read()
        except OSError:
            continue
        vol = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))  # type: ignore[union-attr]
        name = names.get(int(tid), f"tid{tid}")
        out[re.sub(r"[_-]?\d+$", "", name.replace("(to_thread)", "")) or name] += vol
    return dict(out)


def _usage() -> dict[str, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return {"vol": r.ru_nvcsw, "invol": r.ru_nivcsw, "cpu": r.ru_utime + r.ru_stime}


def install() -> None:
    """Wrap what hands work to a thread; start and end the count at the run's marks."""
    import asyncio

    real_to_thread = asyncio.to_thread

    async def to_thread(func, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        trips[f"to_thread {_caller(2)} -> {getattr(func, '__qualname__', func)}"] += 1
        _from_to_thread.append(True)  # its run_in_executor runs before the first await
        return await real_to_thread(func, *args, **kwargs)

    asyncio.to_thread = to_thread  # type: ignore[assignment]
    base = asyncio.BaseEventLoop
    real_executor = base.run_in_executor
    real_threadsafe = base.call_soon_threadsafe

    def run_in_executor(self, executor, func, *args):  # type: ignore[no-untyped-def]
        if not _from_to_thread:
            trips[f"run_in_executor {_caller(2)} -> {getattr(func, '__qualname__', func)}"] += 1
        _from_to_thread.clear()  # (one of to_thread's: counted there)
        return real_executor(self, executor, func, *args)

    def call_soon_threadsafe(self, callback, *args, context=None):  # type: ignore[no-untyped-def]
        if threading.get_ident() != _loop_thread[0]:
            wakes[f"{_caller(2)} -> {getattr(callback, '__qualname__', callback)}"] += 1
        return real_threadsafe(self, callback, *args, context=context)

    base.run_in_executor = run_in_executor  # type: ignore[method-assign]
    base.call_soon_threadsafe = call_soon_threadsafe  # type: ignore[method-assign]

    real_mark = pt.mark

    def mark(job: str, event: str) -> None:
        real_mark(job, event)
        if job != "run":
            return
        if event == "start":
            _loop_thread[0] = threading.get_ident()
            trips.clear()
            wakes.clear()
            _at_start.update(usage=_usage(), threads=_per_thread())
        elif event == "end":
            _at_start.update(end_usage=_usage(), end_threads=_per_thread())

    pt.mark = mark


def install_vidapi() -> None:
    """The library's own pools (imported only in the vidapi child)."""
    from vidapi_async._aio import _threads

    real_submit = _threads.ThreadPool.submit

    def submit(self, fn):  # type: ignore[no-untyped-def]
        trips[f"ThreadPool.submit ({self._name}) {_caller(2)}"] += 1
        return real_submit(self, fn)

    _threads.ThreadPool.submit = submit  # type: ignore[method-assign]
    try:
        from vidapi_async.batch import _journal
    except ImportError:
        return
    worker = getattr(_journal, "_Worker", None)
    if worker is not None:
        real = worker.submit

        def journal_submit(self, fn, *args):  # type: ignore[no-untyped-def]
            trips[f"journal worker {_caller(2)} -> {getattr(fn, '__qualname__', fn)}"] += 1
            return real(self, fn, *args)

        worker.submit = journal_submit


def child(kind: str, base: str, folder: str, concurrency: int) -> None:
    install()
    if kind == "vidapi":
        install_vidapi()
    real_report = pt.report

    def report(elapsed: float, count: int, cpu: float = 0.0) -> None:
        u0, u1 = _at_start["usage"], _at_start["end_usage"]
        t0, t1 = _at_start["threads"], _at_start["end_threads"]
        threads = {k: v - t0.get(k, 0) for k, v in t1.items()}  # type: ignore[union-attr]
        print(
            json.dumps(
                {
                    "count": count,
                    "seconds": elapsed,
                    "cpu": cpu,
                    "vol": u1["vol"] - u0["vol"],  # type: ignore[index]
                    "invol": u1["invol"] - u0["invol"],  # type: ignore[index]
                    "threads": threads,
                    "trips": dict(trips),
                    "wakes": dict(wakes),
                }
            )
        )

    pt.report = report
    runner = pt.child_lean if kind == "lean" else pt.child_vidapi
    runner(base, folder, concurrency)
    del real_report


def run_child(kind: str, base: str, folder: str, env: dict[str, str], strace: str = "") -> dict:  # type: ignore[type-arg]
    argv = [sys.executable, __file__, "--child", kind, base, folder, "16"]
    if strace:
        argv = ["strace", "-c", "-f", "-o", strace, *argv]
    out = subprocess.run(
        argv, capture_output=True, text=True, env={**os.environ, **env}, timeout=3600
    )
    if out.returncode != 0:
        raise SystemExit(f"child {kind} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def show(name: str, got: dict) -> None:  # type: ignore[type-arg]
    n = got["count"]
    print(
        f"  {name:16} cpu {got['cpu'] / n * 1000:5.2f} ms/pipeline  "
        f"vol ctxsw {got['vol'] / n:5.1f}  invol {got['invol'] / n:4.1f}  "
        f"({n / got['seconds']:.0f}/s)"
    )
    for what, per in (("trips", got["trips"]), ("wakes of the loop", got["wakes"])):
        total = sum(per.values())
        print(f"    {what}: {total / n:.2f} per pipeline")
        for k, v in sorted(per.items(), key=lambda kv: -kv[1]):
            if v / n >= 0.01:
                print(f"      {v / n:6.2f}  {k}")
    print(
        "    voluntary switches by thread: "
        + ", ".join(
            f"{k} {v / n:.1f}" for k, v in sorted(got["threads"].items(), key=lambda kv: -kv[1])
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--files", type=int, default=1000, help="files each child uploads")
    parser.add_argument("--size-kib", type=int, default=64, help="each file's size")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each child once a round")
    parser.add_argument(
        "--server-cpu-ms", type=float, default=0.6, help="CPU the stub spends a pipeline"
    )
    parser.add_argument(
        "--compare",
        type=a_checkout,
        default=None,
        metavar="DIR",
        help="another checkout's child too",
    )
    parser.add_argument(
        "--strace", action="store_true", help="count each child's system calls (strace -c -f)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "files")
        pt.make_files(folder, args.files, args.size_kib * 1024)
        os.environ["STUB_CPU_MS"] = str(args.server_cpu_ms)
        server, base = pt.start_emulator(tmp, 0.02, "stub")
        rows: list[tuple[str, str, dict[str, str]]] = [
            ("lean", "lean", {}),
            ("vidapi", "vidapi", {}),
        ]
        if args.compare:
            rows.append(("compare", "vidapi", {"PYTHONPATH": args.compare}))
        print(
            f"{args.files} files of {args.size_kib} KiB, concurrency 16, stub with 20 ms and "
            f"{args.server_cpu_ms} ms of CPU a pipeline, {args.rounds} rounds alternating"
        )
        try:
            for r in range(args.rounds):
                print(f"round {r + 1}:")
                shift = r % len(rows)
                for name, kind, env in rows[shift:] + rows[:shift]:
                    show(name, run_child(kind, base, folder, env))
            if args.strace:
                for name, kind, env in rows:
                    log = os.path.join(tmp, f"strace-{name}")
                    got = run_child(kind, base, folder, env, strace=log)
                    print(f"strace -c -f, {name} (the whole process, imports included):")
                    with open(log) as f:
                        lines = f.read().splitlines()
                    for line in lines[2:]:
                        parts = line.split()
                        if (
                            len(parts) >= 5
                            and parts[3].isdigit()
                            and int(parts[3]) >= got["count"] // 10
                        ):
                            print(f"    {int(parts[3]) / got['count']:7.2f}  {parts[-1]}")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        main()
