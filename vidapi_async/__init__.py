"""vidapi_async: an asyncio client for the Dailymotion-style video platform API.

Everything a user needs is importable from here; the ``_``-modules are private.
``vidapi_async.embed`` holds the pure embed builders, ``vidapi_async.webhooks`` the
receiving side of webhook events.

The names are loaded when first used (PEP 562's module ``__getattr__``): ``import
vidapi_async`` costs less than importing aiohttp, and a program that never touches the
batch wing never imports it. Type checkers read the imports under ``TYPE_CHECKING``.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from ._auth.api_key import ApiKey
    from ._auth.providers import OAuth, StaticToken, TokenProvider, authorize_url
    from ._client import DEFAULT_BASE_URL, Client
    from ._config import ProgressCallback, Timeouts
    from ._errors import (
        AccountError,
        AccountNotSetError,
        APIError,
        AuthenticationError,
        BadRequestError,
        ClientClosedError,
        ConnectError,
        ConnectionLostError,
        EncodingError,
        FileChangedError,
        FileError,
        ForbiddenError,
        InsecureURLError,
        InsufficientScopeError,
        InvalidArgumentError,
        InvalidParameterError,
        InvalidRequestError,
        InvalidTokenError,
        JournalError,
        MissingExtraError,
        MissingParameterError,
        NotFoundError,
        NotRewindableError,
        OAuthError,
        QuotaExceededError,
        RateLimitedError,
        ReadyTimeoutError,
        RequestTimeoutError,
        ServerError,
        SourceError,
        SubtitleFileError,
        TransportError,
        UnexpectedResponseError,
        UnsupportedOperationError,
        UploadError,
        UploadRejectedError,
        UsageError,
        VidapiError,
        WebhookError,
        WebhookSignatureError,
    )
    from ._models import (
        AccessToken,
        Dimension,
        Player,
        Playlist,
        Subtitle,
        UploadedFile,
        UploadProgress,
        UploadSession,
        UploadState,
        User,
        Video,
        Webhook,
    )
    from ._resources.account import Account
    from ._resources.live import LiveStreams
    from ._resources.players import Players
    from ._resources.playlists import Playlists
    from ._resources.raw import RawCalls
    from ._resources.subtitles import Subtitles
    from ._resources.videos import Videos
    from ._retry import NO_RETRY, RetryPolicy
    from ._s3 import S3Object
    from ._sentinel import NOT_GIVEN, NotGiven
    from ._transfer.digest import HashMismatchWarning
    from ._transfer.sources import SourcePolicy
    from ._transfer.uploads import Uploads
    from .batch import (
        BatchPlan,
        BatchProgress,
        BatchUploader,
        JobRecord,
        JobResult,
        JobStatus,
        Journal,
        LeftOut,
        MemoryJournal,
        PostgresJournal,
        Quota,
        SharedBatch,
        SQLiteJournal,
        Stage,
        SubtitleSpec,
        UploadJob,
    )

    __version__: str

_WHERE: dict[str, tuple[str, ...]] = {
    "_auth.api_key": ("ApiKey",),
    "_auth.providers": ("OAuth", "StaticToken", "TokenProvider", "authorize_url"),
    "_client": ("DEFAULT_BASE_URL", "Client"),
    "_config": ("ProgressCallback", "Timeouts"),
    "_errors": (
        "APIError",
        "AccountError",
        "AccountNotSetError",
        "AuthenticationError",
        "BadRequestError",
        "ClientClosedError",
        "ConnectError",
        "ConnectionLostError",
        "EncodingError",
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
        "NotRewindableError",
        "OAuthError",
        "QuotaExceededError",
        "RateLimitedError",
        "ReadyTimeoutError",
        "RequestTimeoutError",
        "ServerError",
        "SourceError",
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
    ),
    "_models": (
        "AccessToken",
        "Dimension",
        "Player",
        "Playlist",
        "Subtitle",
        "UploadedFile",
        "UploadProgress",
        "UploadSession",
        "UploadState",
        "User",
        "Video",
        "Webhook",
    ),
    "_resources.account": ("Account",),
    "_resources.live": ("LiveStreams",),
    "_resources.players": ("Players",),
    "_resources.playlists": ("Playlists",),
    "_resources.raw": ("RawCalls",),
    "_resources.subtitles": ("Subtitles",),
    "_resources.videos": ("Videos",),
    "_retry": ("NO_RETRY", "RetryPolicy"),
    "_s3": ("S3Object",),
    "_sentinel": ("NOT_GIVEN", "NotGiven"),
    "_transfer.digest": ("HashMismatchWarning",),
    "_transfer.sources": ("SourcePolicy",),
    "_transfer.uploads": ("Uploads",),
    "batch": (
        "BatchPlan",
        "BatchProgress",
        "BatchUploader",
        "JobRecord",
        "JobResult",
        "JobStatus",
        "Journal",
        "LeftOut",
        "MemoryJournal",
        "PostgresJournal",
        "Quota",
        "SharedBatch",
        "SQLiteJournal",
        "Stage",
        "SubtitleSpec",
        "UploadJob",
    ),
}
"""The private module (or ``batch``) that defines each public name."""
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}
_SUBMODULES = frozenset({"batch", "embed", "emulator", "testing", "webhooks"})
"""Public submodules, loaded when first used as attributes of the package too."""


def _lazy_attribute(name: str) -> object:
    """A public name, imported from its module the first time it is asked for and kept
    in the package's namespace (later lookups are plain dictionary hits)."""
    module = _MODULE_OF.get(name)
    if module is not None:
        value: object = getattr(_importlib.import_module(f"{__name__}.{module}"), name)
    elif name == "__version__":
        value = _version()
    elif name in _SUBMODULES:
        value = _importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


if not _typing.TYPE_CHECKING:
    # Hidden from type checkers: to them the package has the names imported above and
    # no others (a module ``__getattr__`` would make any misspelt name an ``object``).
    __getattr__ = _lazy_attribute


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("vidapi-async")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


__all__ = [
    "DEFAULT_BASE_URL",
    "NOT_GIVEN",
    "NO_RETRY",
    "APIError",
    "AccessToken",
    "Account",
    "AccountError",
    "AccountNotSetError",
    "ApiKey",
    "AuthenticationError",
    "BadRequestError",
    "BatchPlan",
    "BatchProgress",
    "BatchUploader",
    "Client",
    "ClientClosedError",
    "ConnectError",
    "ConnectionLostError",
    "Dimension",
    "EncodingError",
    "FileChangedError",
    "FileError",
    "ForbiddenError",
    "HashMismatchWarning",
    "InsecureURLError",
    "InsufficientScopeError",
    "InvalidArgumentError",
    "InvalidParameterError",
    "InvalidRequestError",
    "InvalidTokenError",
    "JobRecord",
    "JobResult",
    "JobStatus",
    "Journal",
    "JournalError",
    "LeftOut",
    "LiveStreams",
    "MemoryJournal",
    "MissingExtraError",
    "MissingParameterError",
    "NotFoundError",
    "NotGiven",
    "NotRewindableError",
    "OAuth",
    "OAuthError",
    "Player",
    "Players",
    "Playlist",
    "Playlists",
    "PostgresJournal",
    "ProgressCallback",
    "Quota",
    "QuotaExceededError",
    "RateLimitedError",
    "RawCalls",
    "ReadyTimeoutError",
    "RequestTimeoutError",
    "RetryPolicy",
    "S3Object",
    "SQLiteJournal",
    "ServerError",
    "SharedBatch",
    "SourceError",
    "SourcePolicy",
    "Stage",
    "StaticToken",
    "Subtitle",
    "SubtitleFileError",
    "SubtitleSpec",
    "Subtitles",
    "Timeouts",
    "TokenProvider",
    "TransportError",
    "UnexpectedResponseError",
    "UnsupportedOperationError",
    "UploadError",
    "UploadJob",
    "UploadProgress",
    "UploadRejectedError",
    "UploadSession",
    "UploadState",
    "UploadedFile",
    "Uploads",
    "UsageError",
    "User",
    "VidapiError",
    "Video",
    "Videos",
    "Webhook",
    "WebhookError",
    "WebhookSignatureError",
    "__version__",
    "authorize_url",
]
