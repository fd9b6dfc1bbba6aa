"""Client instructions per pipeline, by callgrind: deterministic whatever the load.

    python benchmarks/pipeline_instructions.py [--files 129] [--compare DIR,DIR...]
        [--server stub|emulator] [--journals memory,sqlite] [--jobs 2] [--from-start]

Runs ``pipeline_throughput.py``'s lean child (bare aiohttp, the batch's shape) and its
vidapi child (``BatchUploader``), concurrency 16, 256 KiB files, against the server in
its own process with 20 ms per request (the independent stub by default, as
``pipeline_throughput.py``'s rows), each under ``valgrind --tool=callgrind`` with 1
file and with ``--files`` files; the difference over ``files - 1`` pipelines is what
one pipeline costs in instructions (start-up and the run's fixed costs cancel out), and
``vidapi / lean`` is issue 43's per-pipeline measure (target <= 1.15). Needs valgrind.
Each DIR is a checkout whose ``vidapi_async`` the vidapi child imports instead. The
count is of every thread of the client (the upload pump's, the file reads', the
journal's), not of the server. ``--journals``: the vidapi child's journal, each in turn
(``memory``, the default, and/or ``sqlite``: an SQLite file, the command line's default).

Made to repeat (issue 43, fourth pass): each child is counted from its run's start, not
from its process's (callgrind starts with instrumentation off; the child collects and
freezes its garbage, so that no full collection walks the imports' objects at a moment
that depends on the run, then switches instrumentation on with ``callgrind_control``:
``counted_from_here``); every child has ``PYTHONHASHSEED=0``; ``--files`` is 129 by
default (the start-up no longer dominates a run, so more pipelines cost little, and the
connections the first 16 pipelines open weigh 1/8 of a pipeline, not 1/2). Two runs of
the same code then agree to about 0.5 % a pipeline. The children run ``--jobs`` at a
time (instruction counts do not depend on the load; the server's 20 ms and the order
of events still do, a little). ``--from-start``: the count of each whole process, as
recorded before the fourth pass (slow: the imports under full instrumentation).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pipeline_throughput as pt  # noqa: E402
from _checkout import checkout as a_checkout  # noqa: E402


def instructions(
    checkout: str,
    base: str,
    folder: str,
    concurrency: int,
    kind: str = "vidapi",
    journal: str = "memory",
    from_start: bool = False,
) -> int:
    env = {**os.environ, "PYTHONPATH": checkout} if checkout else dict(os.environ)
    env["PIPE_JOURNAL"] = journal
    env["PYTHONHASHSEED"] = "0"  # the same sets' order, the same hashes, in every child
    if not from_start:
        env["PIPE_COUNT"] = "1"  # counted from the run's start (counted_from_here)
    return collected(
        [sys.executable, pt.__file__, f"--child-{kind}", base, folder, str(concurrency)],
        env,
        from_start,
    )


def collected(command: list[str], env: dict[str, str], from_start: bool = True) -> int:
    """The instructions ``command`` executes under callgrind (all its threads): from its
    start, or (``from_start`` false) from where the child switches instrumentation on."""
    gate = [] if from_start else ["--instr-atstart=no"]
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *gate, *command],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed: {out.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--files", type=int, default=129, help="files in the larger run")
    parser.add_argument("--concurrency", type=int, default=16, help="pipelines at once")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds a request waits")
    parser.add_argument("--compare", default="", help="other checkouts, comma-separated")
    parser.add_argument(
        "--server", choices=("stub", "emulator"), default="stub", help="what answers the clients"
    )
    parser.add_argument("--journals", default="memory", help="memory, sqlite or both")
    parser.add_argument("--jobs", type=int, default=2, help="children under callgrind at once")
    parser.add_argument(
        "--from-start",
        action="store_true",
        help="count each child from its start (imports included, as before issue 43's "
        "fourth pass: slow under callgrind), not from its run's start",
    )
    args = parser.parse_args()
    if args.files < 2:
        parser.error("--files: at least 2 (the cost is the difference over files - 1)")
    try:
        checkouts = ["", *[a_checkout(c) for c in args.compare.split(",") if c]]
    except argparse.ArgumentTypeError as exc:
        parser.error(f"--compare: {exc}")
    with tempfile.TemporaryDirectory(prefix="vidapi-bench-") as tmp:
        for count in (1, args.files):
            pt.make_files(os.path.join(tmp, f"files{count}"), count, 256 * 1024)
        emulator, base = pt.start_emulator(tmp, args.latency, args.server)
        try:
            per: dict[str, float] = {}
            runs = [("lean", "", "memory", "lean (bare aiohttp)")]
            runs += [
                ("vidapi", c, j, f"{c or 'vidapi (this checkout)'} [{j}]")
                for j in args.journals.split(",")
                for c in checkouts
            ]

            def count(run: tuple[str, str, str, str], files: int) -> int:
                kind, checkout, journal, _ = run
                folder = os.path.join(tmp, f"files{files}")
                return instructions(
                    checkout, base, folder, args.concurrency, kind, journal, args.from_start
                )

            # every child at once, --jobs at a time (counts do not depend on the load);
            # the small and the large run of a row side by side
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                counts = {
                    (run[3], files): pool.submit(count, run, files)
                    for run in runs
                    for files in (1, args.files)
                }
                for run in runs:
                    label = run[3]
                    one, many = counts[label, 1].result(), counts[label, args.files].result()
                    per[label] = (many - one) / (args.files - 1) / 1e6
                    print(
                        f"{label:36s} 1 file {one / 1e6:8.1f} M, {args.files} files "
                        f"{many / 1e6:8.1f} M: {per[label]:6.3f} M instructions per pipeline",
                        flush=True,
                    )
            lean = per["lean (bare aiohttp)"]
            for label, value in per.items():
                if label != "lean (bare aiohttp)":
                    print(f"{label}: x{value / lean:.2f} the lean client's (target <= 1.15)")
        finally:
            emulator.terminate()
            emulator.wait()
    print(f"command: python benchmarks/pipeline_instructions.py {' '.join(sys.argv[1:])}")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
