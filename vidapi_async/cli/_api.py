"""``vidapi api``: any endpoint from a terminal, printed as JSON (as ``gh api`` does).

``vidapi api /me/videos --fields id,title --paginate`` prints one JSON array of every
item; ``vidapi api -X POST /video/x1 -f title=New`` writes. Every call goes through the
client's raw calls: the same token, retries, limits and typed errors as the rest.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .. import _errors as e
from ._exit import EXIT_OK
from ._json_out import json_text

if TYPE_CHECKING:
    from .._client import Client

__all__ = ["add_api_parser", "run_api"]


def add_api_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "api",
        help="call any API path and print the JSON answer",
        description="Call any API path and print the JSON answer. The method is GET, or "
        "POST when -f is given without -X or --paginate.",
    )
    p.add_argument("path", help="a path on the API, e.g. /me/videos (API v2: /profiles/ID/videos)")
    p.add_argument(
        "-X",
        "--method",
        type=str.upper,
        choices=("GET", "POST", "PATCH", "DELETE"),
        default=None,
        help="the HTTP method (default: GET, or POST when -f is given without --paginate; "
        "PATCH: API v2 only, its -f values sent as a JSON body)",
    )
    p.add_argument(
        "-f",
        "--field",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a parameter (query for GET, form for POST); repeat for more (default: none)",
    )
    p.add_argument(
        "--fields",
        default=None,
        metavar="A,B",
        help="the fields to return (default: those the API returns unasked)",
    )
    p.add_argument(
        "--paginate", action="store_true", help="GET every page: one JSON array of every item"
    )
    p.add_argument(
        "--max-items",
        type=int,
        default=None,
        metavar="N",
        help="with --paginate: stop after N items (default: every item)",
    )


def _pairs(raw: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise e.InvalidArgumentError("-f", f"expected KEY=VALUE, got {item!r}")
        out[key] = value
    return out


async def run_api(args: argparse.Namespace, client: Client) -> int:
    values = _pairs(args.field)
    method = args.method or ("POST" if values and not args.paginate else "GET")
    fields = [f for f in args.fields.split(",") if f] if args.fields else None
    if args.paginate and method != "GET":
        raise e.UsageError("--paginate goes with GET")
    if args.max_items is not None and not args.paginate:
        raise e.UsageError("--max-items goes with --paginate")
    data: Any
    if args.paginate:
        pages = client.paginate(args.path, values, fields=fields, max_items=args.max_items)
        data = [item async for item in pages]
    elif method == "GET":
        data = await client.get(args.path, values, fields=fields)
    elif method == "POST":
        data = await client.post(args.path, values, fields=fields)
    elif method == "PATCH":
        if fields:
            raise e.UsageError("PATCH takes no --fields")
        data = await client.raw.patch(args.path, values)
    else:
        if values or fields:
            raise e.UsageError("DELETE takes no -f or --fields")
        data = await client.delete(args.path)
    print(json_text(data))
    return EXIT_OK
