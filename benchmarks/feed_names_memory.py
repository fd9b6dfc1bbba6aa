"""A hostile feed's distinct names: peak memory of reading a feed whose every element and
attribute has a name of its own (expat and pyexpat keep each distinct name for the
parser's life), against a feed of the same size with the usual few names.

    python benchmarks/feed_names_memory.py [--mib 32] [--name-length 24]

Each feed is written by the parent, then read in a fresh child through
``jobs_from_feed`` item by item (what ``vidapi batch feed.xml`` does); the child reports
its peak RSS (``ru_maxrss``) and how the reading ended (the items read, or the error).
The growth is the hostile feed's peak minus the plain one's. Issue 38's second attack
measured about 13 times the feed's size. A third feed stays within the caps at their
worst (every prefix allowed, bound to one namespace, times 900 local names: each
prefixed name is kept by expat): what the caps still allow.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

HEAD = (
    '<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">'
    "<channel><title>t</title>\n"
)
PER_ITEM = 200
"""Elements of their own per item in the hostile feed (each with an attribute)."""


def _item(n: int, extra: str) -> str:
    return (
        f"<item><guid>g{n}</guid><title>v{n}</title>"
        f'<media:content url="http://media.invalid/{n}.mp4" type="video/mp4"/>{extra}</item>\n'
    )


def write_feed(path: str, mib: int, hostile: bool, name_length: int) -> int:
    """A feed of about ``mib`` MiB: its items, each with ``PER_ITEM`` extra elements
    named uniquely (``hostile``) or all alike. The number of items."""
    target = mib << 20
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(HEAD)
        size = len(HEAD)
        while size < target:
            extra = []
            for j in range(PER_ITEM):
                tag = (
                    f"x{n}_{j}".ljust(name_length, "x") if hostile else "xx".ljust(name_length, "x")
                )
                attr = (
                    f"a{n}_{j}".ljust(name_length, "a") if hostile else "aa".ljust(name_length, "a")
                )
                extra.append(f'<{tag} {attr}="1"/>')
            item = _item(n, "".join(extra))
            f.write(item)
            size += len(item)
            n += 1
        f.write("</channel></rss>\n")
    return n


def write_prefixed(path: str, mib: int, name_length: int, locals_: int = 900) -> int:
    """A feed within the caps at their worst: ``MAX_PREFIXES`` - 1 prefixes bound on
    the channel to one namespace, and ``locals_`` local names (with one attribute name),
    the items using each prefix with each name once (expat keeps each prefixed name it
    meets), then again (nothing new), up to ``mib`` MiB. The number of items."""
    from vidapi_async.batch._feed import MAX_PREFIXES

    prefixes = MAX_PREFIXES - 1
    declared = "".join(f' xmlns:p{k}="urn:x"' for k in range(prefixes))
    attr = "a".ljust(name_length, "a")
    pairs = [(k, f"n{j}".ljust(name_length, "n")) for j in range(locals_) for k in range(prefixes)]
    target = mib << 20
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(HEAD.replace("<channel>", f"<channel{declared}>"))
        size = len(HEAD)
        while size < target:
            first = (n * PER_ITEM) % len(pairs)
            chunk = pairs[first : first + PER_ITEM]
            extra = "".join(f'<p{k}:{local} {attr}="1"/>' for k, local in chunk)
            item = _item(n, extra)
            f.write(item)
            size += len(item)
            n += 1
        f.write("</channel></rss>\n")
    return n


def child(path: str) -> None:
    from vidapi_async.batch._feed import jobs_from_feed

    items = 0
    error = None
    try:
        for _ in jobs_from_feed(path, channel="news"):
            items += 1
    except Exception as exc:  # the reading's end, reported
        error = f"{type(exc).__name__}: {exc}"[:300]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_mib": peak, "items": items, "error": error}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--name-length", type=int, default=24)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as folder:
        peaks = {}
        for hostile in (False, True, "prefixed"):
            path = os.path.join(folder, f"{hostile}.xml")
            if hostile == "prefixed":
                items = write_prefixed(path, args.mib, args.name_length)
            else:
                items = write_feed(path, args.mib, bool(hostile), args.name_length)
            size = os.path.getsize(path) / (1 << 20)
            out = subprocess.run(
                [sys.executable, __file__, "--child", path],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            got = json.loads(out.strip().splitlines()[-1])
            peaks[hostile] = got["peak_mib"]
            kind = {False: "plain   ", True: "hostile ", "prefixed": "prefixed"}[hostile]
            ended = got["error"] or f"{got['items']} items read"
            print(
                f"{kind} {size:6.1f} MiB, {items} items: peak RSS "
                f"{got['peak_mib']:7.1f} MiB; {ended}"
            )
        for name, key in (("hostile", True), ("prefixed", "prefixed")):
            growth = peaks[key] - peaks[False]
            print(f"growth of the {name} feed over the plain one: {growth:+.1f} MiB")
        print(
            f"command: python benchmarks/feed_names_memory.py --mib {args.mib} "
            f"--name-length {args.name_length}"
        )
        print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
