"""Argument types shared by the ``vidapi`` subcommands: a bad value is a usage error
(exit 2) that names the option, before anything starts."""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..batch import Quota

__all__ = [
    "add_metrics_port",
    "add_source_policy",
    "cidr",
    "existing_file",
    "host_name",
    "non_negative_number",
    "port",
    "positive_number",
    "proxy_url",
]


def port(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port: give 0 (a free one) to 65535")
    return value


def add_metrics_port(parser: argparse.ArgumentParser) -> None:
    """``--metrics-port N``, as ``vidapi batch`` and ``vidapi worker`` take it."""
    parser.add_argument(
        "--metrics-port",
        type=port,
        default=None,
        metavar="N",
        help="serve metrics in the Prometheus text format at http://127.0.0.1:N/metrics "
        "while it runs (0: a free port, named on stderr) (default: none)",
    )


def cidr(text: str) -> str:
    """A network, ``10.0.0.0/8`` or one address (``169.254.169.254``)."""
    try:
        return str(ipaddress.ip_network(text, strict=False))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a network: {text!r} (a CIDR such as 10.0.0.0/8, or one address)"
        ) from None


def add_source_policy(parser: argparse.ArgumentParser) -> None:
    """``--deny CIDR`` and ``--allow CIDR`` (repeatable): the client's ``SourcePolicy``
    for every url the command fetches (a feed, its videos, thumbnails, subtitles)."""
    parser.add_argument(
        "--deny",
        type=cidr,
        action="append",
        default=[],
        metavar="CIDR",
        help="never fetch a url (a feed, a video, a thumbnail, a subtitle) from an address "
        "in this network; repeat for more (default: none)",
    )
    parser.add_argument(
        "--allow",
        type=cidr,
        action="append",
        default=[],
        metavar="CIDR",
        help="fetch urls only from addresses in this network (--deny wins); repeat for "
        "more (default: any address, but a redirect, or a feed fetched from a public "
        "address, may not lead to a loopback, private or link-local one)",
    )


def host_name(text: str) -> str:
    """A host name (letters, digits, '-' and '.') or an IPv4 address, as it goes in a URL."""
    labels = text.split(".")
    if len(text) > 253 or not all(
        re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", label) for label in labels
    ):
        raise argparse.ArgumentTypeError(
            f"not a host name: {text!r} (letters, digits, '-' and '.', e.g. vidapi.test)"
        )
    return text


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def positive_number(text: str) -> float:
    """A finite number above zero (seconds, a rate)."""
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def quota(text: str) -> Quota:
    """``N/PERIOD`` (``15/24h``, ``3/4s``), as ``Quota.parse`` reads it."""
    from .._errors import InvalidArgumentError
    from ..batch import Quota

    try:
        return Quota.parse(text)
    except InvalidArgumentError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def add_quota(parser: argparse.ArgumentParser) -> None:
    """``--quota N/PERIOD``: creates paced to each account's quota."""
    parser.add_argument(
        "--quota",
        type=quota,
        default=None,
        metavar="N/PERIOD",
        help="each account's upload quota as a rolling window (96/24h premium, 15/24h "
        "standard, 3/4s): creates are paced to it and the batch waits for the window "
        "instead of stopping (default: the first refusal stops the batch)",
    )


def non_negative_number(text: str) -> float:
    """A finite number, zero or more (a delay, a rate that may be off)."""
    value = _finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def proxy_url(text: str) -> str:
    """``http://[user:password@]host[:port]`` (never echoed: it may hold a password)."""
    from .._protocol import Proxy  # when one is given: --help needs none

    try:
        Proxy.parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected an http://host:port address") from None
    if not text.lower().startswith("http://"):
        raise argparse.ArgumentTypeError("expected an http://host:port address")
    return text


def existing_file(text: str) -> str:
    """A path to a file that exists (checked again where it is opened)."""
    if not os.path.isfile(text):
        why = "is a directory" if os.path.isdir(text) else "no such file"
        raise argparse.ArgumentTypeError(f"{text}: {why}")
    return text
