"""API v2's tokens: the client-credentials grant with a private API key.

v2 takes no password grant and (as far as is known) returns no refresh token: a new
token is asked for with the key itself, ``leeway`` seconds before the old one expires
(spec api-v2 §2, "Refresh": UNCONFIRMED). Scopes travel space-separated in v2's names;
legacy names are mapped (``manage_videos`` -> ``video.manage video.read``), and granted
bundles are expanded so that an operation's scope can be checked before sending.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import attrs

from ._auth import OAuth, PostForm
from ._models import AccessToken
from ._protocol._v2 import DEFAULT_SCOPES, expand_scopes, v2_scopes

__all__ = ["ApiKey"]


class ApiKey(OAuth):
    """A private API key (created in the platform's Studio) as a token provider for
    API v2. ``scopes``: v2 names (``video.manage``, ``bundle.user``) or legacy ones;
    by default what uploading and managing videos needs. The secret never appears in
    repr, str or an exception message."""

    def __init__(
        self,
        api_key: str,
        api_secret: str,
        *,
        scopes: Iterable[str] = DEFAULT_SCOPES,
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
            scopes=v2_scopes(scopes),
            token_url=token_url,
            leeway=leeway,
            clock=clock,
            token=token,
            on_token=on_token,
        )

    def __repr__(self) -> str:
        return f"ApiKey(scopes={self._scopes!r})"

    async def _fetch(self, post_form: PostForm, token_url: str) -> AccessToken:
        """Always the grant itself: a refresh token, if one ever came, is not used."""
        scope = (("scope", " ".join(self._scopes)),) if self._scopes else ()
        token = self._accept(await post_form(token_url, self._grant + self._client + scope))
        self._refresh_token = None
        scopes = None if token.scopes is None else expand_scopes(token.scopes)
        return attrs.evolve(token, scopes=scopes, refresh_token=None)
