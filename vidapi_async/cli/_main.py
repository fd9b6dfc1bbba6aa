"""The ``vidapi`` command. Needs the ``cli`` extra (rich) for its progress bars.

Exit codes: 0 done, 2 usage error (bad flags or arguments), 3 the API refused,
4 the network failed, 5 the upload failed, 6 some batch jobs failed, 1 anything else;
141 (128 + SIGPIPE) when the reader of its output went away (``| head``): quietly.
Messages never show a token or a password: neither is ever put into one.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import importlib.util
import logging
import os
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import _errors as e
from ._api import add_api_parser, run_api
from ._args import existing_file, host_name, non_negative_number, port, proxy_url, quota
from ._batch import add_parser as add_batch_parser
from ._defaults import DEFAULT_BASE_URL, DIALECTS, V2_BASE_URL
from ._exit import EXIT_BROKEN_PIPE, EXIT_OK, EXIT_OTHER, EXIT_USAGE, INSTALL_HINT, exit_code
from ._json_out import json_text
from ._login import (
    add_login_parsers,
    note_token_over_kept_login,
    run_login,
    run_logout,
    stored_client,
)
from ._progress import upload_with_bar, wait_with_bar
from ._shared import add_shared_parsers, is_shared, run_shared_batch, run_status, run_worker

if TYPE_CHECKING:
    from rich.console import Console

    from .._client import Client

__all__ = ["main"]

cli_log = logging.getLogger("vidapi_async.cli")
"""The command's own lines in JSON mode (``--log-format json``): its error, a stop."""


CLIENT_OPTIONS = ("token", "base_url", "api", "retries", "proxy")
"""The options of a command that calls the API (a client is made from them)."""
USES: dict[str, tuple[str, ...]] = {
    "upload": (*CLIENT_OPTIONS, "json"),
    "video": (*CLIENT_OPTIONS, "json"),
    "password": (*CLIENT_OPTIONS, "json"),
    "api": CLIENT_OPTIONS,
    "batch": (*CLIENT_OPTIONS, "json"),
    "worker": CLIENT_OPTIONS,
    "login": ("base_url", "api", "proxy"),
    "status": ("json",),
}
"""The shared options each command uses (besides ``-v``); a command not named (serve,
demo, embed, logout) uses none: its ``--help`` offers none of them."""


def _shared_options(p: argparse.ArgumentParser, names: Sequence[str], *, defaults: bool) -> None:
    """``-v`` and the shared options ``names``, as the top level and the commands take
    them (before or after the command's name). On a command their default is "not
    given" (``SUPPRESS``), so the top level's value stands."""

    def default(value: Any) -> Any:
        return value if defaults else argparse.SUPPRESS

    if "token" in names:
        p.add_argument(
            "--token",
            default=default(os.environ.get("VIDAPI_TOKEN")),
            help="access token, for scripts; prefer $VIDAPI_TOKEN or 'vidapi login' (a "
            "command line is visible to other local users) (default: $VIDAPI_TOKEN, else "
            "the kept login)",
        )
    if "base_url" in names:
        p.add_argument(
            "--base-url",
            default=default(os.environ.get("VIDAPI_BASE_URL")),
            help="API base URL (default: $VIDAPI_BASE_URL or the platform's root for --api: "
            f"{DEFAULT_BASE_URL}, or {V2_BASE_URL} for v2)",
        )
    if "api" in names:
        p.add_argument(
            "--api",
            choices=DIALECTS,
            default=default(None),
            help="the platform's API dialect to speak: legacy, or v2 (the platform's "
            "recommended API; tokens from an API key) (default: $VIDAPI_API, else legacy)",
        )
    if "json" in names:
        p.add_argument(
            "--json",
            action="store_true",
            default=default(False),
            help="print results as JSON (default: text)",
        )
    if "retries" in names:
        p.add_argument(
            "--retries",
            type=int,
            default=default(4),
            metavar="N",
            help="attempts per request, the first included (default 4; 1: never retry)",
        )
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default(0),
        help="log to stderr: -v what happens (INFO), -vv every request (DEBUG); "
        "or set VIDAPI_LOG=info|debug (default: warnings only)",
    )
    if "proxy" in names:
        p.add_argument(
            "--proxy",
            type=proxy_url,
            default=default(None),
            metavar="URL",
            help="http://[user:password@]host:port for every request (default: $HTTPS_PROXY)",
        )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vidapi", description="Video platform client and emulator.")
    p.add_argument("--version", action=_VersionAction, help="print it")
    _shared_options(p, ("token", "base_url", "api", "json", "retries", "proxy"), defaults=True)
    sub = p.add_subparsers(dest="command", required=True)
    add_login_parsers(sub)
    add_shared_parsers(sub)
    _add_upload_parser(sub)
    _add_video_parsers(sub)
    _add_embed_parser(sub)
    add_batch_parser(sub)
    add_api_parser(sub)
    _emulator_flags(sub.add_parser("serve", help="run the local emulator"))
    _add_demo_parser(sub)
    for name, command in sub.choices.items():
        _shared_options(command, USES.get(name, ()), defaults=False)
    return p


def _add_upload_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    up = sub.add_parser("upload", help="upload a file and create the video")
    up.add_argument("file", help="the video file to upload")
    up.add_argument("--title", required=True, help="the video's title")
    up.add_argument("--channel", required=True, help="category slug, e.g. news")
    up.add_argument(
        "--unpublished", action="store_true", help="create it unpublished (default: published)"
    )
    up.add_argument(
        "--password",
        "--password-stdin",
        dest="password",
        action="store_true",
        help="protect the video with a password, prompted for (or read from standard "
        "input): never a command-line value, which ps would show",
    )
    up.add_argument(
        "--subtitle",
        action="append",
        default=[],
        metavar="LANG=FILE.srt",
        help="attach an SRT subtitle in language LANG; repeat for more (default: none)",
    )
    up.add_argument(
        "--chunked",
        action="store_true",
        help="the chunked, parallel protocol (default: for files of 64 MiB or more)",
    )
    up.add_argument(
        "--wait-ready",
        action="store_true",
        help="wait (with a bar) until the platform has encoded the video",
    )
    up.add_argument(
        "--workers", type=int, default=4, help="ranges in flight with --chunked (default 4)"
    )


def _add_video_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    vid = sub.add_parser("video", help="read a video's fields")
    vid.add_argument("id", help="the video's id, e.g. x7tgad0")
    vid.add_argument(
        "--fields",
        default="id,title,channel,owner,published,mode,password_protected",
        metavar="A,B",
        help="the fields to read, comma-separated (default: %(default)s)",
    )

    pw = sub.add_parser("password", help="set (prompted or from stdin) or remove a password")
    pw.add_argument("id", help="the video's id")
    pw.add_argument("--remove", action="store_true", help="remove the password (default: set one)")


def _add_embed_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    em = sub.add_parser("embed", help="print embed code")
    em.add_argument("id", help="the video's id")
    em.add_argument("--autoplay", action="store_true", help="start playing on load")
    em.add_argument("--mute", action="store_true", help="start muted")
    kind = em.add_mutually_exclusive_group()
    kind.add_argument("--sdk", action="store_true", help="the JS SDK snippet (default: an iframe)")
    kind.add_argument(
        "--player-id",
        metavar="ID",
        help="a Player ID embed, for current players (default: an iframe)",
    )
    em.add_argument(
        "--embed-url",
        default=os.environ.get("VIDAPI_EMBED_URL"),
        help="the embed host, such as the emulator's (default: $VIDAPI_EMBED_URL, else "
        "the platform's)",
    )


def _add_demo_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = sub.add_parser("demo", help="run the whole mission against the bundled emulator")
    demo.add_argument(
        "--no-serve",
        action="store_true",
        help="exit when done (default: keep the emulator up to play the video, until Ctrl-C)",
    )
    demo.add_argument(
        "--port", type=port, default=0, help="the emulator's API port (default 0: a free one)"
    )
    demo.add_argument(
        "--upload-port",
        type=port,
        default=0,
        help="the emulator's upload port (default 0: a free one)",
    )


class _VersionAction(argparse.Action):
    """argparse's ``version`` action with the version looked up when asked for: reading
    the installed metadata costs a start that does not print it."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"vidapi-async {_version()}")
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vidapi-async")
    except PackageNotFoundError:  # pragma: no cover - run from a tree never installed
        return "unknown"


def _emulator_flags(p: argparse.ArgumentParser) -> None:
    """``vidapi serve``'s options: where it listens, the faults it makes, its TLS."""
    _listen_flags(p)
    _fault_flags(p)
    _tls_flags(p)


def _listen_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on; 0.0.0.0 for every interface (default: %(default)s)",
    )
    p.add_argument(
        "--port",
        type=port,
        default=8400,
        help="the API's port; 0: a free one (default %(default)s)",
    )
    p.add_argument(
        "--upload-port",
        type=port,
        default=None,
        help="the uploads' port (default: --port + 1; with --port 0, a free port)",
    )
    p.add_argument(
        "--public-host",
        type=host_name,
        default=None,
        metavar="NAME",
        help="the host name in the addresses it hands out (API, uploads, embeds, the "
        "--tls certificate), for clients that want a name rather than an IP address, such "
        "as the official SDK's tests, which want one with a dot: e.g. vidapi.test, with "
        "'127.0.0.1 vidapi.test' in /etc/hosts (default: --host)",
    )
    p.add_argument(
        "--data-dir",
        default=None,
        help="keep state and files here across restarts (default: a temporary folder, "
        "removed on exit)",
    )


def _fault_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--error-rate",
        type=non_negative_number,
        default=0.0,
        metavar="P",
        help="the share of API and upload requests answered 500, 502 or 503, 0 to 1 (default 0)",
    )
    p.add_argument(
        "--rate-limit-rate",
        type=non_negative_number,
        default=0.0,
        metavar="P",
        help="the share of API and upload requests answered 429 with Retry-After, 0 to 1 "
        "(default 0)",
    )
    p.add_argument(
        "--latency",
        type=non_negative_number,
        default=0.0,
        help="seconds added per request (default 0)",
    )
    p.add_argument(
        "--reset-rate",
        type=non_negative_number,
        default=0.0,
        metavar="P",
        help="the share of upload bodies cut off half way (the connection closed), 0 to 1 "
        "(default 0)",
    )
    p.add_argument(
        "--videos-per-day",
        type=int,
        default=None,
        metavar="N",
        help="videos each account may create in 24 hours; more are refused (403, "
        "quota_exceeded) (default: no quota)",
    )
    p.add_argument(
        "--quota",
        type=quota,
        default=None,
        metavar="N/PERIOD",
        help="each account's quota as a rolling window, such as 15/24h or 3/4s (a short one "
        "for tests and demos); more creates are refused (403, quota_exceeded) (default: no "
        "quota; overrides --videos-per-day)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the random faults, to repeat a run (default: a random seed)",
    )
    p.add_argument(
        "--encoding-delay",
        type=non_negative_number,
        default=0.2,
        help="seconds a new video is processing (default %(default)s)",
    )


def _tls_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tls", action="store_true", help="https with a self-signed certificate")
    p.add_argument(
        "--tls-cert",
        type=existing_file,
        default=None,
        help="serve https with this certificate (default: http, or --tls)",
    )
    p.add_argument(
        "--tls-key",
        type=existing_file,
        default=None,
        help="the key of --tls-cert (default: none)",
    )
    p.add_argument(
        "--control-secret", default=None, help="for /_emulator/* (default: random, printed)"
    )
    p.add_argument(
        "--plain-seals",
        action="store_true",
        help="upload addresses without escaped characters, for clients that re-encode "
        "them (such as the official SDK's chunked mode)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``vidapi ARGV``; its exit code. Output cut short by a reader that went away
    (``vidapi api /me/videos --paginate | head``) ends quietly with ``EXIT_BROKEN_PIPE``
    (141), as the Python documentation's note on SIGPIPE recommends."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, where a closed pipe can still be handled
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at devnull so that flush, too,
        # is quiet
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    return code


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # needs no extra
        print(f"vidapi-async {_version()}")
        return EXIT_OK
    if importlib.util.find_spec("rich") is None:  # found, not imported: --help needs none
        print(f"vidapi: {INSTALL_HINT}", file=sys.stderr)
        return EXIT_USAGE
    args = _parser().parse_args(argv)  # a usage error: argparse's text, exit 2
    # What a command runs is imported once it is known: --help and a usage error need
    # none of it (the client, aiohttp, the batch wing).
    from .._observe import configure_logging

    as_json = getattr(args, "log_format", "text") == "json"
    configure_logging(args.verbose, "json" if as_json else "text", os.environ.get("VIDAPI_LOG"))
    from rich.console import Console

    console = Console(stderr=True, emoji=False)  # titles and keys as written
    if not console.is_terminal:
        # a log file or a pipe: a message is one line whatever its length (a grep or a
        # log shipper reads each line as a record)
        console.soft_wrap = True
    try:
        return asyncio.run(_run(args, console))
    except KeyboardInterrupt:
        if as_json:  # from here on, every line on stderr is a log record
            cli_log.warning("stopped")
        elif args.command == "batch":
            again = shlex.join(["vidapi", *argv])
            if not console.is_terminal:  # the last progress line ends with no newline
                console.line()
            console.print(
                f"stopped; to resume, run the same command again: {again}",
                highlight=False,
                soft_wrap=True,
            )
        else:
            console.print("stopped")
        return 130
    except e.VidapiError as exc:
        if as_json:
            cli_log.error("vidapi: %s: %s", type(exc).__name__, exc)
            return exit_code(exc)
        from rich.markup import escape

        console.print(
            f"[red]vidapi: {type(exc).__name__}: {escape(str(exc))}[/red]",
            highlight=False,
            soft_wrap=True,
        )
        return exit_code(exc)
    except Exception:
        if not as_json:
            raise  # Python's traceback, as ever
        cli_log.critical("vidapi: crashed", exc_info=True)
        return EXIT_OTHER


def _client(args: argparse.Namespace) -> Client:
    from .._client import Client
    from .._retry import RetryPolicy

    if not args.token:
        raise e.UsageError("no token: pass --token, set VIDAPI_TOKEN or run 'vidapi login'")
    if args.retries < 1:
        raise e.InvalidArgumentError("--retries", "must be 1 or more")
    return Client(
        access_token=args.token,
        base_url=args.base_url,
        api=args.api,
        retry=RetryPolicy(max_attempts=args.retries),
        proxy=args.proxy,
    )


def _out(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json_text(data) if args.json else text)


def _read_password() -> str:
    if sys.stdin.isatty():
        return getpass.getpass("video password: ")
    return sys.stdin.readline().rstrip("\n")


async def _run(args: argparse.Namespace, console: Console) -> int:
    cmd = args.command
    if cmd == "batch" and args.enqueue_only and not is_shared(args.journal):
        raise e.UsageError(
            "--enqueue-only needs a PostgreSQL journal (a DSN): workers run the jobs of a "
            "shared queue; with a file journal nothing would run them, so give "
            "--journal postgresql://USER@HOST:PORT/DB, or leave out --enqueue-only to upload now"
        )
    if cmd == "batch" and args.adopt_only and is_shared(args.journal):
        raise e.UsageError(
            "--adopt-only takes a file journal: a shared queue's workers adopt each job's "
            "video on their own before uploading it (enqueue the batch again)"
        )
    if cmd == "serve":
        from ._serve import serve

        await serve(args, console)
        return EXIT_OK
    if cmd == "demo":
        from ._demo import run_demo

        return await run_demo(console, serve=not args.no_serve, ports=(args.port, args.upload_port))
    if cmd == "embed":
        return _embed(args)
    if cmd == "status":
        if not (getattr(args, "report", None) and (args.token or os.environ.get("VIDAPI_TOKEN"))):
            return await run_status(args, console)
        async with _client(args) as asking:  # the report's page and embed addresses
            return await run_status(args, console, asking)
    if cmd == "login":
        return await run_login(args, console)
    if cmd == "logout":
        return await run_logout(console)
    if args.token:
        await note_token_over_kept_login(args)
    client = None if args.token else await stored_client(args)
    async with client or _client(args) as client:
        if hasattr(args, "deny"):  # a command that fetches urls: --deny and --allow
            from .._transfer.sources import SourcePolicy

            client.source_policy = SourcePolicy(deny=args.deny, allow=args.allow)
        if cmd == "api":
            return await run_api(args, client)
        if cmd == "upload":
            return await _upload(args, client, console)
        if cmd in ("batch", "worker"):
            try:
                if cmd == "worker":
                    return await run_worker(args, client, console)
                if is_shared(args.journal):
                    return await run_shared_batch(args, client, console)
                from ._batch import run_batch

                return await run_batch(args, client, console)
            except e.InvalidArgumentError as exc:
                if exc.argument != "metrics_port":
                    raise
                raise e.InvalidArgumentError("--metrics-port", exc.message) from None
        if cmd == "video":
            video = await client.get_video(args.id, [f for f in args.fields.split(",") if f])
            _out(args, dict(video.fields), "\n".join(f"{k}: {v}" for k, v in video.fields.items()))
            return EXIT_OK
        if cmd == "password":
            value = None if args.remove else await asyncio.to_thread(_read_password)
            if value == "":
                raise e.InvalidArgumentError(
                    "password", "the input was empty: type one, or pass --remove to remove it"
                )
            video = await client.set_password(args.id, value)
            _out(
                args,
                {"id": video.id, "password_protected": video.password_protected},
                f"{video.id}: password_protected = {video.password_protected}",
            )
            return EXIT_OK
    raise e.UsageError(f"unknown command {cmd!r}")


async def _upload(args: argparse.Namespace, client: Client, console: Console) -> int:
    # Every input is checked before the first byte is sent: a bad channel, an empty
    # title or a broken subtitle never costs a whole upload, and never leaves a video
    # half made.
    from .. import _validate as check
    from .._internals import internals
    from .._s3 import is_s3_url
    from .._transfer.files import check_srt_file, inspect_file

    check.title(args.title)
    check.channel(args.channel)
    if is_s3_url(args.file):
        raise e.UsageError(
            f"{args.file}: vidapi upload sends a local file; an s3:// object goes through "
            "vidapi batch s3://BUCKET/PREFIX/ (or a manifest's url) or the Python API's "
            "upload_file"
        )
    await asyncio.to_thread(inspect_file, args.file)
    subtitles = []
    if args.subtitle:
        internals(client).check_offered("upload_subtitle")  # v2 has none: before a byte
    for spec in args.subtitle:
        lang, sep, path = spec.partition("=")
        if not sep or not path:
            raise e.InvalidArgumentError("--subtitle", f"expected LANG=FILE.srt, got {spec!r}")
        subtitles.append((check.language(lang), path))
        await asyncio.to_thread(check_srt_file, path)
    password = await asyncio.to_thread(_read_password) if args.password else None
    if password == "":
        raise e.InvalidArgumentError(
            "--password", "the input was empty: type one, or leave out --password for none"
        )
    await internals(client).check_category(args.channel)  # upload_video's, before a byte
    uploaded = await upload_with_bar(
        client, args.file, console, chunked=True if args.chunked else None, workers=args.workers
    )
    # The password travels with the create: the video is never public unprotected.
    video = await client.create_video(
        url=uploaded.url,
        title=args.title,
        channel=args.channel,
        published=not args.unpublished,
        password=password,
    )
    result: dict[str, Any] = {"id": video.id, "title": video.title, "subtitles": []}
    said = [f"created video {video.id}"]
    for lang, path in subtitles:
        sub = await client.subtitles.upload(video.id, path, language=lang)
        result["subtitles"].append({"id": sub.id, "language": sub.language})
        said.append(f"subtitle {sub.language} attached ({sub.id})")
    if password is not None:
        result["password_protected"] = video.password_protected
        said.append(
            "password set: the video is password protected"
            if video.password_protected
            else "password sent, but the platform says the video is not protected"
        )
    if args.wait_ready:
        ready = await wait_with_bar(client, video.id, console)
        result["status"] = ready.status
        said.append(f"status: {ready.status}")
    _out(args, result, "\n".join(said))
    return EXIT_OK


def _embed(args: argparse.Namespace) -> int:
    from .. import embed

    flags = {k: True for k in ("autoplay", "mute") if getattr(args, k)}
    if args.player_id:
        text = embed.player_embed_script(
            args.player_id, args.id, {"mute": True} if args.mute else None
        )
    elif args.sdk:
        # the SDK script from the embed host given (the emulator serves it at /js/all.js)
        sdk = {"sdk_url": f"{args.embed_url.rstrip('/')}/js/all.js"} if args.embed_url else {}
        text = embed.sdk_html(args.id, flags, **sdk)
    else:
        host = {"embed_url": args.embed_url} if args.embed_url else {}
        text = embed.iframe_html(args.id, flags, **host)
    print(text)
    return EXIT_OK
