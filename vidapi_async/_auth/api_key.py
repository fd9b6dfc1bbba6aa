"""API v2's tokens: the client-credentials grant with a private API key.

v2 takes no password grant and (as far as is known) returns no refresh token: a new
token is asked for with the key itself, ``leeway`` seconds before the old one expires
(spec api-v2 §2, "Refresh": UNCONFIRMED). Scopes travel space-separated in v2's names;
legacy names are mapped (``manage_videos`` -> ``video.manage video.read``), and granted
bundles are expanded so that an operation's scope can be checked before sending.

A key given no ``scopes`` asks for the default ones, then for a scope an operation
needs when it needs it (``widen``, which the requester calls): live streaming, for
one, is a plan feature that a default token must not ask for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import attrs

from .._errors import InsufficientScopeError, OAuthError
from .._models import AccessToken
from .._observe import auth_log
from .._protocol._v2 import DEFAULT_SCOPES, SCOPE_REFUSED_ERRORS, expand_scopes, v2_scopes
from .providers import OAuth, PostForm

__all__ = ["ApiKey"]


class ApiKey(OAuth):
    """A private API key (created in the platform's Studio) as a token provider for
    API v2. ``scopes``: v2 names (``video.manage``, ``bundle.user``) or legacy ones,
    a limit: an operation needing another is refused before sending. Not given: the
    default ones (``account.read video.read video.manage``), and a scope an operation
    needs beyond them (``live.manage`` for a live stream) is asked for when it first
    does; one the key's plan or permissions lack is refused (``InsufficientScopeError``,
    nothing sent) and the key goes on with the token it had. The secret never appears
    in repr, str or an exception message."""

    def __init__(
        self,
        api_key: str,
        api_secret: str,
        *,
        scopes: Iterable[str] | None = None,
        token_url: str | None = None,
        leeway: float = 60.0,
        clock: Callable[[], float] = time.time,
        token: AccessToken | None = None,
        on_token: Callable[[AccessToken], None] | None = None,
    ) -> None:
        super().__init__(
            (("grant_type", "client_credentials"),),
            client_id=api_key,
            client_secret=api_secret,
            scopes=v2_scopes(DEFAULT_SCOPES if scopes is None else scopes),
            token_url=token_url,
            leeway=leeway,
            clock=clock,
            token=token,
            on_token=on_token,
        )
        self._widens = scopes is None
        self._refused: dict[str, str] = {}
        """Scopes the token endpoint refused this key -> why (not asked for again)."""

    def __repr__(self) -> str:
        return f"ApiKey(scopes={self._scopes!r})"

    async def _fetch(self, post_form: PostForm, token_url: str) -> AccessToken:
        """Always the grant itself: a refresh token, if one ever came, is not used."""
        return await self._grant_for(self._scopes, post_form, token_url)

    async def _grant_for(
        self, scopes: tuple[str, ...], post_form: PostForm, token_url: str
    ) -> AccessToken:
        scope = (("scope", " ".join(scopes)),) if scopes else ()
        token = self._accept(await post_form(token_url, self._grant + self._client + scope))
        self._refresh_token = None
        granted = None if token.scopes is None else expand_scopes(token.scopes)
        return attrs.evolve(token, scopes=granted, refresh_token=None)

    async def widen(
        self, scope: str, post_form: PostForm, token_url: str, *, what: str
    ) -> AccessToken | None:
        """The requester's hook when the token in use lacks ``scope``, which ``what``
        needs: ``None`` with ``scopes=`` given (a limit: refuse before sending); else a
        token asked for with the scopes so far and ``scope``, once (concurrent callers
        share the fetch), used from then on. The token endpoint's refusal (an error of
        ``SCOPE_REFUSED_ERRORS``, a token granted without ``scope``, or one that drops
        a scope the token in use holds) raises
        ``InsufficientScopeError`` and is remembered: not asked again, and the earlier
        token and scopes stay in use. A scope already asked for is not asked twice."""
        if not self._widens:
            return None
        async with self._lock:
            token = self._token
            if (
                token is not None
                and (token.scopes is None or scope in token.scopes)
                and not token.expires_within(self._token_leeway, now=self._clock())
            ):
                return token  # another caller widened it meanwhile
            if scope not in self._refused:
                asked = self._scopes if scope in self._scopes else (*self._scopes, scope)
                held = None if token is None else token.scopes
                leeway = self._token_leeway
                try:
                    wider = await self._grant_for(asked, post_form, self.token_url or token_url)
                except OAuthError as exc:
                    if exc.error_type not in SCOPE_REFUSED_ERRORS:
                        raise
                    self._refused[scope] = f"the token endpoint refused it: {exc.error_type}"
                else:
                    dropped = (
                        wider.scopes is not None and held is not None and not held <= wider.scopes
                    )
                    if dropped:
                        self._refused[scope] = (
                            "the token endpoint granted it only without scopes held before"
                        )
                    elif wider.scopes is None or scope in wider.scopes:
                        self._scopes, self._token = asked, wider
                        auth_log.info("access token fetched with scope %s added", scope)
                        if self._on_token is not None:
                            self._on_token(wider)
                        return wider
                    else:
                        self._refused[scope] = "the token endpoint granted a token without it"
                self._token_leeway = leeway  # the earlier token's, kept in use
                auth_log.warning(
                    "scope %s refused to this API key (%s): operations needing it are "
                    "refused, the others go on",
                    scope,
                    self._refused[scope],
                )
        raise InsufficientScopeError(
            f"{what} needs scope {scope!r}, which this API key's plan or permissions do "
            f"not include ({self._refused[scope]}); its other operations go on",
            scope=scope,
            status=None,
        )
