"""``vidapi batch`` keeps nothing of a job once it is said (issue 38 #8: every result
was kept for the summary, a failed one with its traceback: 1.4 GiB at 80,000 rows).
Measured with tracemalloc in a child process (no log capture keeping records): what the
command holds, its garbage collected, after 50 and after 450 results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = """
import contextlib, gc, json, sys, tracemalloc
from vidapi_async.batch import BatchUploader
from vidapi_async.cli._main import main

held = []
run = BatchUploader.run

async def watched(self, jobs, **kwargs):
    # what the command holds, its garbage collected, every 50 results it was given
    async for n, result in aenumerate(run(self, jobs, **kwargs)):
        yield result
        if n % 50 == 49:
            gc.collect()
            held.append(tracemalloc.get_traced_memory()[0])

async def aenumerate(results):
    n = 0
    async for result in results:
        yield n, result
        n += 1

BatchUploader.run = watched

def peak(rows, extra):
    manifest = f"m{rows}.csv"
    with open(manifest, "w", encoding="utf-8") as f:
        f.write("path,title,channel\\n")
        for i in range(rows):
            f.write(f"gone/v{i}.mp4,Video {i},news\\n")  # missing: each fails at once
    # the output to files, not to memory
    with open(f"out{rows}", "w") as out, open(f"err{rows}", "w") as err:
        tracemalloc.start()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["batch", manifest, "--journal", f"j{rows}.sqlite", *extra])
        tracemalloc.stop()
    said = open(f"out{rows}").read() + open(f"err{rows}").read()
    assert code == 6, (code, said[-2000:])  # every job failed
    last = held[-1] if held else 0
    held.clear()
    return last, f"v{rows - 1}.mp4" in said

extra = sys.argv[1:]
peak(5, extra)  # what the first run imports and caches aside
print(json.dumps([peak(50, extra), peak(450, extra)]))
"""


@pytest.mark.system  # slow by design: 505 batch jobs run under tracemalloc, 5 to 7 s of CPU
@pytest.mark.parametrize("extra", [(), ("--json",)])
def test_the_summary_grows_with_nothing_but_its_counts(
    tmp_path: Path, extra: tuple[str, ...]
) -> None:
    env = {**os.environ, "VIDAPI_TOKEN": "t0ken", "VIDAPI_BASE_URL": "http://127.0.0.1:9"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *extra],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (small, _), (large, said) = json.loads(done.stdout.splitlines()[-1])
    assert said  # each failure said
    # a kept failed result costs kilobytes (its error, its traceback's frames)
    assert large - small < 400 * 1024, f"{(large - small) / 400:.0f} bytes more per job"
