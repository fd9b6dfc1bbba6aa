"""Where a ``get_video``'s own instructions go: each piece counted alone, under callgrind.

    valgrind --tool=callgrind --callgrind-out-file=DIR/out python benchmarks/call_parts.py
    python benchmarks/call_parts.py --read DIR

(or ``python benchmarks/call_parts.py --run``, which does both in a temporary folder.)

``call_cpu.py --instructions`` counts a whole call, aiohttp included, against bare
aiohttp. This script splits the client's own part: one process makes a client whose
transport's ``send`` is stubbed (it returns the benchmark's answer at once: no socket,
no aiohttp), then runs each piece of a ``get_video`` N times and 2N times in a row,
asking callgrind to dump its counters between runs (``callgrind_control --dump``); the
instructions of the N extra repetitions over N are the piece's marginal cost. The
pieces: building the request (``Videos.get``'s checks, then ``Legacy.video_request``:
query, ``Request``), its headers and body, decoding the answer (``decode_api_response``),
structuring the ``Video``, making the ``RawResponse``; then the layers as coroutines: the stubbed
``send``, ``call_once``, ``call`` (with the retry loop) and the whole ``get_video``
(operation wrapper included). ``json.loads`` of the same bytes (and of the text) is the
reference for the decoding: what bare aiohttp's ``resp.json()`` does.

Python's own frames are invisible to callgrind (3.11 has no perf trampolines), hence
pieces timed one at a time rather than a call graph.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

from call_cpu import FIELDS  # benchmarks/ is sys.path[0]
from call_cpu import VIDEO_BODY as BODY

PIECES = (
    "empty",
    "video_request",
    "headers",
    "decode",
    "structure",
    "rawresp",
    "json_loads_bytes",
    "json_loads_text",
    "async_empty",
    "send_stubbed",
    "call_once",
    "call",
    "get_video",
)


def dump(label: str) -> None:
    subprocess.run(
        ["callgrind_control", "-d", label, str(os.getpid())],
        stdout=subprocess.DEVNULL,
        check=True,
    )


async def pieces(n: int) -> None:
    from multidict import CIMultiDict, CIMultiDictProxy

    import vidapi_async as va
    from vidapi_async import _validate as check
    from vidapi_async._aio._response import RawResponse
    from vidapi_async._aio._transport import api_timeout
    from vidapi_async._convert import structure
    from vidapi_async._models import Video

    headers = CIMultiDictProxy(
        CIMultiDict({"Content-Type": "application/json", "Content-Length": str(len(BODY))})
    )
    async with va.Client(access_token="demo-token", base_url="http://127.0.0.1:1") as client:
        requester = client._requester
        transport = requester.transport

        async def send(method: str, url: str, **kw: Any) -> RawResponse:
            return RawResponse(200, headers, BODY)

        transport.send = send  # type: ignore[method-assign]
        dialect = client._dialect
        names = ",".join(FIELDS)

        def video_request() -> Any:
            # what Videos.get does before sending: the checks, then the dialect's request
            check.fields_value(FIELDS)
            check.video_id("x8abc12")
            return dialect.video_request(requester, "x8abc12", names, None)

        request = video_request()
        decode = requester._decode  # the dialect's decode (Legacy: decode_api_response)
        data = decode(request, 200, headers, BODY, secrets=("demo-token",))
        text = BODY.decode()
        sync: dict[str, Callable[[], object]] = {
            "empty": lambda: None,
            "video_request": video_request,
            "headers": lambda: (
                request.headers("demo-token", requester.origin),
                request.payload(),
                api_timeout(requester.timeouts),
            ),
            "decode": lambda: decode(request, 200, headers, BODY, secrets=("demo-token",)),
            "structure": lambda: structure(
                {"id": "x8abc12", **dialect.video_from(data)}, Video, what=request.what
            ),
            "rawresp": lambda: RawResponse(200, headers, BODY),
            "json_loads_bytes": lambda: json.loads(BODY),
            "json_loads_text": lambda: json.loads(text),
        }

        async def nothing() -> None:
            pass

        calls: dict[str, Callable[[], Awaitable[object]]] = {
            "async_empty": nothing,
            "send_stubbed": lambda: transport.send(
                "GET", request.url, headers={}, data=None, timeout=None
            ),
            "call_once": lambda: requester.call_once(request),
            "call": lambda: requester.call(request),
            "get_video": lambda: client.get_video("x8abc12", fields=FIELDS),
        }
        for f in sync.values():
            for _ in range(100):
                f()
        for g in calls.values():
            for _ in range(100):
                await g()
        gc.collect()
        gc.freeze()  # the imports' and warm-up's objects: not scanned by the counted runs
        dump("start")
        for name, f in sync.items():
            for rounds, tag in ((n, "1"), (2 * n, "2")):
                for _ in range(rounds):
                    f()
                dump(f"{name}__{tag}")
        for name, g in calls.items():
            for rounds, tag in ((n, "1"), (2 * n, "2")):
                for _ in range(rounds):
                    await g()
                dump(f"{name}__{tag}")


def read(folder: str, n: int) -> None:
    totals: dict[str, int] = {}
    for path in glob.glob(os.path.join(folder, "out.*")):
        with open(path) as f:
            text = f.read()
        trigger = re.search(r"^desc: Trigger: dump (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if trigger and total:
            totals[trigger.group(1).strip()] = int(total.group(1))
    for name in PIECES:
        if f"{name}__1" in totals and f"{name}__2" in totals:
            per = (totals[f"{name}__2"] - totals[f"{name}__1"]) / n
            print(f"  {name:20} {per:10,.0f} instructions")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="repetitions N (and 2N)")
    parser.add_argument("--read", metavar="DIR", help="print the pieces from DIR's dumps")
    parser.add_argument("--run", action="store_true", help="run under callgrind, then read")
    args = parser.parse_args()
    if args.read:
        read(args.read, args.n)
    elif args.run:
        if shutil.which("valgrind") is None:
            sys.exit("needs valgrind (scripts/install-bench-deps)")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [
                    "valgrind",
                    "--tool=callgrind",
                    f"--callgrind-out-file={tmp}/out",
                    sys.executable,
                    __file__,
                    "--n",
                    str(args.n),
                ],
                check=True,
                capture_output=True,
                env={**os.environ, "PYTHONHASHSEED": "0"},  # the same dicts every run
            )
            print(f"marginal instructions per piece of a get_video (N = {args.n}):")
            read(tmp, args.n)
        print(f"command: python benchmarks/call_parts.py --run --n {args.n}")
    else:
        asyncio.run(pieces(args.n))


if __name__ == "__main__":
    main()
