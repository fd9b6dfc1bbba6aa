"""Argument types shared by the ``vidapi`` subcommands: a bad value is a usage error
(exit 2) that names the option, before anything starts."""

from __future__ import annotations

import argparse
import math
import os
import re

__all__ = [
    "add_metrics_port",
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
