"""Where access tokens come from: a static token, or an OAuth 2 grant that refreshes.

A provider never does I/O itself: the client hands it ``post_form``, a coroutine that
POSTs a form to the token endpoint and returns the decoded JSON (or raises). That keeps
aiohttp out of here and lets tests drive a provider with a plain function.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from .._errors import InvalidArgumentError, OAuthError, UnexpectedResponseError
from .._models import AccessToken
from .._observe import auth_log

__all__ = ["OAuth", "PostForm", "StaticToken", "TokenProvider"]

PostForm = Callable[[str, tuple[tuple[str, str], ...]], Awaitable[Mapping[str, Any]]]
"""``post_form(token_url, fields)``: the token endpoint's JSON answer."""


@runtime_checkable
class TokenProvider(Protocol):
    """What the client needs of a source of tokens.

    Optional: ``async widen(scope, post_form, token_url, *, what)``, called when an
    operation (``what``) needs a scope the token in use is known to lack: a token that
    holds it, or ``None`` to have the operation refused (``InsufficientScopeError``)
    before anything is sent; it may raise that error itself (``ApiKey`` does)."""

    async def get_token(self, post_form: PostForm, token_url: str) -> AccessToken:
        """A token valid for a while yet, fetching or refreshing one if needed."""
        ...

    def invalidate(self, token: AccessToken) -> bool:
        """The server refused ``token`` as invalid. Return whether asking again may
        give a different one (it is worth retrying the request once)."""
        ...


class StaticToken:
    """A token obtained elsewhere. ``scopes``, when given, lets scoped operations be
    checked before any request is sent."""

    def __init__(self, token: str, scopes: Iterable[str] | None = None) -> None:
        if not isinstance(token, str) or not token.strip():
            raise InvalidArgumentError("access_token", "must be a non-empty string")
        self._token = AccessToken(token, frozenset(scopes) if scopes is not None else None)
        """Always the same: the client reads it here, without awaiting ``get_token``."""

    def __repr__(self) -> str:
        return "StaticToken(***)"

    async def get_token(self, post_form: PostForm, token_url: str) -> AccessToken:
        """The token given (never fetched)."""
        return self._token

    def invalidate(self, token: AccessToken) -> bool:
        """``False``: a static token cannot be replaced, retrying is pointless."""
        return False


class OAuth:
    """An OAuth 2 grant against the platform's token endpoint.

    Build one with ``OAuth.client_credentials``, ``OAuth.password`` or
    ``OAuth.refresh_token``. The token is fetched on first use, refreshed ``leeway``
    seconds before it expires (with its refresh token when there is one, else by the
    original grant) and once more after the server calls it invalid. Concurrent callers
    share one fetch. Secrets never appear in repr, str or an exception message.
    """

    def __init__(
        self,
        grant: tuple[tuple[str, str], ...],
        *,
        client_id: str,
        client_secret: str,
        scopes: Iterable[str] = (),
        token_url: str | None = None,
        refresh_token: str | None = None,
        leeway: float = 60.0,
        clock: Callable[[], float] = time.time,
        token: AccessToken | None = None,
        on_token: Callable[[AccessToken], None] | None = None,
    ) -> None:
        for name, value in (("client_id", client_id), ("client_secret", client_secret)):
            if not isinstance(value, str) or not value:
                raise InvalidArgumentError(name, "must be a non-empty string")
        self._grant = grant
        self._client = (("client_id", client_id), ("client_secret", client_secret))
        self._scopes = tuple(scopes)
        self.token_url = token_url
        """The token endpoint, or ``None`` for the client's (``<base_url>/oauth/token``)."""
        self._refresh_token = refresh_token
        self._leeway = leeway
        self._clock = clock
        self._token: AccessToken | None = token
        """``token=``: one kept from before (a token store), used until it expires."""
        self._on_token = on_token
        """Called with every new token (a token store saves it; refresh tokens rotate)."""
        self._token_leeway = leeway
        self._lock = asyncio.Lock()
        self.grant_type = dict(grant).get("grant_type", "refresh_token")
        """The OAuth grant (``client_credentials``, ``password``, ...)."""

    def __repr__(self) -> str:
        return f"OAuth(grant_type={self.grant_type!r}, scopes={self._scopes!r})"

    @classmethod
    def client_credentials(
        cls, client_id: str, client_secret: str, *, scopes: Iterable[str] = (), **kw: Any
    ) -> OAuth:
        """Tokens for the API key itself (``grant_type=client_credentials``)."""
        return cls(
            (("grant_type", "client_credentials"),),
            client_id=client_id,
            client_secret=client_secret,
            scopes=scopes,
            **kw,
        )

    @classmethod
    def password(
        cls,
        client_id: str,
        client_secret: str,
        *,
        username: str,
        password: str,
        scopes: Iterable[str] = (),
        **kw: Any,
    ) -> OAuth:
        """Tokens for a user by username and password (``grant_type=password``)."""
        if not username or not password:
            raise InvalidArgumentError("username/password", "both are required for this grant")
        return cls(
            (("grant_type", "password"), ("username", username), ("password", password)),
            client_id=client_id,
            client_secret=client_secret,
            scopes=scopes,
            **kw,
        )

    @classmethod
    def authorization_code(
        cls,
        client_id: str,
        client_secret: str,
        *,
        code: str,
        redirect_uri: str,
        code_verifier: str | None = None,
        **kw: Any,
    ) -> OAuth:
        """Exchange the ``code`` the authorize page sent to ``redirect_uri`` (the same
        one as in ``authorize_url``); later tokens come from the refresh token.
        ``code_verifier``: the PKCE verifier whose challenge went to ``authorize_url``."""
        if not code or not redirect_uri:
            raise InvalidArgumentError("code/redirect_uri", "both are required for this grant")
        verifier = () if code_verifier is None else (("code_verifier", code_verifier),)
        return cls(
            (
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", redirect_uri),
                *verifier,
            ),
            client_id=client_id,
            client_secret=client_secret,
            **kw,
        )

    @classmethod
    def refresh_token(
        cls, client_id: str, client_secret: str, *, refresh_token: str, **kw: Any
    ) -> OAuth:
        """Tokens from a refresh token kept from an earlier grant."""
        if not refresh_token:
            raise InvalidArgumentError("refresh_token", "must be a non-empty string")
        return cls(
            (), client_id=client_id, client_secret=client_secret, refresh_token=refresh_token, **kw
        )

    async def get_token(self, post_form: PostForm, token_url: str) -> AccessToken:
        """The token in use, fetched (or refreshed) first when it is missing or expires
        within the leeway; concurrent callers share one fetch."""
        async with self._lock:
            token = self._token
            if token is None or token.expires_within(self._token_leeway, now=self._clock()):
                renewing = token is not None
                self._token = token = await self._fetch(post_form, self.token_url or token_url)
                auth_log.info(
                    "access token %s (%s grant, expires in %s s)",
                    "refreshed" if renewing else "fetched",
                    self.grant_type,
                    "?" if token.expires_at is None else int(token.expires_at - self._clock()),
                )
                if self._on_token is not None:
                    self._on_token(token)
            return token

    def invalidate(self, token: AccessToken) -> bool:
        """Forget ``token`` (the server refused it); ``True``: the next one differs."""
        if self._token is token:
            self._token = None
            auth_log.info("access token refused as invalid: a new one will be fetched")
        # Either way the next get_token gives a token other than the refused one: a new
        # fetch, or the one that another request already fetched.
        return True

    async def _fetch(self, post_form: PostForm, token_url: str) -> AccessToken:
        scope = (("scope", " ".join(self._scopes)),) if self._scopes else ()
        if self._refresh_token:
            fields = (("grant_type", "refresh_token"), ("refresh_token", self._refresh_token))
            try:
                return self._accept(await post_form(token_url, fields + self._client))
            except OAuthError:
                if not self._grant:  # nothing to fall back on
                    raise
                self._refresh_token = None
        token = self._accept(await post_form(token_url, self._grant + self._client + scope))
        if self.grant_type == "authorization_code":
            self._grant = ()  # a code is single-use: from now on, the refresh token
        return token

    def _accept(self, data: Mapping[str, Any]) -> AccessToken:
        access = data.get("access_token")
        if not isinstance(access, str) or not access:
            raise UnexpectedResponseError("the token response has no access_token", status=None)
        expires_in = data.get("expires_in")
        scope = data.get("scope")
        refresh = data.get("refresh_token")
        if isinstance(refresh, str) and refresh:
            self._refresh_token = refresh
        lifetime = (
            float(expires_in)
            if isinstance(expires_in, int | float) and not isinstance(expires_in, bool)
            else None
        )
        # Refresh ``leeway`` seconds early, but never earlier than half the token's life:
        # a 30 s token is not refetched before every call under a 60 s leeway.
        self._token_leeway = self._leeway if lifetime is None else min(self._leeway, lifetime / 2)
        return AccessToken(
            access,
            scopes=frozenset(scope.split()) if isinstance(scope, str) else None,
            expires_at=None if lifetime is None else self._clock() + lifetime,
            refresh_token=self._refresh_token,
        )


def authorize_url(
    base_url: str,
    *,
    client_id: str,
    redirect_uri: str,
    scopes: Iterable[str] = (),
    state: str | None = None,
    code_challenge: str | None = None,
) -> str:
    """The platform's authorize page for the authorization-code flow (pure): send the
    user there; it redirects to ``redirect_uri`` with ``code`` (and ``state``).
    ``code_challenge``: PKCE's (S256, from ``pkce_pair``)."""
    query = [("response_type", "code"), ("client_id", client_id), ("redirect_uri", redirect_uri)]
    names = " ".join(scopes)
    if names:
        query.append(("scope", names))
    if state is not None:
        query.append(("state", state))
    if code_challenge is not None:
        query += [("code_challenge", code_challenge), ("code_challenge_method", "S256")]
    return f"{base_url.rstrip('/')}/oauth/authorize?{urllib.parse.urlencode(query)}"


def pkce_challenge(verifier: str) -> str:
    """PKCE's S256 challenge of ``verifier`` (RFC 7636): base64url of its SHA-256."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def pkce_pair() -> tuple[str, str]:
    """A new PKCE ``(verifier, challenge)``: the challenge goes to the authorize page,
    the verifier (kept secret) with the code exchange."""
    verifier = secrets.token_urlsafe(48)
    return verifier, pkce_challenge(verifier)
