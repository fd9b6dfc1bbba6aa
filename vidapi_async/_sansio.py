"""The I/O-free core: building requests and deciphering responses.

Nothing here touches a socket, so all of it is tested without an event loop. A request
is a ``Request`` value; a response is ``(status, headers, body)``; decoding turns it into
data or into the right exception of ``_errors``.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

import attrs

from . import _errors as e

__all__ = [
    "Request",
    "api_request",
    "decode_api_response",
    "decode_oauth_response",
    "decode_upload_response",
    "form_bool",
    "merge_ranges",
    "origin",
    "parse_held_ranges",
    "parse_retry_after",
    "redact",
    "url_for_humans",
]

Form = tuple[tuple[str, str], ...]

SECRET_FORM_FIELDS = frozenset({"password", "client_secret", "refresh_token", "code"})
"""Form fields whose values never reach a message, even when a server echoes them."""


@attrs.frozen
class Request:
    """One HTTP request to the API, described as data."""

    method: str
    url: str
    form: Form | None = None
    """Form fields (sent as application/x-www-form-urlencoded), in order."""
    authenticated: bool = True
    """Whether the bearer token goes with it (only ever to the API's own origin)."""
    scope: str | None = None
    """The scope the operation needs, checked before sending when the token's are known."""
    idempotent: bool = True
    """Safe to send twice: reads, and writes that set a value to the same thing."""
    exact_url: bool = False
    """The url is a server's own (a progress address): sent byte for byte."""

    @property
    def what(self) -> str:
        """``"POST /me/videos"``: how errors and logs name this request."""
        return f"{self.method} {urlsplit(self.url).path}"

    def encoded_form(self) -> bytes | None:
        return None if self.form is None else urlencode(self.form).encode("ascii")


def form_bool(value: bool) -> str:
    """The platform's form encoding of a boolean."""
    return "true" if value else "false"


def api_request(
    base_url: str,
    method: str,
    path: str,
    *,
    query: Iterable[tuple[str, str]] = (),
    form: Iterable[tuple[str, str]] | None = None,
    scope: str | None = None,
    idempotent: bool = True,
) -> Request:
    """A request to ``base_url`` + ``path``; the base's own path (``/rest``) is kept."""
    q = urlencode(list(query), safe=",")
    url = base_url.rstrip("/") + path + (f"?{q}" if q else "")
    return Request(
        method=method,
        url=url,
        form=None if form is None else tuple(form),
        scope=scope,
        idempotent=idempotent,
    )


def origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` with default ports made explicit: the bearer token is
    sent only where this equals the API base URL's origin."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def url_for_humans(url: str) -> str:
    """The url without its query and fragment: an upload url's seal stays out of messages."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret replaced by ``***``, for anything a server echoes."""
    for secret in secrets:
        if secret and len(secret) >= 3:
            text = text.replace(secret, "***")
    return text


def redact_data(data: Any, secrets: Sequence[str | None]) -> Any:
    """Decoded JSON (or headers) with every secret masked in every string, keys too."""
    if isinstance(data, str):
        return redact(data, secrets)
    if isinstance(data, Mapping):
        return {redact_data(k, secrets): redact_data(v, secrets) for k, v in data.items()}
    if isinstance(data, list):
        return [redact_data(v, secrets) for v in data]
    return data


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Retry-After in seconds, from delta-seconds or an HTTP date; ``None`` if absent or bad."""
    if not value:
        return None
    value = value.strip()
    if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", value):
        seconds = float(value)
        return seconds if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def parse_held_ranges(value: str | None) -> tuple[list[tuple[int, int]], int | None]:
    """The upload server's ``Range: a-b,c-d/TOTAL`` (inclusive byte ranges it holds)."""
    if not value:
        return [], None
    text = value.strip().removeprefix("bytes=").removeprefix("bytes ")
    spans, _, total = text.partition("/")
    ranges = []
    for span in filter(None, (p.strip() for p in spans.split(","))):
        m = re.fullmatch(r"([0-9]+)-([0-9]+)", span)
        if m:
            ranges.append((int(m.group(1)), int(m.group(2))))
    return ranges, int(total) if total.strip().isdigit() else None


def merge_ranges(ranges: Iterable[Sequence[int]]) -> list[tuple[int, int]]:
    """Inclusive byte ranges, sorted and merged (adjacent ones too)."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted((int(r[0]), int(r[1])) for r in ranges):
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _www_authenticate_error(headers: Mapping[str, str]) -> str | None:
    value = headers.get("WWW-Authenticate") or headers.get("www-authenticate") or ""
    m = re.search(r'error="([^"]*)"', value)
    return m.group(1) if m else None


def _json_object(body: bytes) -> Mapping[str, Any] | None:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


_STATUS_ERRORS: dict[int, type[e.APIError]] = {
    400: e.BadRequestError,
    401: e.AuthenticationError,
    403: e.ForbiddenError,
    404: e.NotFoundError,
    429: e.RateLimitedError,
}
_TYPE_ERRORS: dict[str, type[e.APIError]] = {
    "invalid_parameter": e.InvalidParameterError,
    "missing_required_parameter": e.MissingParameterError,
    "invalid_token": e.InvalidTokenError,
}


def _request_id(headers: Mapping[str, str]) -> str | None:
    for name in ("X-Request-Id", "X-Dm-Request-Id"):
        if value := headers.get(name):
            return value
    return None


def api_error(
    request: Request,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    secrets: Iterable[str | None] = (),
) -> e.APIError:
    """The exception for an error response from the API."""
    secrets = tuple(secrets)
    data = redact_data(_json_object(body) or {}, secrets)
    headers = redact_data(dict(headers), secrets)
    err = data.get("error")
    error_type: str | None = None
    reason: str | None = None
    if isinstance(err, Mapping):
        message = str(err.get("message") or "")
        error_type = err.get("type") if isinstance(err.get("type"), str) else None
        error_data = err.get("error_data")
        if isinstance(error_data, Mapping) and isinstance(error_data.get("reason"), str):
            reason = error_data["reason"]
    elif isinstance(err, str):  # the OAuth shape
        error_type = err
        message = str(data.get("error_description") or err)
    else:
        message = body[:200].decode("utf-8", "replace").strip()
    message = redact(message or f"HTTP {status}", secrets)
    message = f"{request.what}: {message}"
    kwargs: dict[str, Any] = {
        "status": status,
        "error_type": error_type,
        "reason": reason,
        "body": data,
        "headers": dict(headers),
        "request_id": _request_id(headers),
    }
    if status == 401 and "invalid_token" in (_www_authenticate_error(headers), error_type):
        return e.InvalidTokenError(message, **kwargs)
    if status == 403 and request.scope is not None:
        return e.InsufficientScopeError(message, scope=request.scope, **kwargs)
    if status == 429:
        retry_after = parse_retry_after(headers.get("Retry-After"))
        return e.RateLimitedError(message, retry_after=retry_after, **kwargs)
    if status >= 500:
        retry_after = parse_retry_after(headers.get("Retry-After"))
        return e.ServerError(message, retry_after=retry_after, **kwargs)
    cls = _TYPE_ERRORS.get(error_type or "") if status in (400, 401) else None
    return (cls or _STATUS_ERRORS.get(status, e.APIError))(message, **kwargs)


def decode_api_response(
    request: Request,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    secrets: Iterable[str | None] = (),
) -> Mapping[str, Any]:
    """The JSON object of a successful API response, or the exception for a failed one."""
    if not 200 <= status < 300:
        raise api_error(request, status, headers, body, secrets=secrets)
    if not body.strip():
        return {}
    data = _json_object(body)
    if data is None:
        raise e.UnexpectedResponseError(
            f"{request.what}: the response is not a JSON object", status=status
        )
    return data


def decode_oauth_response(
    request: Request,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    secrets: Iterable[str | None] = (),
) -> Mapping[str, Any]:
    """The token endpoint's JSON, or ``OAuthError`` (its errors are OAuth-shaped).
    ``secrets`` (the client secret, a password) are masked wherever the answer echoes
    them."""
    if 200 <= status < 300:
        data = _json_object(body)
        if data is None or not isinstance(data.get("access_token"), str):
            raise e.UnexpectedResponseError(
                f"{request.what}: the token response has no access_token", status=status
            )
        return data
    error = api_error(request, status, headers, body, secrets=secrets)
    if status >= 500 or status == 429:
        raise error
    raise e.OAuthError(
        error.message,
        status=status,
        error_type=error.error_type,
        body=error.body,
        headers=error.headers,
        request_id=error.request_id,
    )


def decode_upload_response(status: int, body: bytes) -> Mapping[str, Any]:
    """The upload server's descriptor, or ``UploadRejectedError`` in either error form."""
    data = _json_object(body)
    if data is not None and "error" in data:
        err = data["error"]
        if isinstance(err, Mapping):
            code = err.get("code")
            raise e.UploadRejectedError(
                str(err.get("message") or "no message"),
                status=status,
                code=code if isinstance(code, int | str) else None,
            )
        raise e.UploadRejectedError(str(err), status=status)
    if not 200 <= status < 300:
        text = body[:200].decode("utf-8", "replace").strip() or "no message"
        raise e.UploadRejectedError(text, status=status)
    if data is None:
        raise e.UnexpectedResponseError(
            "the upload server's response is not a JSON object", status=status
        )
    return data
