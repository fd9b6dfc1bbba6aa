"""``vidapi serve``: the emulator as a standalone server until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from . import Emulator, Faults

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["serve"]


async def serve(args: argparse.Namespace, console: Console) -> None:
    faults = Faults(
        error_rate=args.error_rate,
        rate_limit_rate=args.rate_limit_rate,
        latency=args.latency,
        reset_rate=args.reset_rate,
        videos_per_day=args.videos_per_day,
        seed=args.seed,
    )
    upload_port = args.upload_port if args.upload_port is not None else args.port + 1
    async with Emulator(
        host=args.host,
        port=args.port,
        upload_port=upload_port,
        data_dir=args.data_dir,
        faults=faults,
    ) as emu:
        console.print(f"API:     {emu.base_url}")
        console.print(f"Uploads: {emu.upload_base}")
        console.print(f"Token:   {emu.token}   (the emulator's public demo token)")
        console.print("Ctrl-C to stop.")
        await asyncio.Event().wait()
