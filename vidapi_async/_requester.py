"""The one internal requester (stripe-python's ``_APIRequestor``): the token and its
scopes, retries, the transport with its limits and observation, and decoding answers
into data or typed errors. ``Client`` builds one and every operation and resource
module sends through it; none of them sees the client's other parts for that.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from . import _protocol as wire
from . import _validate as check
from ._acting import ACTING_TOKEN
from ._aio import Transport, api_timeout, sent_headers
from ._auth.providers import StaticToken, TokenProvider
from ._config import Timeouts
from ._errors import (
    ClientClosedError,
    InsufficientScopeError,
    InvalidTokenError,
    VidapiError,
)
from ._models import AccessToken
from ._observe import ATTEMPT
from ._retry import RetryPolicy, retrying

if TYPE_CHECKING:
    import aiohttp

__all__ = ["LARGE_ANSWER_BYTES", "Decode", "Requester"]

Decode = Callable[..., Mapping[str, Any]]
"""An API dialect's reading of an answer: ``(request, status, headers, body, *,
secrets)`` to its JSON object, or the typed error of the dialect's error shape."""

log = logging.getLogger("vidapi_async")

LARGE_ANSWER_BYTES: Final = 256 * 1024
"""Answers larger than this are decoded in a worker thread (16 MiB of JSON: 0.2 s)."""


class Requester:
    """Sends the API's requests for one client: ``api`` builds one, ``call`` sends it
    (retried), ``call_once`` sends it once (a token refused as invalid is fetched again
    once). ``retry`` and ``timeouts`` are read at each call: changing the client's
    changes these."""

    def __init__(
        self,
        *,
        base_url: str,
        auth: TokenProvider,
        transport: Transport,
        timeouts: Timeouts,
        retry: RetryPolicy,
        decode: Decode,
        default_token_url: str,
    ) -> None:
        self.base_url = base_url
        """The API's address (checked by the client)."""
        self.auth = auth
        """Where tokens come from."""
        self.transport = transport
        """The HTTP layer: sessions, limits, the upload pump, the observer."""
        self.timeouts = timeouts
        """How long requests may take."""
        self.retry = retry
        """How failed requests are retried."""
        self.token: AccessToken | None = None
        """The token last handed out by ``auth``."""
        self.closed = False
        """Set by ``close``: nothing is sent any more."""
        self.origin = wire.origin(base_url)
        """The API's origin: the only one the token is sent to."""
        self.https = self.origin[0] == "https"
        """Whether the API is reached over https (server-given addresses must be too)."""
        self._decode = decode
        """The API dialect's reading of an answer (JSON object, or its typed error)."""
        self._default_token_url = default_token_url
        self._bearer_made: tuple[str, Mapping[str, str]] | None = None
        self._timeout_made: tuple[Timeouts, aiohttp.ClientTimeout] | None = None

    def _bearer(self, token: str) -> Mapping[str, str]:
        """``Request.headers`` of a request without a body to the API's origin: the
        same two headers for every call with ``token`` (made once, read-only, in the
        form aiohttp takes without a conversion per request)."""
        made = self._bearer_made
        if made is None or made[0] != token:
            headers = {"Accept": "application/json", "Authorization": f"Bearer {token}"}
            made = self._bearer_made = (token, sent_headers(headers))
        return made[1]

    def _timeout(self) -> aiohttp.ClientTimeout:
        """``api_timeout(self.timeouts)``, kept while ``timeouts`` is the same object
        (no hash of the ``Timeouts`` per call)."""
        made = self._timeout_made
        if made is None or made[0] is not self.timeouts:
            made = self._timeout_made = (self.timeouts, api_timeout(self.timeouts))
        return made[1]

    @property
    def token_url(self) -> str:
        """The provider's token endpoint, else the dialect's: ``<base_url>/oauth/token``
        (legacy), ``{base_url}/token`` (v2, but the platform's own for its root)."""
        url = getattr(self.auth, "token_url", None)
        return url if isinstance(url, str) else self._default_token_url

    def check_open(self) -> None:
        """Refuse to work for a closed client."""
        if self.closed:
            raise ClientClosedError("this Client is closed; create a new one")

    async def close(self) -> None:
        """No request after this; the transport closes what it owns."""
        self.closed = True
        await self.transport.close()

    def api(self, method: str, path: str, **kw: Any) -> wire.Request:
        """A request to a path of the API (``_protocol.api_request``'s arguments)."""
        return wire.api_request(self.base_url, method, path, **kw)

    def server_url(self, url: object, name: str) -> str:
        """An address the server handed out, checked before anything is sent to it."""
        return check.server_url(url, name, https_only=self.https)

    async def post_token_form(
        self, url: str, fields: tuple[tuple[str, str], ...]
    ) -> Mapping[str, Any]:
        """POST a form to a token endpoint (no bearer token) and decode its answer."""
        request = wire.Request("POST", url, form=fields, authenticated=False, idempotent=False)
        resp = await self.transport.send(
            "POST",
            url,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            data=request.encoded_form(),
            timeout=api_timeout(self.timeouts),
            api_origin=self.origin,  # a token endpoint elsewhere gets no trace context
        )
        # A token endpoint may echo the form: every credential in it is masked.
        secrets = [v for k, v in fields if k in wire.SECRET_FORM_FIELDS]
        return wire.decode_oauth_response(
            request, resp.status, resp.headers, resp.body, secrets=secrets
        )

    async def access_token(self) -> AccessToken:
        """The token in use (fetched or refreshed if needed); the account's this task
        acts for, if it acts for one (``_acting``)."""
        self.check_open()
        acting = ACTING_TOKEN.get()
        if acting is not None:
            return acting
        self.token = await self.auth.get_token(self.post_token_form, self.token_url)
        return self.token

    @staticmethod
    def check_scope(request: wire.Request, token: AccessToken) -> None:
        """Refuse, before sending, a request whose scope the token is known to lack."""
        if request.scope and token.scopes is not None and request.scope not in token.scopes:
            raise InsufficientScopeError(
                f"{request.what} needs scope {request.scope!r}; the token has "
                f"{', '.join(sorted(token.scopes)) or 'none'}",
                scope=request.scope,
                status=None,
            )

    async def scoped_token(self, request: wire.Request, token: AccessToken) -> AccessToken:
        """``token`` when it may hold the request's scope; else the provider's own
        answer, when it has a ``widen`` hook (``ApiKey`` without ``scopes=`` asks for a
        token with the scope added), else ``InsufficientScopeError`` before sending."""
        scope = request.scope
        if not scope or token.scopes is None or scope in token.scopes:
            return token
        widen = getattr(self.auth, "widen", None)
        if widen is not None:
            wider = await widen(scope, self.post_token_form, self.token_url, what=request.what)
            if wider is not None:
                self.token = token = wider
        self.check_scope(request, token)
        return token

    async def ensure_scope(self, request: wire.Request) -> None:
        """Settle ``request``'s scope now (refused, or asked for by a provider that
        widens), before the requests it depends on are sent."""
        await self.scoped_token(request, await self.access_token())

    def call(self, request: wire.Request) -> Awaitable[Mapping[str, Any]]:
        """Send an API request, retried as ``retry`` and ``request.idempotent`` allow
        (to be awaited; a closed client refused at once)."""
        if self.closed:
            self.check_open()
        return self._call(request)

    async def _call(self, request: wire.Request) -> Mapping[str, Any]:
        policy = self.retry
        started = policy.clock()
        failed = None
        if ATTEMPT.get() == 1:
            # The first attempt here, not in ``retrying``'s loop: one coroutine fewer for
            # the call that succeeds (no retry around this one: nothing to set).
            try:
                return await self.call_once(request)
            except VidapiError as exc:
                failed = exc
        return await retrying(
            policy,
            lambda _: self.call_once(request),
            idempotent=request.idempotent,
            what=request.what,
            started=started,
            failed=failed,
        )

    async def call_once(self, request: wire.Request) -> Mapping[str, Any]:
        """Send an API request with the token and decode the answer; on a 401
        invalid_token from a provider that can get a new token, try once more."""
        if self.closed:
            self.check_open()
        for attempt in (1, 2):
            auth = self.auth
            # A static token is the same every time: no provider's coroutine to await.
            acting = ACTING_TOKEN.get()  # another account's, for this task (a batch job's)
            if acting is not None:
                token = acting
            else:
                token = auth._token if type(auth) is StaticToken else await self.access_token()
            if request.scope is not None:
                token = await self.scoped_token(request, token)
            plain = request.form is None and request.json_body is None
            resp = await self.transport.send(
                request.method,
                request.url,
                headers=(
                    self._bearer(token.token)
                    if plain and request.url_origin == self.origin and request.authenticated
                    else request.headers(token.token, self.origin)
                ),
                data=None if plain else request.payload(),
                timeout=self._timeout(),
                exact_url=request.exact_url,
                api_origin=self.origin,
            )
            # The secrets that an error's message masks (read only on an error).
            secrets = (
                (token.token,)
                if request.form is None and not request.body_secrets
                else (token.token, *request.secret_values())
            )
            decode = self._decode
            try:
                if len(resp.body) > LARGE_ANSWER_BYTES:
                    # Decoding megabytes of JSON takes a loop-blocking while: not here.
                    return await asyncio.to_thread(
                        functools.partial(
                            decode,
                            request,
                            resp.status,
                            resp.headers,
                            resp.body,
                            secrets=secrets,
                        )
                    )
                return decode(request, resp.status, resp.headers, resp.body, secrets=secrets)
            except InvalidTokenError:
                if attempt == 2 or acting is not None or not self.auth.invalidate(token):
                    raise
                log.info("%s: token refused as invalid; fetching a new one", request.what)
        raise AssertionError("unreachable")
