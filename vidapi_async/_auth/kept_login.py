"""A login kept on disk (the ``vidapi login`` command's): one JSON file that only its
owner can read, written whole or not at all. Blocking helpers: call them off the loop."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import time
from collections.abc import Callable

import attrs

from .._errors import UsageError
from .._models import AccessToken
from .._protocol._v2 import expand_scopes
from .api_key import ApiKey
from .providers import OAuth

__all__ = ["StoredLogin", "TokenStore", "default_login_path"]


def default_login_path() -> str:
    """``$VIDAPI_LOGIN_FILE``, else ``$XDG_CONFIG_HOME/vidapi/login.json`` (``~/.config``)."""
    given = os.environ.get("VIDAPI_LOGIN_FILE")
    if given:
        return given
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "vidapi", "login.json")


@attrs.frozen
class StoredLogin:
    """What a login keeps: where, which client, and the tokens (hidden from repr)."""

    base_url: str
    client_id: str
    client_secret: str = attrs.field(repr=False)
    access_token: str = attrs.field(repr=False)
    refresh_token: str | None = attrs.field(default=None, repr=False)
    expires_at: float | None = None
    scopes: tuple[str, ...] = ()
    uid: str | None = None
    api: str = "legacy"
    """The API dialect the login is for: ``"legacy"`` or ``"v2"`` (an API key)."""
    scopes_given: bool = True
    """v2: whether the login was given its scopes (a limit); if not, the kept key asks
    for a scope an operation needs beyond them, as ``ApiKey()`` without ``scopes=``."""

    def token(self) -> AccessToken:
        """The kept token; v2: its scopes with every bundle expanded (as ``ApiKey``
        reads a granted token), so that what a bundle covers is not refused."""
        scopes = expand_scopes(self.scopes) if self.api == "v2" else frozenset(self.scopes)
        return AccessToken(
            self.access_token,
            scopes=scopes,
            expires_at=self.expires_at,
            refresh_token=self.refresh_token,
        )

    def provider(self, on_token: Callable[[AccessToken], None] | None = None) -> OAuth:
        """An OAuth provider that uses the kept token until it expires, then refreshes
        (v2: ``ApiKey``, which asks for a new one with the key)."""
        if self.api == "v2":
            return ApiKey(
                self.client_id,
                self.client_secret,
                scopes=self.scopes if self.scopes_given else None,
                token=self.token(),
                on_token=on_token,
            )
        return OAuth(
            (),
            client_id=self.client_id,
            client_secret=self.client_secret,
            scopes=self.scopes,
            refresh_token=self.refresh_token,
            token=self.token(),
            on_token=on_token,
        )

    def with_token(self, token: AccessToken) -> StoredLogin:
        return attrs.evolve(
            self,
            access_token=token.token,
            refresh_token=token.refresh_token or self.refresh_token,
            expires_at=token.expires_at,
            scopes=tuple(sorted(token.scopes)) if token.scopes is not None else self.scopes,
        )


class TokenStore:
    def __init__(self, path: str | None = None) -> None:
        self.path = path or default_login_path()

    def save(self, login: StoredLogin) -> None:
        """Write the file atomically, mode 0600 from its first byte (the folder 0700)."""
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".login-", dir=folder)  # mkstemp: 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({**attrs.asdict(login), "saved_at": time.time()}, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def load(self) -> StoredLogin | None:
        """The kept login, or ``None``. A file others can read, or that another user
        owns, is refused (as ssh does with a private key): ``UsageError`` naming it and
        the fix."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, encoding="utf-8") as f:
            info = os.fstat(f.fileno())
            mode = info.st_mode
            if info.st_uid != os.getuid():
                raise UsageError(
                    f"{self.path} is owned by another user: refusing to use it "
                    "(log in again as yourself)"
                )
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise UsageError(
                    f"{self.path} can be read by others: refusing to use it "
                    f"(chmod 600 {self.path}, or log in again)"
                )
            try:
                data = json.load(f)
                data.pop("saved_at", None)
                data["scopes"] = tuple(data.get("scopes") or ())
                return StoredLogin(**data)
            except (ValueError, TypeError) as exc:
                raise UsageError(f"{self.path} is not a vidapi login file ({exc})") from None

    def delete(self) -> bool:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            return False
        return True
