"""What a start costs: ``import vidapi_async`` and ``vidapi --help`` beside ``import aiohttp``.

    python benchmarks/startup.py [--runs 20] [--instructions] [--compare DIR]

Each row is a fresh interpreter (``sys.executable``, site and this virtualenv's path
hooks included) running one thing: nothing (``pass``: the interpreter's own start),
``import aiohttp`` (the reference: the issue's target is to cost less), ``import
vidapi_async``, ``import vidapi_async`` then ``Client`` (what a program that makes a
client pays), and the command's ``vidapi --help`` (``from vidapi_async.cli import main;
main(["--help"])``, what the ``vidapi`` script runs). The rows alternate, ``--runs``
rounds, and the wall time of each run (``time.perf_counter`` around ``subprocess.run``)
is summarised by its median: on this shared 2-core machine absolute times move with the
load, the ratios within a run less.

``--instructions`` also runs each row once under ``valgrind --tool=callgrind`` and prints
the instructions it executed, whatever the load (the interpreter's start included: the
``pass`` row is that floor). ``perf stat -e instructions`` would be quicker, but the
machines these were recorded on are virtual and expose no instruction counter.

``--compare DIR`` adds the vidapi rows run from another checkout (``PYTHONPATH=DIR``).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

from _checkout import checkout  # benchmarks/_checkout.py (sys.path[0] is this folder)
from pipeline_instructions import collected

ROWS = {
    "python (nothing)": "pass",
    "import aiohttp": "import aiohttp",
    "import vidapi_async": "import vidapi_async",
    "vidapi_async.Client": "import vidapi_async; vidapi_async.Client",
    "vidapi --help": (
        "import sys, contextlib, io\n"
        "from vidapi_async.cli import main\n"
        "sys.argv[0] = 'vidapi'\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
    ),
}
OURS = ("import vidapi_async", "vidapi_async.Client", "vidapi --help")


def _env(compare: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if compare is not None:
        env["PYTHONPATH"] = compare
    return env


def wall(code: str, env: dict[str, str]) -> float:
    # -P: the current folder (a checkout) does not come first on the path, PYTHONPATH does
    start = time.perf_counter()
    subprocess.run([sys.executable, "-P", "-c", code], check=True, env=env)
    return time.perf_counter() - start


def instructions(code: str, env: dict[str, str]) -> int:
    # -P: as in wall()
    return collected([sys.executable, "-P", "-c", code], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="rounds (default 20)")
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions (callgrind)"
    )
    parser.add_argument("--compare", metavar="DIR", type=checkout, help="another checkout")
    args = parser.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind (scripts/install-bench-deps)")
    rows: list[tuple[str, str, str | None]] = [(name, code, None) for name, code in ROWS.items()]
    if args.compare:
        rows += [(f"{name} (compare)", ROWS[name], args.compare) for name in OURS]
    envs = {compare: _env(compare) for _, _, compare in rows}
    for _, code, compare in rows:  # warm the page cache and the bytecode caches
        wall(code, envs[compare])
    times: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    for r in range(args.runs):
        order = rows if r % 2 == 0 else rows[::-1]
        for name, code, compare in order:
            times[name].append(wall(code, envs[compare]))
    counts = (
        {name: instructions(code, envs[compare]) for name, code, compare in rows}
        if args.instructions
        else {}
    )
    aiohttp = statistics.median(times["import aiohttp"])
    floor = statistics.median(times["python (nothing)"])
    print(f"fresh interpreters, {args.runs} alternating rounds: median wall time")
    for name, _, _ in rows:
        median = statistics.median(times[name])
        line = (
            f"  {name:32} {median * 1e3:7.1f} ms  (over the bare interpreter "
            f"{(median - floor) * 1e3:6.1f} ms; x{median / aiohttp:.2f} of import aiohttp)"
        )
        if counts:
            over = counts[name] - counts["python (nothing)"]
            line += f"  {counts[name] / 1e6:7.1f} M instructions ({over / 1e6:+7.1f} M)"
        print(line)
    print()
    print(
        "command: python benchmarks/startup.py "
        f"--runs {args.runs}"
        + (" --instructions" if args.instructions else "")
        + (f" --compare {args.compare}" if args.compare else "")
    )
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
