"""Every exception vidapi_async raises, and nothing else.

The tree::

    VidapiError
    ├── UsageError(ValueError)         the caller's mistake; raised before any request
    │   ├── InvalidArgumentError       a bad id, title, channel, language, password, ...
    │   │   └── AccountError           a batch job's account cannot act for it (its
    │   │       │                      variable's name, a video of another account)
    │   │       └── AccountNotSetError     its variable is not set where the job runs
    │   ├── FileError                  a local file is missing, a directory, unreadable, empty
    │   ├── SubtitleFileError          a local .srt file does not parse; names the cue
    │   ├── ClientClosedError          the Client was closed and cannot be reopened
    │   ├── UnsupportedOperationError  the API dialect in use does not offer the operation
    │   ├── InvalidRequestError        aiohttp cannot carry the request (a header, a url)
    │   └── MissingExtraError          a feature's optional dependencies are not installed
    ├── TransportError                 the request may or may not have reached the server
    │   ├── ConnectError               no connection was made: nothing reached the server
    │   ├── RequestTimeoutError        a connect, read or total timeout ran out
    │   └── ConnectionLostError        the connection broke while sending or receiving
    ├── APIError                       the API answered with an error (status, type, message)
    │   ├── BadRequestError            400
    │   │   ├── InvalidParameterError      type invalid_parameter
    │   │   └── MissingParameterError      type missing_required_parameter
    │   ├── AuthenticationError        401 (and OAuth token endpoint errors)
    │   │   ├── InvalidTokenError          the token is invalid or expired
    │   │   └── OAuthError                 the token endpoint refused a grant
    │   ├── ForbiddenError             403
    │   │   ├── InsufficientScopeError     the token lacks a scope (also raised locally)
    │   │   └── QuotaExceededError         the account's quota (a rolling 24 h); ``retry_after``
    │   ├── NotFoundError              404
    │   ├── RateLimitedError           429; ``retry_after`` in seconds when the server said
    │   ├── ServerError                5xx
    │   └── UnexpectedResponseError    a success status whose body is not what the API sends
    │       └── InsecureURLError           an http:// address handed out under an https API
    ├── UploadError                    the upload server refused or the upload went wrong
    │   ├── UploadRejectedError        the server's error, from ``{"error": "..."}`` or
    │   │                              ``{"error": {"message": ..., "code": ...}}``
    │   ├── FileChangedError           the file (or source) is not the size it was said to be
    │   ├── NotRewindableError         a one-pass source failed part-way: no retry possible
    │   └── SourceError                a source answered an error, was refused (policy,
    │                                  size, time) or could not be read
    ├── EncodingError                  ``wait_until_ready``: the video will not be ready
    ├── ReadyTimeoutError(TimeoutError)  ``wait_until_ready``: not ready in the time given
    ├── WebhookError                   an incoming webhook body is not an event
    │   └── WebhookSignatureError      its signature is missing, wrong or too old
    └── JournalError                   a batch journal cannot be used (locked, corrupt, ...)

aiohttp's exceptions never escape: ``vidapi_async._aio`` translates every one of them
(and the ``ValueError`` it raises for a request it cannot build). The original is not
kept as ``__cause__``: aiohttp's errors carry the request's headers, the bearer token
among them; the message names its class instead. Messages, reprs and ``str()`` never
contain an access token, a client secret or a video password: the client never puts
them into one, and what a server echoes is masked before it reaches an exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "APIError",
    "AccountError",
    "AccountNotSetError",
    "AuthenticationError",
    "BadRequestError",
    "ClientClosedError",
    "ConnectError",
    "ConnectionLostError",
    "FileChangedError",
    "FileError",
    "ForbiddenError",
    "InsecureURLError",
    "InsufficientScopeError",
    "InvalidArgumentError",
    "InvalidParameterError",
    "InvalidRequestError",
    "InvalidTokenError",
    "JournalError",
    "MissingExtraError",
    "MissingParameterError",
    "NotFoundError",
    "OAuthError",
    "RateLimitedError",
    "RequestTimeoutError",
    "ServerError",
    "SubtitleFileError",
    "TransportError",
    "UnexpectedResponseError",
    "UnsupportedOperationError",
    "UploadError",
    "UploadRejectedError",
    "UsageError",
    "VidapiError",
    "WebhookError",
    "WebhookSignatureError",
]


class VidapiError(Exception):
    """Base of every exception raised by vidapi_async.

    ``attempts`` is how many attempts were made before this error was raised (more than
    one when a ``RetryPolicy`` retried).
    """

    attempts: int = 1
    """How many attempts were made before this error (more than one after retries)."""


# --- the caller's mistakes -------------------------------------------------------------


class UsageError(VidapiError, ValueError):
    """The call itself is wrong. Nothing was sent."""


class InvalidArgumentError(UsageError):
    """An argument has a value the API cannot accept.

    ``argument`` names the parameter, so a program can point at the bad field.
    """

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"{argument}: {message}")
        self.argument = argument
        """The name of the parameter whose value was refused."""
        self.message = message
        """Why it was refused."""


class AccountError(InvalidArgumentError):
    """A batch job's ``account`` cannot act for it: the name is not one an account may
    have (``VIDAPI_<NAME>_TOKEN``), the API refused the account's token, or the job's
    key holds a video of another account. Messages name the variable (never a value,
    never a non-name)."""

    def __init__(self, message: str, *, variable: str | None = None) -> None:
        super().__init__("account", message)
        self.variable = variable
        """The environment variable's name, when it is one (never its value)."""


class AccountNotSetError(AccountError):
    """A batch job's ``account`` names a variable not set where the job runs (a shared
    queue's worker without it: the queue tries the job again, another worker may have
    it)."""


class FileError(UsageError):
    """A local file cannot be uploaded: missing, a directory, unreadable or empty."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        """The file, as given."""
        self.reason = message
        """What is wrong with it (the message without the path)."""


class SubtitleFileError(UsageError):
    """A local subtitle file is not valid SRT. ``cue`` is the 1-based cue number."""

    def __init__(self, path: str, cue: int, line: int, message: str) -> None:
        super().__init__(f"{path}: cue {cue} (line {line}): {message}")
        self.path = path
        """The subtitle file, as given."""
        self.cue = cue
        """The number of the offending cue, when one is to blame."""
        self.line = line
        """The offending line's number, when one is to blame."""


class ClientClosedError(UsageError):
    """The Client was closed; create a new one."""


class UnsupportedOperationError(UsageError):
    """The API dialect in use (``"legacy"`` or ``"v2"``) does not offer this operation,
    or this argument of it. Raised before anything is sent. ``operation`` names it,
    ``dialect`` the dialect, ``why`` says what that dialect has instead (if anything)."""

    def __init__(self, operation: str, dialect: str, why: str) -> None:
        super().__init__(f"{operation} is not offered by API {dialect}: {why}")
        self.operation = operation
        """The operation (or ``operation(argument=)``) refused, as users call it."""
        self.dialect = dialect
        """The API dialect in use: ``"legacy"`` or ``"v2"``."""
        self.why = why
        """What that dialect has instead, if anything."""


class InvalidRequestError(UsageError):
    """The HTTP layer refused to build the request (a header or url it cannot carry).
    Nothing was sent."""


class MissingExtraError(UsageError):
    """A feature needs an extra that is not installed (``s3://`` sources: ``s3``).
    ``extra`` names it; the message says what to install."""

    def __init__(self, extra: str, feature: str) -> None:
        super().__init__(
            f'{feature} need the {extra} extra: pip install "vidapi-async[{extra}]" '
            f'(from a checkout: pip install ".[{extra}]")'
        )
        self.extra = extra
        """The extra to install (``"s3"``)."""


# --- the network -----------------------------------------------------------------------


class TransportError(VidapiError):
    """The request failed below HTTP. ``method`` and ``url`` say which one.

    The url never carries a token (tokens travel in a header); an upload url carries
    its seal, which authorises only that one upload, so it is shown without its query.
    """

    def __init__(self, message: str, *, method: str, url: str) -> None:
        super().__init__(f"{message} ({method} {url})")
        self.method = method
        """The request's method."""
        self.url = url
        """The request's address, its secrets redacted."""


class ConnectError(TransportError):
    """No connection could be made: the request did not reach the server."""


class RequestTimeoutError(TransportError):
    """A timeout ran out. The request may have reached the server."""


class ConnectionLostError(TransportError):
    """The connection broke while sending or receiving. It may have reached the server."""


# --- the API's answers ----------------------------------------------------------------


class APIError(VidapiError):
    """The API answered with an error.

    ``status`` is the HTTP status (``None`` when raised locally before a request),
    ``error_type`` the platform's ``type`` (e.g. ``invalid_parameter``), ``reason``
    the ``error_data.reason`` when given, ``body`` the decoded error object and
    ``request_id`` the server's request id header when present, ``correlation_id``
    the id an API v2 error carries (quote it to the platform's support).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None,
        error_type: str | None = None,
        reason: str | None = None,
        body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        request_id: str | None = None,
        correlation_id: str | None = None,
    ) -> None:
        self.message = message
        """The platform's message (secrets masked)."""
        self.status = status
        """The HTTP status, or ``None`` when the client refused before sending."""
        self.error_type = error_type
        """The platform's error ``type`` (``invalid_parameter``, ``not_found``, ...)."""
        self.reason = reason
        """The platform's ``error_data.reason``, when given."""
        self.body: Mapping[str, Any] = body or {}
        """The decoded error body (secrets masked)."""
        self.headers: Mapping[str, str] = headers or {}
        """The answer's headers."""
        self.request_id = request_id
        """The platform's request id, when it sent one (quote it to support)."""
        self.correlation_id = correlation_id
        """API v2's ``correlation_id`` of the failed request, when it sent one (quote it
        to support)."""
        super().__init__(str(self))

    _UNSENT = "before sending"
    """What ``status is None`` means for this kind of error."""

    def __str__(self) -> str:
        where = f"HTTP {self.status}" if self.status is not None else self._UNSENT
        kind = f" {self.error_type}" if self.error_type else ""
        rid = f" [request {self.request_id}]" if self.request_id else ""
        cid = f" [correlation {self.correlation_id}]" if self.correlation_id else ""
        return f"{self.message} ({where}{kind}){rid}{cid}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, "
            f"error_type={self.error_type!r}, message={self.message!r})"
        )


class BadRequestError(APIError):
    """400: the request was refused as malformed."""


class InvalidParameterError(BadRequestError):
    """400 invalid_parameter."""


class MissingParameterError(BadRequestError):
    """400 missing_required_parameter."""


class AuthenticationError(APIError):
    """401: no valid credentials."""


class InvalidTokenError(AuthenticationError):
    """401 with ``error="invalid_token"``: the access token is invalid or has expired."""


class OAuthError(AuthenticationError):
    """The token endpoint refused a grant: ``error_type`` is its ``error`` code."""


class ForbiddenError(APIError):
    """403: the credentials are valid but not allowed to do this."""


class InsufficientScopeError(ForbiddenError):
    """The token lacks a scope the operation needs.

    Raised before sending when the token's scopes are known (``status`` is ``None``),
    and for the server's 403 on a scoped operation otherwise.
    ``scope`` names the missing scope.
    """

    def __init__(self, message: str, *, scope: str, **kwargs: Any) -> None:
        self.scope = scope
        """The scope the operation needs."""
        super().__init__(message, **kwargs)


class NotFoundError(APIError):
    """404: no such object (or not visible to this account)."""


class QuotaExceededError(ForbiddenError):
    """403 for the account's quota (videos per 24 hours): nothing more can be created
    until it resets. ``retry_after``: seconds until then, when the platform said."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        self.retry_after = retry_after
        """Seconds until the quota allows another video, when the platform says."""
        super().__init__(message, **kwargs)


class RateLimitedError(APIError):
    """429: throttled. ``retry_after`` is the server's Retry-After in seconds, if sent."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        self.retry_after = retry_after
        """Seconds to wait (``Retry-After``), when sent."""
        super().__init__(message, **kwargs)


class ServerError(APIError):
    """5xx: the server failed. ``retry_after`` is set when a 503 carried one."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        self.retry_after = retry_after
        """Seconds to wait (``Retry-After``), when sent."""
        super().__init__(message, **kwargs)


class UnexpectedResponseError(APIError):
    """A response that the API does not send: not JSON, or missing a required field."""

    _UNSENT = "in an answer it could not use"


class InsecureURLError(UnexpectedResponseError):
    """The API (reached over https) handed out an ``http://`` address: following it would
    send the file, or the request, in clear. Nothing was sent there."""


# --- uploads ---------------------------------------------------------------------------


class UploadError(VidapiError):
    """The upload failed. The platform's remedy is a fresh upload address."""


class UploadRejectedError(UploadError):
    """The upload server answered with an error.

    Its two forms are both understood: ``{"error": "missing file"}`` and
    ``{"error": {"message": ..., "code": ...}}``. ``status`` is the HTTP status.
    """

    def __init__(self, message: str, *, status: int, code: int | str | None = None) -> None:
        detail = f", code {code}" if code is not None else ""
        super().__init__(f"upload rejected: {message} (HTTP {status}{detail})")
        self.message = message
        """The upload server's message."""
        self.status = status
        """The HTTP status of the refusal."""
        self.code = code
        """The upload server's error code, when it gave one."""


class FileChangedError(UploadError):
    """The file grew or shrank while it was being sent; the upload was abandoned."""

    def __init__(self, path: str, expected: int, message: str) -> None:
        super().__init__(f"{path}: {message} (expected {expected} bytes)")
        self.path = path
        """The file (or source name) that changed."""
        self.expected = expected
        """The size, in bytes, it had when the upload started."""


class NotRewindableError(UploadError):
    """A one-pass source (a pipe, a socket, an async iterable) failed part-way: its bytes
    cannot be read again, so the upload cannot be retried. Give a seekable file, or no
    ``size`` (the source is then copied to a temporary file first)."""


class SourceError(UploadError):
    """A source failed: ``upload_from_url``'s answered with an error status, redirected
    a request that carried credentials, was refused by the ``SourcePolicy``, was larger
    than ``max_source_size`` or slower than ``Timeouts.source_idle``/``source_total``;
    or reading a local source (file object, async iterable) raised ``OSError`` (its
    ``__cause__``). ``status`` is the source's HTTP status, when it answered one."""

    def __init__(self, message: str, *, status: int | None) -> None:
        super().__init__(message)
        self.status = status
        """The source's HTTP status, when it answered one."""


# --- batch journals --------------------------------------------------------------------


class EncodingError(VidapiError):
    """The platform will not make this video playable: its ``status`` is a failure one
    (``encoding_error``, ``rejected``, ``deleted``, ...)."""

    def __init__(self, video_id: str, status: str | None, message: str | None = None) -> None:
        super().__init__(message or f"video {video_id} will not be ready: status {status!r}")
        self.video_id = video_id
        """The video that will never play."""
        self.status = status
        """Its final status (``encoding_error``, ``rejected``, ...)."""


class ReadyTimeoutError(VidapiError, TimeoutError):
    """``wait_until_ready`` ran out of time; the video may still become ready (not an
    ``EncodingError``: nothing failed). ``status`` and ``encoding_progress`` are the
    last ones seen."""

    def __init__(
        self, video_id: str, status: str | None, encoding_progress: int | None, timeout: float
    ) -> None:
        progress = "" if encoding_progress is None else f", encoding at {encoding_progress}%"
        super().__init__(
            f"video {video_id} not ready after {timeout:g} s (status {status!r}{progress})"
        )
        self.video_id = video_id
        """The video waited for."""
        self.status = status
        """Its status at the last look (``None`` if never seen)."""
        self.encoding_progress = encoding_progress
        """Its encoding progress at the last look."""
        self.timeout = timeout
        """The seconds waited."""


class WebhookError(VidapiError):
    """An incoming webhook body is not an event this library can read (not JSON, not an
    object, no event type). Raised by ``vidapi_async.webhooks.parse_event``."""


class WebhookSignatureError(WebhookError):
    """An incoming webhook's signature is missing, does not verify with the secret, or
    is older than the tolerance (a replay)."""


class JournalError(VidapiError):
    """A batch journal cannot be used: held by another live process, corrupt, of a
    foreign schema or a newer version, not writable, owned by another user, or a
    directory. ``path`` names it. Raised when the journal is opened, before any job
    starts; or later, naming the job, when a statement is refused (PostgreSQL) or a
    record read back is corrupt (its metadata)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"journal {path}: {message}")
        self.path = path
        """The journal's file or database, as given."""
