"""``vidapi serve``: the emulator as a standalone server until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import signal
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .._errors import InvalidArgumentError, UsageError
from ..emulator import Emulator, Faults
from ._progress import output_console

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["exports", "serve", "stops_on_sigterm", "v2_exports"]


def exports(emu: Emulator) -> list[tuple[str, str]]:
    """The variables the banner tells a user to export for the ``vidapi`` command and the
    Quickstart (legacy API)."""
    return [
        ("VIDAPI_BASE_URL", emu.base_url),
        ("VIDAPI_TOKEN", emu.token),
        ("VIDAPI_EMBED_URL", emu.embed_url),
    ]


def v2_exports(emu: Emulator) -> list[tuple[str, str]]:
    """The banner's API v2 line, in place of the first of ``exports``: v2's root."""
    return [("VIDAPI_BASE_URL", emu.v2_base_url)]


@contextlib.asynccontextmanager
async def stops_on_sigterm(console: Console) -> AsyncIterator[None]:
    """SIGTERM (a process manager's stop) anywhere in the block stops it as Ctrl-C does:
    the running task is cancelled, so that what the block opened closes (the emulator,
    its folder and a TLS key in it) and "stopped" is said; the command then ends with 0.
    A SIGTERM while the block stops (a second one, or one after Ctrl-C) is ignored: the
    close under way finishes."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    asked: list[bool] = []

    def on_term() -> None:
        if not asked and not task.cancelling():
            asked.append(True)
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, on_term)
    try:
        yield
    except asyncio.CancelledError:
        if not asked:
            raise
        task.uncancel()
        console.print("stopped")
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


async def serve(args: argparse.Namespace, console: Console) -> None:
    async with stops_on_sigterm(console):
        await _serve(args, console)


async def _serve(args: argparse.Namespace, console: Console) -> None:
    faults = Faults(
        error_rate=args.error_rate,
        rate_limit_rate=args.rate_limit_rate,
        latency=args.latency,
        reset_rate=args.reset_rate,
        videos_per_day=args.videos_per_day,
        seed=args.seed,
    )
    if args.quota is not None:  # N/PERIOD: checked by the option's type
        faults.videos_per_day, faults.quota_period = args.quota.videos, args.quota.period
    upload_port = args.upload_port
    if upload_port is None:  # next to the API's, or (--port 0) a free one of its own
        upload_port = args.port + 1 if args.port else 0
        if upload_port > 65535:
            raise InvalidArgumentError(
                "--upload-port", f"--port {args.port} leaves no port + 1 for uploads: give one"
            )
    if (args.tls_cert is None) != (args.tls_key is None):
        raise InvalidArgumentError("--tls-cert/--tls-key", "give both, or neither")
    emulator = Emulator(
        host=args.host,
        public_host=args.public_host,
        port=args.port,
        upload_port=upload_port,
        data_dir=args.data_dir,
        faults=faults,
        tls=args.tls,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        control_secret=args.control_secret,
        encoding_delay=args.encoding_delay,
        escaped_seals=not args.plain_seals,
    )
    try:
        await emulator.start()  # closes what it opened if it fails
    except (OSError, RuntimeError, ValueError) as exc:
        raise UsageError(f"cannot start the emulator: {exc}") from None
    try:
        emu = emulator
        out = output_console()  # the addresses and the token: the command's output
        out.print(f"API:      {emu.base_url}", highlight=False)
        out.print(f"Uploads:  {emu.upload_base}", highlight=False)
        out.print(f"Token:    {emu.token}   (user demo; other-token: user other)")
        out.print(
            f"API v2:   {emu.v2_base_url}   (API key demo-api-key, secret demo-api-secret: "
            "Client(api='v2', base_url=...), vidapi --api v2 login --client-id demo-api-key)",
            highlight=False,
            soft_wrap=True,
        )
        out.print(f"Control:  X-Emulator-Control: {emu.control_secret}", highlight=False)
        if emu.ca_file:
            out.print(f"CA file:  {emu.ca_file}   (trust it: SSL_CERT_FILE or ssl=)")
        out.print("\nFor the vidapi command and the Quickstart, in another shell:")
        for name, value in exports(emu):
            out.print(f"export {name}={shlex.quote(value)}", highlight=False, soft_wrap=True)
        # a comment: the block pasted whole keeps the legacy root
        out.print("# For API v2 (Client(api='v2'), the demo API key), in place of the first:")
        for name, value in v2_exports(emu):
            out.print(f"# export {name}={shlex.quote(value)}", highlight=False, soft_wrap=True)
        console.print("Ctrl-C to stop.")
        await asyncio.Event().wait()
    finally:
        await emulator.close()
