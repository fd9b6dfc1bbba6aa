"""Answers deciphered: ``(status, headers, body)`` into data or the right exception of
``_errors``. No I/O, no asyncio, no aiohttp."""

from __future__ import annotations

import email.utils
import json
import json.scanner
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol

from .. import _errors as e
from ._requests import MASKED_CHARS, Request, redact_data, shown

__all__ = [
    "MAX_JSON_DEPTH",
    "NestedTooDeep",
    "NumberTooLong",
    "UnreadableJson",
    "api_error",
    "decode_api_response",
    "decode_oauth_response",
    "decode_upload_response",
    "error_answer",
    "header",
    "json_object",
    "parse_retry_after",
]


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


def header(headers: Mapping[str, str], name: str) -> str | None:
    """The value of the header ``name`` whatever the case either side wrote it in (an
    answer's headers may come as a plain mapping, not a case-insensitive one)."""
    value = headers.get(name)
    if value is not None:
        return value
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)


def _www_authenticate_error(headers: Mapping[str, str]) -> str | None:
    value = header(headers, "WWW-Authenticate") or ""
    m = re.search(r'error="([^"]*)"', value)
    return m.group(1) if m else None


MAX_JSON_DEPTH = 64
"""How deep a server's JSON answer may nest: far deeper than any the platform gives,
far shallower than what makes Python's decoder (and whatever walks the data after it)
raise ``RecursionError``."""

_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)
"""A JSON string (or an unterminated one, to the end): what holds brackets that do not
nest. Possessive: linear whatever the text."""
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


class UnreadableJson(ValueError):
    """A JSON answer that is JSON but not read, its message saying why (nested too
    deep, a number too long)."""


class NestedTooDeep(UnreadableJson):
    """A JSON answer nests deeper than ``MAX_JSON_DEPTH``: not decoded."""

    def __init__(self) -> None:
        super().__init__(
            f"the answer nests JSON more than {MAX_JSON_DEPTH} levels deep: not decoded"
        )


class NumberTooLong(UnreadableJson):
    """A JSON answer holds an integer longer than Python converts (4300 digits)."""

    def __init__(self) -> None:
        super().__init__("the answer holds a number of more than 4300 digits: not decoded")


def _nests_too_deep(text: str) -> bool:
    """Whether JSON ``text`` opens more than ``MAX_JSON_DEPTH`` arrays or objects at
    once (counted without decoding it: brackets inside strings are not nesting)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False  # (json_object counts first: the usual answer is not scanned)
    depth = 0
    for bracket in _NOT_BRACKETS.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_JSON_DEPTH:
            return True
    return False


def _json_text(body: bytes) -> str | None:
    """``body`` as text, in the one encoding ``json.loads(body)`` would read it in (a
    UTF-8 BOM dropped, UTF-16/32 told by its BOM or its zero bytes); ``None`` if it is
    not text in it."""
    try:
        if body[:1] == b"{" and body[1:2] != b"\x00":
            # An object in UTF-8, the usual answer: no BOM starts with "{", and a second
            # byte that is not zero rules out UTF-16/32 (json.detect_encoding's rules).
            return body.decode("utf-8", "surrogatepass")
        return body.decode(json.detect_encoding(body), "surrogatepass")
    except (UnicodeDecodeError, LookupError):
        return None


_decode_json = json.JSONDecoder().decode
"""``json.loads`` of a str without its options (the decoder it uses then), one call less."""
_scan_json: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    json.JSONDecoder()  # type: ignore[arg-type] # (typeshed: the decoder is what it reads)
)
"""That decoder's scanner (the C one): ``(value, end)`` of the JSON value at an index."""
_JSON_WHITESPACE: Final = " \t\n\r"


def json_object(body: bytes) -> Mapping[str, Any] | None:
    """The one decoding of a server's JSON answer (API, upload host, token endpoint):
    the object it holds, or ``None`` when it holds no JSON object. The text is decoded
    once, and that same text is both measured and read. An answer nested deeper than
    ``MAX_JSON_DEPTH`` raises ``NestedTooDeep`` (never ``RecursionError``), one with an
    integer past Python's 4300 digits ``NumberTooLong``."""
    text = _json_text(body)
    if text is None:
        return None
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _nests_too_deep(text):
        raise NestedTooDeep  # (the usual answer has too few brackets to be scanned)
    try:
        if text[:1] == "{":
            # The usual answer: json.loads' own C scanner, called directly (not through
            # JSONDecoder.decode and raw_decode: two Python calls and two regex matches),
            # then json.loads' rule that only JSON whitespace may follow.
            data, end = _scan_json(text, 0)
            if end != len(text) and text[end:].strip(_JSON_WHITESPACE):
                return None  # "Extra data"
        else:
            data = _decode_json(text)
    except StopIteration:  # (not reached: an object starts there)
        return None
    except RecursionError:  # not reached: the count above is the guard
        raise NestedTooDeep from None
    except json.JSONDecodeError:
        return None
    except ValueError:  # int(): past sys.get_int_max_str_digits()
        raise NumberTooLong from None
    return data if type(data) is dict else None


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
        if value := header(headers, name):
            return value
    return None


SERVER_TEXT_CHARS: Final = 500
"""The most of a server's own error message an exception shows (both dialects)."""


def error_answer(body: bytes, secrets: Iterable[str | None]) -> tuple[Mapping[str, Any], str]:
    """An error answer as messages may show it, the one way for every dialect and host:
    its JSON object with every secret masked (``{}`` if it holds none), and the text a
    message shows when the answer has no message of its own. That text is never cut
    from the raw body while it is JSON (escapes could hide a secret): it is the masked
    object written out again; otherwise the body's text masked whole, then cut
    (``shown``)."""
    secrets = tuple(secrets)
    try:
        raw = json_object(body)
    except UnreadableJson as exc:
        return {}, str(exc)  # named as the message, not shown
    if raw is not None:
        # in a list: an object whose strings spell a secret only together is masked whole
        [masked] = redact_data([raw], secrets)
        text = json.dumps(masked, ensure_ascii=False)
        return (masked if isinstance(masked, Mapping) else {}), shown(text, secrets)
    head = body[: MASKED_CHARS * 4]
    try:
        encoding = json.detect_encoding(head)
    except LookupError:
        encoding = "utf-8"
    return {}, shown(head.decode(encoding, "replace"), secrets)


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
    data, text = error_answer(body, secrets)
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
        message = text
    message = shown(message or f"HTTP {status}", secrets, SERVER_TEXT_CHARS)
    if request.what not in message:  # a server that names the request: said once
        message = f"{request.what}: {message}"
    kwargs: dict[str, Any] = {
        "status": status,
        "error_type": error_type,
        "reason": reason,
        "body": data,
        "headers": dict(headers),
        "request_id": _request_id(headers),
    }
    retry_after = parse_retry_after(header(headers, "Retry-After"))
    if status == 401 and "invalid_token" in (_www_authenticate_error(headers), error_type):
        return e.InvalidTokenError(message, **kwargs)
    if status == 403 and (reason == "quota_exceeded" or "quota" in (error_type or "")):
        return e.QuotaExceededError(message, retry_after=retry_after, **kwargs)
    if status == 403 and request.scope is not None:
        return e.InsufficientScopeError(message, scope=request.scope, **kwargs)
    if status == 429:
        return e.RateLimitedError(message, retry_after=retry_after, **kwargs)
    if status >= 500:
        return e.ServerError(message, retry_after=retry_after, **kwargs)
    cls = _TYPE_ERRORS.get(error_type or "") if status in (400, 401) else None
    return (cls or _STATUS_ERRORS.get(status, e.APIError))(message, **kwargs)


def _json_answer(body: bytes, request: Request, status: int) -> Mapping[str, Any] | None:
    """``json_object(body)``, an answer nested too deep an ``UnexpectedResponseError``
    (naming ``request``: its ``what`` worked out only then)."""
    try:
        return json_object(body)
    except UnreadableJson as exc:
        raise e.UnexpectedResponseError(f"{request.what}: {exc}", status=status) from None


class ErrorDecoder(Protocol):
    """A dialect's ``api_error``: the exception for an error answer."""

    def __call__(
        self,
        request: Request,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        *,
        secrets: Iterable[str | None] = (),
    ) -> e.APIError: ...


def decode_api_response(
    request: Request,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    secrets: Iterable[str | None] = (),
    error: ErrorDecoder | None = None,
) -> Mapping[str, Any]:
    """The JSON object of a successful API response (``{}`` for an empty body), or the
    exception for a failed one: ``error``'s (a dialect's own), by default ``api_error``."""
    if not 200 <= status < 300:
        raise (error or api_error)(request, status, headers, body, secrets=secrets)
    data = _json_answer(body, request, status)
    if data is None:
        if not body.strip():
            return {}
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
        data = _json_answer(body, request, status)
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


def decode_upload_response(
    status: int, body: bytes, secrets: Iterable[str | None] = ()
) -> Mapping[str, Any]:
    """The upload server's descriptor, or ``UploadRejectedError`` in either error form.
    ``secrets`` (the upload address's query values: its seal) are masked wherever the
    server's message echoes them."""
    try:
        data = json_object(body)
    except UnreadableJson as exc:
        if 200 <= status < 300:
            raise e.UnexpectedResponseError(f"the upload server: {exc}", status=status) from None
        raise e.UploadRejectedError(f"HTTP {status}, and {exc}", status=status) from None
    if not 200 <= status < 300 or (data is not None and "error" in data):
        shape, text = error_answer(body, secrets)
        err = shape.get("error")
        if isinstance(err, Mapping):
            code = err.get("code")
            raise e.UploadRejectedError(
                str(err.get("message") or "no message"),
                status=status,
                code=code if isinstance(code, int | str) else None,
            )
        message = err if isinstance(err, str) and err else text
        raise e.UploadRejectedError(message or "no message", status=status)
    if data is None:
        raise e.UnexpectedResponseError(
            "the upload server's response is not a JSON object", status=status
        )
    return data
