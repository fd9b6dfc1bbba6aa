"""``vidapi login`` / ``vidapi logout``: the authorization-code flow, and a token kept for
the other commands in a file only its owner can read."""

from __future__ import annotations

import argparse
import asyncio
import errno
import getpass
import os
import secrets
import sys
import urllib.parse
import webbrowser
from typing import TYPE_CHECKING

from .. import _errors as e
from ._args import port, positive_number
from ._defaults import DEFAULT_BASE_URL, V2_DEFAULT_SCOPES
from ._exit import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console

    from .._client import Client
    from .._models import AccessToken

# The client, its providers and the token store are imported by the functions that run
# a command, not with this module: the parsers are built for every command, --help
# included.

__all__ = [
    "add_login_parsers",
    "note_token_over_kept_login",
    "run_login",
    "run_logout",
    "stored_client",
]

PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"<!doctype html><title>vidapi</title><p>Logged in: you can close this tab.</p>"
)


def add_login_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "login",
        help="log in on the platform's page (--api v2: with the API key itself); keep a "
        "token for the other commands",
    )
    p.add_argument(
        "--client-id",
        default=os.environ.get("VIDAPI_CLIENT_ID"),
        help="your API key (default: $VIDAPI_CLIENT_ID); the secret is read from "
        "$VIDAPI_CLIENT_SECRET or asked for, never taken from the command line",
    )
    p.add_argument(
        "--scope",
        default=None,
        help="space-separated scopes (default: manage_videos; --api v2: "
        f"{' '.join(V2_DEFAULT_SCOPES)}, and a scope a later command needs is asked "
        "for then; given, they are a limit)",
    )
    p.add_argument(
        "--port",
        type=port,
        default=0,
        help="local port for the redirect (default 0: a free one)",
    )
    p.add_argument(
        "--timeout",
        type=positive_number,
        default=300.0,
        help="seconds to wait for the page (default %(default)g)",
    )
    p.add_argument("--no-browser", action="store_true", help="only print the address")
    p.add_argument(
        "--expect-user",
        metavar="NAME",
        help="refuse (and keep nothing) unless the login is for this account (default: "
        "on a terminal, the account's name is shown for confirmation)",
    )
    sub.add_parser("logout", help="forget the kept login")


def _secret() -> str:
    given = os.environ.get("VIDAPI_CLIENT_SECRET")
    if given:
        return given
    if sys.stdin.isatty():
        return getpass.getpass("API secret: ")
    return sys.stdin.readline().rstrip("\n")


REFUSED_PAGE = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/html; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n"
    b"<!doctype html><title>vidapi</title><p>The login was refused: see the terminal.</p>"
)
BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"
TOO_LONG = b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n"


def _error_code(text: str) -> str:
    """An OAuth ``error`` code as it may be shown: its safe characters, 64 at most."""
    return "".join(c for c in text if c.isascii() and (c.isalnum() or c in "_-."))[:64] or "?"


async def _wait_for_code(port: int, timeout: float, ready: asyncio.Future[str], state: str) -> str:
    """Listen on 127.0.0.1 for the authorize page's redirect carrying ``state``: its
    ``code``; with ``state`` and an ``error`` instead (the user refused), an
    ``OAuthError`` at once. Any other request (another local process guessing) gets a
    400 (a request line over 64 KiB a 431) and the listener keeps waiting."""
    got: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                raw = await asyncio.wait_for(reader.readline(), 10)
            except ValueError:  # a line past the reader's 64 KiB limit
                writer.write(TOO_LONG)
                await writer.drain()
                return
            line = raw.decode("latin-1")
            target = line.split(" ")[1] if line.count(" ") >= 2 else ""
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(target).query))
            ours = secrets.compare_digest(query.get("state", "").encode(), state.encode())
            if ours and "code" in query and not got.done():
                got.set_result(query["code"])
                writer.write(PAGE)
            elif ours and "error" in query and not got.done():
                code = _error_code(query["error"])
                got.set_exception(
                    e.OAuthError(
                        f"the login page answered {code}: the login was refused or failed",
                        status=None,
                        error_type=code,
                    )
                )
                writer.write(REFUSED_PAGE)
            else:
                writer.write(BAD_REQUEST)
            await writer.drain()
        except (OSError, TimeoutError):
            pass
        finally:
            writer.close()

    try:
        server = await asyncio.start_server(handle, "127.0.0.1", port)
    except OSError as exc:
        why = "in use by another program" if exc.errno == errno.EADDRINUSE else exc.strerror
        failed = e.InvalidArgumentError(
            "--port", f"cannot listen on 127.0.0.1:{port}: {why}; pick another, or 0 for any"
        )
        ready.set_exception(failed)  # said at once, not after the wait for the address
        raise failed from None
    try:
        ready.set_result(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/callback")
        return await asyncio.wait_for(got, timeout)
    except TimeoutError:
        raise e.UsageError(f"no answer from the login page within {timeout:g} s") from None
    finally:
        server.close()
        await server.wait_closed()


def _dialect(args: argparse.Namespace) -> str:
    api = args.api or os.environ.get("VIDAPI_API") or "legacy"
    if api not in ("legacy", "v2"):
        raise e.InvalidArgumentError("VIDAPI_API", f"{api[:20]!r} is not legacy or v2")
    return str(api)


async def run_login(args: argparse.Namespace, console: Console) -> int:
    from .._auth.kept_login import StoredLogin, TokenStore
    from .._auth.providers import OAuth, authorize_url, pkce_pair
    from .._client import Client

    if not args.client_id:
        raise e.UsageError("no client id: pass --client-id or set VIDAPI_CLIENT_ID")
    secret = await asyncio.to_thread(_secret)
    if not secret:
        raise e.UsageError("no API secret: set VIDAPI_CLIENT_SECRET or type it when asked")
    if _dialect(args) == "v2":
        return await _login_v2(args, secret)
    args.base_url = args.base_url or DEFAULT_BASE_URL
    scopes = tuple((args.scope or "manage_videos").split())
    state = secrets.token_urlsafe(16)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    verifier, challenge = pkce_pair()
    waiting = asyncio.create_task(_wait_for_code(args.port, args.timeout, ready, state))
    try:
        redirect_uri = await asyncio.wait_for(asyncio.shield(ready), 10)
    except BaseException:
        waiting.cancel()
        if waiting.done() and not waiting.cancelled():
            waiting.exception()  # the same error as ready's: retrieved, not left to warn
        raise
    url = authorize_url(
        args.base_url,
        client_id=args.client_id,
        redirect_uri=redirect_uri,
        scopes=scopes,
        state=state,
        code_challenge=challenge,
    )
    print(f"Open this address to log in:\n{url}", flush=True)
    if not args.no_browser:
        await asyncio.to_thread(webbrowser.open, url)
    code = await waiting
    provider = OAuth.authorization_code(
        args.client_id,
        secret,
        code=code,
        redirect_uri=redirect_uri,
        code_verifier=verifier,
        scopes=scopes,
    )
    async with Client(auth=provider, base_url=args.base_url, proxy=args.proxy) as client:
        token = await client.access_token()
        account = str((await client.account.auth_info()).get("username") or "?")
    await _confirm(account, args.expect_user)
    store = TokenStore()
    login = StoredLogin(
        base_url=args.base_url,
        client_id=args.client_id,
        client_secret=secret,
        access_token=token.token,
        refresh_token=token.refresh_token,
        expires_at=token.expires_at,
        scopes=tuple(sorted(token.scopes)) if token.scopes is not None else scopes,
    )
    await asyncio.to_thread(store.save, login)
    print(
        f"logged in as {account} for the legacy API; the token is kept in {store.path} "
        "(readable only by you)"
    )
    return EXIT_OK


async def _login_v2(args: argparse.Namespace, secret: str) -> int:
    """API v2's login: the API key's client-credentials grant (v2 has no login page
    yet), the account named from ``GET /me``, the key and its token kept."""
    from .._auth.api_key import ApiKey
    from .._auth.kept_login import StoredLogin, TokenStore
    from .._client import Client
    from .._protocol import _v2 as v2

    base_url = args.base_url or v2.DEFAULT_BASE_URL
    scopes = v2.v2_scopes(args.scope.split() if args.scope else v2.DEFAULT_SCOPES)
    provider = ApiKey(args.client_id, secret, scopes=scopes)
    async with Client(auth=provider, api="v2", base_url=base_url, proxy=args.proxy) as client:
        token = await client.access_token()
        me = await client.account.me()
        account = str(me.username or me.id or "?")
    await _confirm(account, args.expect_user)
    store = TokenStore()
    login = StoredLogin(
        base_url=base_url,
        client_id=args.client_id,
        client_secret=secret,
        access_token=token.token,
        expires_at=token.expires_at,
        scopes=tuple(sorted(token.scopes)) if token.scopes is not None else scopes,
        api="v2",
        scopes_given=bool(args.scope),
    )
    await asyncio.to_thread(store.save, login)
    print(
        f"logged in as {account} for API v2 (with the API key); the key and its token are "
        f"kept in {store.path} (readable only by you)"
    )
    return EXIT_OK


async def _confirm(account: str, expected: str | None) -> None:
    """Whose login this is: ``--expect-user`` must match; without it, a terminal is
    asked; without a terminal the login is kept (its name is printed)."""
    if expected is not None:
        if account != expected:
            raise e.UsageError(
                f"the login is for the account {account!r}, not {expected!r}: nothing kept"
            )
        return
    if sys.stdin.isatty():
        answer = await asyncio.to_thread(
            input, f"Keep the login of the account {account!r}? [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            raise e.UsageError(f"the login of {account!r} was not confirmed: nothing kept")


async def run_logout(console: Console) -> int:
    from .._auth.kept_login import TokenStore

    store = TokenStore()
    gone = await asyncio.to_thread(store.delete)
    print(f"forgot the login in {store.path}" if gone else "no login was kept")
    return EXIT_OK


async def note_token_over_kept_login(args: argparse.Namespace) -> None:
    """A token given (``--token``/``VIDAPI_TOKEN``) wins over the kept login, as the
    tokens guide says; with no dialect named and a kept login for API v2, one stderr
    line says that the token speaks the legacy API and the kept v2 login is not used
    (the token is likely a legacy one, e.g. ``vidapi serve``'s: not switched to v2)."""
    if args.api is not None or os.environ.get("VIDAPI_API"):
        return
    from .._auth.kept_login import TokenStore

    try:
        login = await asyncio.to_thread(TokenStore().load)
    except e.UsageError:
        return  # an unreadable kept login: not used here anyway
    if login is None or login.api != "v2":
        return
    given = "VIDAPI_TOKEN" if args.token == os.environ.get("VIDAPI_TOKEN") else "--token"
    print(
        f"vidapi: the token from {given} is used with the legacy API; the kept login for "
        f"API v2 is not (pass --api v2 to use the token with v2, or unset {given} to use "
        "the kept login)",
        file=sys.stderr,
    )


async def stored_client(args: argparse.Namespace) -> Client | None:
    """A client for the kept login, or ``None``; refreshed tokens are kept again."""
    from .._auth.kept_login import TokenStore
    from .._client import Client

    store = TokenStore()
    login = await asyncio.to_thread(store.load)
    if login is None:
        return None
    if args.api is not None and args.api != login.api:
        raise e.UsageError(
            f"the kept login is for the {login.api} API, not {args.api}: run "
            f"'vidapi login --api {args.api}' or pass --token"
        )
    kept = [login]

    loop = asyncio.get_running_loop()

    def keep(token: AccessToken) -> None:  # after a refresh: written off the loop
        kept[0] = kept[0].with_token(token)
        loop.run_in_executor(None, store.save, kept[0])

    return Client(
        auth=login.provider(on_token=keep),
        base_url=login.base_url,
        api=login.api,
        proxy=args.proxy,
    )
